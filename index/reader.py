"""One open index version: BM25, aliases, vectors, graph, typed statements and tables of one version.

``IndexReader.open(root)`` resolves ``current`` once; the reader then keeps that version for its
whole life, whatever later builds publish (see ``index.versions``). The query engine holds one.
"""

from __future__ import annotations

from functools import cached_property
from pathlib import Path

import pyarrow.parquet as pq

from index import layout
from index.aliases import AliasIndex
from index.bm25 import Bm25Index
from index.graph import GraphIndex
from index.statements import StatementStore
from index.tables import TableStore
from index.vectors import VectorIndex
from index.versions import VersionStore, resolve_index_dir
from schemas.build import Manifest


class IndexReader:
    def __init__(self, version_dir: Path):
        self.path = Path(version_dir)
        self.manifest: Manifest = VersionStore(self.path.parent).manifest(self.path)

    @classmethod
    def open(cls, index_dir: Path) -> IndexReader:
        """Open the version ``current`` points to under ``index_dir`` (or ``index_dir`` itself)."""
        return cls(resolve_index_dir(index_dir))

    @property
    def version(self) -> str:
        return self.manifest.version

    @cached_property
    def bm25(self) -> Bm25Index:
        return Bm25Index(self.path / layout.BM25)

    @cached_property
    def aliases(self) -> AliasIndex:
        return AliasIndex(self.path / layout.ALIAS_INDEX)

    @cached_property
    def vectors(self) -> VectorIndex:
        return VectorIndex.open(self.path / layout.VECTORS)

    @cached_property
    def graph(self) -> GraphIndex:
        return GraphIndex.open(self.path / layout.GRAPH_DB)

    @property
    def has_statements(self) -> bool:
        """False for a version built before the statements stage existed."""
        return (self.path / layout.STATEMENT_TABLE).is_file()

    @cached_property
    def statements(self) -> StatementStore:
        """Typed statements; a version built before the statements stage has none (FileNotFoundError)."""
        return StatementStore(self.path / layout.STATEMENT_TABLE)

    @property
    def has_tables(self) -> bool:
        """False for a version built before the tables stage existed."""
        return (self.path / layout.TABLE_ROWS).is_file()

    @cached_property
    def tables(self) -> TableStore:
        """Every table row with its cells; a version built before the tables stage has none."""
        return TableStore(self.path / layout.TABLE_ROWS)

    def evidence_files(self) -> list[Path]:
        return sorted((self.path / layout.EVIDENCE).glob("*.parquet"))

    def entity_count(self) -> int:
        return pq.ParquetFile(self.path / layout.ENTITY_TABLE).metadata.num_rows

    def close(self) -> None:
        if "graph" in self.__dict__:
            self.graph.close()
