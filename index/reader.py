"""One open index version: BM25, aliases, vectors, graph, typed statements and tables of one version.

``IndexReader.open(root)`` resolves ``current`` once; the reader then keeps that version for its
whole life, whatever later builds publish or prune (see ``index.versions``). The query engine holds one.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cached_property
from pathlib import Path
from typing import TypeVar

import pyarrow.parquet as pq

from index import layout
from index.aliases import AliasIndex
from index.bm25 import Bm25Index
from index.graph import GraphIndex
from index.integrity import check_version, unreadable
from index.statements import StatementStore
from index.tables import TableStore
from index.vectors import VectorIndex
from index.versions import VersionStore, open_version
from schemas.build import Manifest

T = TypeVar("T")


class IndexReader:
    """Holds a lease on its version (``index.versions.VersionLease``) from open to close, so that a rebuild's
    prune leaves the folder alone while this reader may still read it."""

    def __init__(self, version_dir: Path):
        self.path, self._lease = open_version(Path(version_dir))
        try:
            self.manifest: Manifest = VersionStore(self.path.parent).manifest(self.path)
            check_version(self.path, self.manifest.files)  # a truncated or deleted file is named now
        except BaseException:
            self._lease.release()
            raise

    @classmethod
    def open(cls, index_dir: Path) -> IndexReader:
        """Open the version ``current`` points to under ``index_dir`` (or ``index_dir`` itself)."""
        return cls(index_dir)

    @property
    def version(self) -> str:
        return self.manifest.version

    @cached_property
    def bm25(self) -> Bm25Index:
        return self._open(layout.BM25, Bm25Index)

    @cached_property
    def aliases(self) -> AliasIndex:
        return self._open(layout.ALIAS_INDEX, AliasIndex)

    @cached_property
    def vectors(self) -> VectorIndex:
        return self._open(layout.VECTORS, VectorIndex.open)

    @cached_property
    def graph(self) -> GraphIndex:
        return self._open(layout.GRAPH_DB, GraphIndex.open)

    @property
    def has_statements(self) -> bool:
        """False for a version built before the statements stage existed."""
        return (self.path / layout.STATEMENT_TABLE).is_file()

    @cached_property
    def statements(self) -> StatementStore:
        """Typed statements; a version built before the statements stage has none (FileNotFoundError)."""
        return self._open(layout.STATEMENT_TABLE, StatementStore)

    @property
    def has_tables(self) -> bool:
        """False for a version built before the tables stage existed."""
        return (self.path / layout.TABLE_ROWS).is_file()

    @cached_property
    def tables(self) -> TableStore:
        """Every table row with its cells; a version built before the tables stage has none."""
        return self._open(layout.TABLE_ROWS, TableStore)

    def _open(self, part: str, opener: Callable[[Path], T]) -> T:
        """One part of the version, opened by its library. A missing part raises the opener's own
        ``FileNotFoundError`` (a version older than the stage); whatever else a library raises on a
        damaged folder (Kùzu's and Lance's RuntimeError, Tantivy's ValueError) becomes one
        ``IndexDamaged`` that names the path and what to do."""
        try:
            return opener(self.path / part)
        except FileNotFoundError:
            raise
        except Exception as exc:
            raise unreadable(self.path, part, exc) from exc

    def evidence_files(self) -> list[Path]:
        return sorted((self.path / layout.EVIDENCE).glob("*.parquet"))

    def entity_count(self) -> int:
        return pq.ParquetFile(self.path / layout.ENTITY_TABLE).metadata.num_rows

    def close(self) -> None:
        if "graph" in self.__dict__:
            self.graph.close()
        self._lease.release()
