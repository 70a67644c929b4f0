"""Embeddings keyed by evidence id, kept between builds so only new or changed evidence is embedded.

Evidence ids are content hashes, so an id always names the same text and its vector can be reused
for as long as the model (and its sequence cap) stays the same: that is what ``model_key`` pins,
one folder per key. Vectors are appended as Parquet part files, each written to a temporary name
and renamed into place, so a crash loses at most the rows still buffered and never leaves a torn
part; the next run resumes from the parts on disk.

Several writers (tasks on several machines over a shared folder) may add to one folder at once: each
instance names its parts ``part-w<writer>-<sequence>.parquet`` with a random writer id of its own, so
no two writers ever write the same name, and a reader reads every part there is (parts from before
writer ids, ``part-<sequence>.parquet``, are read as well). Two writers that embed the same id both
keep it: an id always names the same text, so the vectors agree and the first found is used.
``compact`` is for when no one else writes.
"""

from __future__ import annotations

import logging
import os
import re
import secrets
import time
from collections.abc import Sequence
from pathlib import Path

import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq

log = logging.getLogger(__name__)

_PART = re.compile(r"part-(?:w([0-9a-f]+)-)?(\d+)\.parquet")
STALE_TMP_S = 24 * 3600  # a temporary part this old belongs to a writer that died: removed


def vector_array(vectors: np.ndarray) -> pa.FixedSizeListArray:
    """A (rows, dim) float32 matrix as an Arrow fixed_size_list<float32>[dim] column, without copying."""
    matrix = np.ascontiguousarray(vectors, dtype=np.float32)
    return pa.FixedSizeListArray.from_arrays(pa.array(matrix.reshape(-1)), matrix.shape[1])


def vector_matrix(column: pa.ChunkedArray | pa.FixedSizeListArray) -> np.ndarray:
    """The inverse of ``vector_array``: a fixed_size_list column as a (rows, dim) float32 matrix."""
    array = column.combine_chunks() if isinstance(column, pa.ChunkedArray) else column
    dim = array.type.list_size
    return array.flatten().to_numpy(zero_copy_only=False).reshape(-1, dim)


class EmbeddingCache:
    def __init__(self, root: Path, model_key: str, part_rows: int = 8192) -> None:
        if not model_key or not re.fullmatch(r"[A-Za-z0-9._-]+", model_key):
            raise ValueError(f"model_key must be a non-empty file-name-safe string, got {model_key!r}")
        if part_rows <= 0:
            raise ValueError(f"part_rows must be positive, got {part_rows}")
        self.dir = Path(root) / model_key
        self.dir.mkdir(parents=True, exist_ok=True)
        self.part_rows = part_rows
        self.writer = secrets.token_hex(6)
        self._sequence = 0
        self._ids: list[str] = []
        self._vectors: list[np.ndarray] = []
        self._buffered = 0
        for stale in self.dir.glob(".part-*.tmp"):  # a write interrupted long ago (not a live writer's)
            try:
                age = time.time() - stale.stat().st_mtime
            except FileNotFoundError:  # a live writer renamed its part between the listing and the stat
                continue
            if age > STALE_TMP_S:
                stale.unlink(missing_ok=True)

    def part_files(self) -> list[Path]:
        """The cache's part files, oldest first (what the vector stage joins against)."""
        return self._parts()

    def _parts(self) -> list[Path]:
        """Every writer's parts, each writer's in the order written (older unnamed parts first)."""
        matches = ((p, _PART.fullmatch(p.name)) for p in self.dir.iterdir())
        parts = [(m.group(1) or "", int(m.group(2)), p) for p, m in matches if m]
        return [p for _, _, p in sorted(parts)]

    def _dataset(self) -> ds.Dataset | None:
        parts = self._parts()
        return ds.dataset([str(p) for p in parts], format="parquet") if parts else None

    def known_ids(self) -> set[str]:
        """Ids with a vector on disk (buffered rows count only once flushed)."""
        dataset = self._dataset()
        if dataset is None:
            return set()
        return set(dataset.to_table(columns=["evidence_id"]).column("evidence_id").to_pylist())

    def get(self, ids: Sequence[str]) -> np.ndarray:
        """Vectors for ``ids`` as a (len(ids), dim) matrix in the same order; KeyError if one is missing."""
        dataset = self._dataset()
        wanted = pa.array(list(ids), type=pa.string())
        if dataset is None:
            if len(wanted):
                raise KeyError(f"embedding cache {self.dir} is empty; missing e.g. {wanted[0].as_py()!r}")
            return np.empty((0, 0), dtype=np.float32)
        found = dataset.to_table(filter=pc.field("evidence_id").isin(wanted))
        # index_in takes the first match, so a row repeated by an interrupted compact() is harmless
        position = pc.index_in(wanted, value_set=found.column("evidence_id"))
        if position.null_count:
            missing = pc.filter(wanted, pc.is_null(position))
            raise KeyError(
                f"{len(missing)} ids have no vector in {self.dir}, e.g. {missing[0].as_py()!r}; "
                "embed them first"
            )
        return vector_matrix(found.column("vector").take(position))

    def add(self, ids: Sequence[str], vectors: np.ndarray) -> None:
        """Buffer vectors for ``ids``; a part is written every ``part_rows`` rows."""
        if len(ids) != len(vectors) or vectors.ndim != 2:
            raise ValueError(f"need one vector row per id: {len(ids)} ids, vectors of shape {vectors.shape}")
        self._ids.extend(ids)
        self._vectors.append(np.asarray(vectors, dtype=np.float32))
        self._buffered += len(ids)
        if self._buffered >= self.part_rows:
            self.flush()

    def flush(self) -> None:
        """Write the buffered rows as one new part."""
        if not self._buffered:
            return
        table = pa.table(
            {
                "evidence_id": pa.array(self._ids, pa.string()),
                "vector": vector_array(np.vstack(self._vectors)),
            }
        )
        self._write(table)
        self._ids, self._vectors, self._buffered = [], [], 0

    def _write(self, table: pa.Table) -> Path:
        """A new part under this writer's own name: no other writer writes or renames onto it."""
        name = f"part-w{self.writer}-{self._sequence:06d}"
        self._sequence += 1
        final, tmp = self.dir / f"{name}.parquet", self.dir / f".{name}.tmp"
        pq.write_table(table, tmp)
        os.replace(tmp, final)
        return final

    def compact(self) -> None:
        """Merge all parts into one, dropping repeated ids, so reads open one file instead of many."""
        self.flush()
        old = self._parts()
        if len(old) < 2:
            return
        table = ds.dataset([str(p) for p in old], format="parquet").to_table()
        first = pc.index_in(table.column("evidence_id").unique(), value_set=table.column("evidence_id"))
        self._write(table.take(first))
        for part in old:  # a crash here only leaves duplicates, which get() tolerates
            part.unlink()
        log.info("compacted %d embedding parts in %s into one", len(old), self.dir)

    def close(self) -> None:
        self.flush()

    def __enter__(self) -> EmbeddingCache:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
