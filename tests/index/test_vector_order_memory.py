"""The vector table's rows are put in evidence order within a bounded DuckDB: a DuckDB held to 32 MB
orders twice as many vector bytes, in batches of at most ``batch_rows``, the first vector of a
repeated id winning, and an id without a vector is named. The join and sort of rows with their
vectors that this replaced asked DuckDB for one block the size of every vector (here "could not
allocate block of size 59.6 MiB"; at 1.24M rows it failed with a 256 MB limit).

Real parquet cache parts, real DuckDB, a real LanceDB write; random vectors (no model is under test).
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
import lancedb
import numpy as np
import pyarrow as pa
import pytest

from index.embedding_cache import EmbeddingCache, vector_matrix
from index.vectors import (
    InMemoryEvidence,
    VectorIndexSettings,
    build_vector_index,
    vector_batches,
    write_batch_rows,
)

ROWS, DIM = 60_000, 256  # 61 MB of vectors
DUCKDB_MB = 32  # DuckDB may hold half of them


def _evidence(rows: int) -> pa.Table:
    ids = [f"e{i:07d}" for i in range(rows)]
    return pa.table(
        {
            "evidence_id": ids,
            "source_type": ["text" if i % 3 else "table" for i in range(rows)],
            "page_title": [f"Page {i % 997}" for i in range(rows)],
        }
    )


@pytest.fixture(scope="module")
def cached(
    tmp_path_factory: pytest.TempPathFactory,
) -> tuple[pa.Table, EmbeddingCache, dict[str, np.ndarray]]:
    """Evidence, and a cache holding its vectors in another order (shuffled, as length order would be),
    in several parts, with a later part repeating some ids with other vectors (the first must win)."""
    evidence = _evidence(ROWS)
    rng = np.random.default_rng(7)
    vectors = rng.standard_normal((ROWS, DIM), dtype=np.float32)
    ids = evidence.column("evidence_id").to_pylist()
    cache = EmbeddingCache(tmp_path_factory.mktemp("cache"), "random", part_rows=4_096)
    order = rng.permutation(ROWS)
    cache.add([ids[i] for i in order], vectors[order])
    cache.flush()
    repeated = order[:500]
    cache.add([ids[i] for i in repeated], -vectors[repeated])  # later: never used
    cache.flush()
    return evidence, cache, {ids[i]: vectors[i] for i in range(ROWS)}


@contextmanager
def _small_duckdb(spill: Path) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB held to ``DUCKDB_MB``, far below the vectors it orders (MemoryBudget's floor is 64 MB)."""
    con = duckdb.connect(
        config={
            "memory_limit": f"{DUCKDB_MB}MB",
            "threads": 2,
            "temp_directory": str(spill),
            "preserve_insertion_order": True,
        }
    )
    con.execute("SET enable_progress_bar = false")
    try:
        yield con
    finally:
        con.close()


def _ordered(
    evidence: pa.Table, cache: EmbeddingCache, con: duckdb.DuckDBPyConnection, tmp_path: Path, batch_rows: int
) -> pa.RecordBatchReader:
    """The vectors of ``evidence`` in its order, ``batch_rows`` at a time, as the vectors stage reads them."""
    relation = InMemoryEvidence(evidence, con)
    return vector_batches(relation, cache, con, DIM, "random@0", batch_rows=batch_rows, scratch_dir=tmp_path)


def test_vectors_come_in_evidence_order_from_a_duckdb_far_smaller_than_them(cached, tmp_path) -> None:
    evidence, cache, truth = cached
    sizes, ids, vectors = [], [], []
    with _small_duckdb(tmp_path / "spill") as con:
        for batch in _ordered(evidence, cache, con, tmp_path, batch_rows=3_000):
            sizes.append(batch.num_rows)
            ids += batch.column("evidence_id").to_pylist()
            vectors.append(vector_matrix(batch.column("vector")))
    assert max(sizes) <= 3_000 and sum(sizes) == ROWS
    assert ids == evidence.column("evidence_id").to_pylist(), "evidence order"
    matrix = np.vstack(vectors)
    expected = np.vstack([truth[i] for i in ids])
    assert np.array_equal(matrix, expected), "each id's first cached vector, bit for bit"
    assert not any(tmp_path.glob("vectors-*")), "the scratch file is removed"


def test_the_lancedb_table_holds_them_in_that_order(cached, tmp_path) -> None:
    evidence, cache, truth = cached
    with _small_duckdb(tmp_path / "spill") as con:
        reader = _ordered(evidence, cache, con, tmp_path, batch_rows=5_000)
        stats = build_vector_index(reader, tmp_path / "vectors", VectorIndexSettings(ann_min_rows=10**9))
    assert stats.rows == ROWS and stats.source_type_counts == {"table": 20_000, "text": 40_000}
    table = lancedb.connect(tmp_path / "vectors").open_table("evidence").to_arrow()
    assert table.column("evidence_id").to_pylist() == evidence.column("evidence_id").to_pylist()
    assert np.array_equal(
        vector_matrix(table.column("vector")),
        np.vstack([truth[i] for i in table.column("evidence_id").to_pylist()]),
    )


def test_an_id_without_a_vector_is_named_before_any_batch(cached, tmp_path) -> None:
    evidence, cache, _ = cached
    extra = pa.table({"evidence_id": ["zz-missing"], "source_type": ["text"], "page_title": ["Nowhere"]})
    with _small_duckdb(tmp_path / "spill") as con:
        reader = _ordered(pa.concat_tables([evidence, extra]), cache, con, tmp_path, batch_rows=65_536)
        with pytest.raises(KeyError, match=r"1 ids have no vector.*zz-missing"):
            next(iter(reader))


def test_write_batches_follow_the_memory_budget() -> None:
    assert write_batch_rows(1024, 256) == 16_384  # 8 batches held: 128 MB, an eighth of the budget
    assert write_batch_rows(512, 256) == 8_192
    assert write_batch_rows(1024, 384) < write_batch_rows(1024, 256)
    assert write_batch_rows(64, 256) == 1_024 and write_batch_rows(1 << 20, 256) == 65_536
