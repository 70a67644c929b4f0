"""The one module that imports ``kuzu``: a small embedded-graph store the graph build and reader share.

Kept narrow (create/open, DDL, bulk COPY, parameterized queries, counts) so another graph engine, or a
fork of Kùzu, can replace this one file. Values always travel as query parameters, never inside the
query text; the only things placed in query text are table names and Parquet paths we made ourselves,
and both are checked first.

Threads: one ``kuzu.Database`` per store (one buffer pool, one file lock) and one ``kuzu.Connection``
per thread, created on first use. Kùzu runs read queries of several connections at once, while the
Python binding gives no documented guarantee for one connection shared by threads (a query result
belongs to its connection), so a connection per thread is the safe choice and costs little.

Processes: several processes may open the same database read-only at once; a read-write open takes an
exclusive file lock, so build the graph, close it, then let readers open it.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Iterable, Iterator, Sequence
from pathlib import Path
from types import TracebackType
from typing import Any

import kuzu
import pyarrow as pa
import pyarrow.parquet as pq

from index.heap import release_heap

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")


NODE_GROUP_ROWS = 131_072
"""Kùzu's node group (2^17 nodes): the unit its storage writes a table in, and the slice a node COPY
is fed in, so each slice fills whole node groups (benchmarks/results/scale/kuzu_pool.md)."""


class GraphMemoryError(MemoryError):
    """A bulk load that needs a larger buffer pool than the store was given.

    One Kùzu COPY holds all it loads in the buffer pool until it commits (a node table's primary-key
    index, a rel table's rows grouped by node group, in both directions), so ``copy_from`` feeds a large
    table in slices. What still grows is one rel node group's adjacency lists, rewritten whole when a
    slice adds to it: a node with very many edges, or a table too wide per edge, can need more than the
    pool. This error names the table, its rows and the pool, and what to raise, instead of Kùzu's bare
    message."""

    def __init__(self, table: str, message: str):
        super().__init__(message)
        self.table = table


def _identifier(name: str) -> str:
    if not _IDENTIFIER.fullmatch(name):
        raise ValueError(f"not a table name: {name!r}")
    return name


def _slices(path: Path, rows: int, columns: Sequence[str] | None = None) -> Iterator[Path]:
    """``path`` cut into Parquet files of ``rows`` rows (only ``columns``, when given), in order, each
    written beside it just before it is wanted (the caller removes it): the disk holds one slice at a
    time."""
    source = pq.ParquetFile(path)
    schema = source.schema_arrow
    if columns is not None:
        schema = pa.schema([schema.field(name) for name in columns])
    piece = path.with_name(f".{path.stem}.slice.parquet")
    writer, held = None, 0
    for batch in source.iter_batches(batch_size=min(rows, 65_536), columns=columns):
        while batch.num_rows:
            if writer is None:
                writer, held = pq.ParquetWriter(piece, schema), 0
            take = batch.slice(0, rows - held)
            writer.write_batch(take)
            held += take.num_rows
            batch = batch.slice(take.num_rows)
            if held == rows:
                writer.close()
                writer = None
                yield piece
    if writer is not None:
        writer.close()
        yield piece


class GraphStore:
    """A Kùzu database file with a connection per thread; use ``create`` or ``open``."""

    def __init__(self, database: kuzu.Database, path: Path, read_only: bool):
        self.path = path
        self.read_only = read_only
        self._database: kuzu.Database | None = database
        self._local = threading.local()
        self._connections: dict[threading.Thread, kuzu.Connection] = {}
        self._lock = threading.Lock()
        self.buffer_pool_mb: int | None = None  # the cap ``create`` set; None: Kùzu's default

    @classmethod
    def create(cls, path: Path, buffer_pool_mb: int | None = None) -> GraphStore:
        """A new, empty database at ``path`` (a single file in Kùzu 0.11); refuses to overwrite.

        ``buffer_pool_mb`` caps Kùzu's buffer pool (by default 80 % of the machine's memory), so a bulk
        load keeps to a build's memory budget."""
        path = Path(path)
        if path.exists():
            raise FileExistsError(f"graph database already exists: {path}; remove it or build elsewhere")
        path.parent.mkdir(parents=True, exist_ok=True)
        pool = (buffer_pool_mb << 20) if buffer_pool_mb else 0
        store = cls(kuzu.Database(str(path), buffer_pool_size=pool), path, read_only=False)
        store.buffer_pool_mb = buffer_pool_mb
        return store

    @classmethod
    def open(cls, path: Path, read_only: bool = True) -> GraphStore:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"no graph database at {path}; build it first")
        return cls(kuzu.Database(str(path), read_only=read_only), path, read_only=read_only)

    def _connection(self) -> kuzu.Connection:
        """This thread's connection, opened on its first query. Connections of threads that have ended are
        closed then: a long-lived store queried from pool after pool would otherwise keep one per thread
        that ever queried it."""
        connection = getattr(self._local, "connection", None)
        if connection is None:
            with self._lock:
                if self._database is None:
                    raise RuntimeError(f"graph store {self.path} is closed")
                for thread in [t for t in self._connections if not t.is_alive()]:
                    self._connections.pop(thread).close()
                connection = kuzu.Connection(self._database)
                self._connections[threading.current_thread()] = connection
            self._local.connection = connection
        return connection

    def execute(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        """Run one Cypher statement with its values as ``$name`` parameters; rows as dicts."""
        result = self._connection().execute(cypher, params or {})
        if isinstance(result, list):  # several statements in one string: not what this API is for
            for part in result:
                part.close()
            raise ValueError("execute() runs one statement at a time; use ddl() for several")
        try:
            columns = result.get_column_names()
            return [dict(zip(columns, row, strict=True)) for row in result.get_all()]
        finally:
            result.close()

    def ddl(self, statements: Iterable[str]) -> None:
        """Schema statements (CREATE NODE/REL TABLE …), one by one."""
        for statement in statements:
            self.execute(statement)

    def copy_from(
        self, table: str, parquet: Path, slice_rows: int | None = None, columns: Sequence[str] | None = None
    ) -> None:
        """Bulk-load a Parquet file into ``table``; columns match by position (rels: from, to, props).

        With ``slice_rows``, a file of more rows goes in as several COPYs of that many rows each, in file
        order: one COPY holds everything it loads in the buffer pool until it commits, so the pool a load
        needs is that of a slice, not of the table (benchmarks/results/scale/kuzu_pool.md). With
        ``columns``, only those columns of the file are loaded (the file may hold others: a build's later
        steps read them). The database is closed (which checkpoints) and reopened after every COPY
        (``reopen``)."""
        path = Path(parquet).resolve()
        if not path.is_file():
            raise FileNotFoundError(f"no Parquet file to copy into {table}: {path}")
        metadata = pq.ParquetFile(path).metadata
        rows = metadata.num_rows
        whole = columns is None or list(columns) == metadata.schema.to_arrow_schema().names
        try:
            if whole and (slice_rows is None or rows <= slice_rows):
                self._copy(table, path)
                self.reopen()
            else:
                for piece in _slices(path, slice_rows or rows, None if whole else columns):
                    try:
                        self._copy(table, piece)
                    finally:
                        piece.unlink()
                    self.reopen()
        except RuntimeError as error:
            text = str(error)
            if "duplicated primary key" in text.lower():
                raise ValueError(
                    f"COPY into {table}: two rows share one primary key ({text}). The graph's keys are "
                    "63-bit hashes of ids and titles (index.graph.node_key): two different ids hashing "
                    "alike is rare but possible; the rows sharing it are in the table's Parquet file"
                ) from error
            if "buffer pool is full" not in text:
                raise
            pool = self.buffer_pool_mb or "default"
            raise GraphMemoryError(
                table,
                f"COPY of {rows:,} rows into {table} needs more than the graph's {pool} MB buffer "
                f"pool (Kùzu: {error}). The pool a load needs grows with the graph, slower in slices "
                "(benchmarks/results/scale/kuzu_pool.md); raise index.memory_mb (the pool is half of it) for "
                "the graph task",
            ) from error

    def reopen(self) -> None:
        """Close the database (a writer checkpoints on close) and open it again with the same pool.

        What a COPY leaves behind outside the buffer pool stays with the open database until it closes:
        loading the graph's nine tables into one open database peaked at 1,574 MB of RSS at 300k
        entities with a 512 MB pool, growing table by table; reopened after every COPY, at 960 MB
        (benchmarks/results/scale/graph_memory.md). A reader opened elsewhere is unaffected: the
        database being built is not published until the build is done."""
        if self.read_only:
            raise RuntimeError(f"graph store {self.path} is read-only: nothing to reopen after a COPY")
        self.close()
        release_heap()  # what the COPY freed goes back to the system before the next one grows
        pool = (self.buffer_pool_mb << 20) if self.buffer_pool_mb else 0
        self._database = kuzu.Database(str(self.path), buffer_pool_size=pool)

    def _copy(self, table: str, path: Path) -> None:
        text = str(path)
        if "'" in text or "\\" in text:  # COPY takes no parameter for its path; keep the literal safe
            raise ValueError(f"Parquet path must not contain quotes or backslashes: {text!r}")
        self.execute(f"COPY {_identifier(table)} FROM '{text}'")

    def tables(self) -> dict[str, str]:
        """Table name -> 'NODE' or 'REL'."""
        return {row["name"]: row["type"] for row in self.execute("CALL show_tables() RETURN name, type")}

    def count(self, table: str) -> int:
        kind = self.tables().get(_identifier(table))
        if kind == "NODE":
            rows = self.execute(f"MATCH (n:{table}) RETURN count(n) AS n")
        elif kind == "REL":
            rows = self.execute(f"MATCH ()-[r:{table}]->() RETURN count(r) AS n")
        else:
            raise KeyError(f"no table {table!r} in graph {self.path}")
        return int(rows[0]["n"])

    def close(self) -> None:
        """Close every thread's connection, then the database (a writer checkpoints here)."""
        with self._lock:
            for connection in self._connections.values():
                connection.close()
            self._connections.clear()
            self._local = threading.local()  # no thread may reuse a closed connection
            if self._database is not None:
                self._database.close()
                self._database = None

    def __enter__(self) -> GraphStore:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
