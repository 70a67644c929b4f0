"""DuckDB as the build's out-of-core engine: joins, aggregates and sorts bounded by a memory setting.

Every build stage that joins or sorts whole-corpus tables (names, aliases, graph edges, typed
statements, tables, the evidence duplicates) does it here rather than in Python dicts or in-memory
frames. ``MemoryBudget`` turns the one ``index.memory_mb`` setting into DuckDB's ``memory_limit`` and
the batch sizes of the Python side; past its limit DuckDB spills to ``temp_directory`` (inside the
build folder) instead of growing. Paths and lists travel as query parameters, never in SQL text.
"""

from __future__ import annotations

import os
from collections.abc import Iterator, Sequence
from pathlib import Path
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel, Field

DUCKDB_SHARE = 0.5  # of a stage's memory: DuckDB's buffers; the rest is Python, Arrow batches and libraries


class MemoryBudget(BaseModel):
    """What one build stage may hold in memory, and what that makes of its batch sizes."""

    memory_mb: int = Field(ge=64, description="memory one stage may use, DuckDB and Python batches together")
    threads: int = Field(2, ge=1, description="DuckDB threads")

    @property
    def duckdb_mb(self) -> int:
        return max(32, int(self.memory_mb * DUCKDB_SHARE))

    def batch_rows(self, bytes_per_row: int, floor: int = 1_000, ceiling: int = 1_000_000) -> int:
        """Rows of ``bytes_per_row`` that fit a quarter of the budget (in Python objects, a row costs
        several times its Parquet size: the estimate is the caller's), within [floor, ceiling]."""
        rows = (self.memory_mb << 20) // 4 // max(1, bytes_per_row)
        return int(min(ceiling, max(floor, rows)))


def connect(budget: MemoryBudget, spill_dir: Path, database: Path | None = None) -> duckdb.DuckDBPyConnection:
    """A DuckDB held to the budget, spilling into ``spill_dir``: in memory, or in ``database`` (a file, so
    that tables a step creates live on disk, not in memory)."""
    spill_dir = Path(spill_dir)
    spill_dir.mkdir(parents=True, exist_ok=True)
    con = duckdb.connect(
        str(database) if database is not None else ":memory:",
        config={
            "memory_limit": f"{budget.duckdb_mb}MB",
            "temp_directory": str(spill_dir),
            "threads": budget.threads,
            # order-preserving scans and writes where the build relies on file order (first wins)
            "preserve_insertion_order": True,
            # DuckDB's allocator keeps what a query freed until background threads purge it: without
            # them a stage's next phase stood on the last query's leftovers (the vectors stage's text
            # sort, ~450 MB at 1.24M rows, under its ANN build: benchmarks/results/scale/vectors_memory.md)
            "allocator_background_threads": True,
        },
    )
    con.execute(
        "SET enable_progress_bar = false"
    )  # DuckDB's own bar would print on stdout; the build has one
    return con


def sql_path(path: Path | str) -> str:
    """A path we made ourselves as a SQL string literal, for the places DuckDB takes no parameter
    (``COPY … TO``, a view's ``read_parquet``); a path with a quote or backslash is refused."""
    text = str(Path(path).resolve())
    if "'" in text or "\\" in text:
        raise ValueError(f"path must not contain quotes or backslashes: {text!r}")
    return f"'{text}'"


def sql_paths(paths: Sequence[Path | str]) -> str:
    """A list of paths as a SQL list literal, in order (the order is each file's position)."""
    return "[" + ", ".join(sql_path(p) for p in paths) + "]"


def read_sql(paths: Sequence[Path | str], position: bool = False) -> str:
    """``read_parquet`` of these files; with ``position``, a ``pos`` column: (file index << 40) + row,
    the order of the rows across the files, over which the build's "first wins" and "last wins" rules
    are ``arg_min``/``arg_max``."""
    files = sql_paths(paths)
    if not position:
        return f"read_parquet({files})"
    return (
        f"(SELECT *, ((list_position({files}, filename)::BIGINT - 1) << 40) + file_row_number AS pos "
        f"FROM read_parquet({files}, filename=true, file_row_number=true))"
    )


def record_batches(
    con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None, rows: int = 65_536
) -> Iterator[pa.RecordBatch]:
    """The result of ``sql`` as Arrow record batches, streamed: the result is never whole in Python.

    Close the generator (or exhaust it) before the connection's next query."""
    reader = con.sql(sql, params=params or None).to_arrow_reader(rows)
    try:
        yield from reader
    finally:
        reader.close()


def arrow(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> pa.Table:
    """A small result (bounded by its caller: a batch's lookups, a count per type) as one Arrow table."""
    return con.sql(sql, params=params or None).to_arrow_table()


def scalar(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> Any:
    rows = con.sql(sql, params=params or None).fetchall()
    return rows[0][0] if rows else None


def spill_dir_for(work_dir: Path, name: str) -> Path:
    """A spill folder per stage and process, so parallel tasks never share DuckDB temp files."""
    return Path(work_dir) / f"spill-{name}-{os.getpid()}"


def run(con: duckdb.DuckDBPyConnection, sql: str, params: dict[str, Any] | None = None) -> None:
    """A statement run to completion (DDL, ``COPY``): the connection is free for the next one."""
    con.execute(sql, params or {}).fetchall()
