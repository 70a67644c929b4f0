"""The checks a new version passes before it is published: counts agree, each index answers a smoke query.

Every count is read from a footer or counted by DuckDB; the smoke queries use the first evidence row,
the first alias and the first table. Nothing here reads a whole table into memory.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path

import duckdb
import pyarrow.parquet as pq

from index import layout
from index.aliases import AliasIndex
from index.bm25 import Bm25Index
from index.duck import read_sql, scalar
from index.evidence_reader import EvidenceReader
from index.graph import GraphIndex
from index.lexicon import table_files
from index.statements import StatementStore
from index.tables import TableStore
from index.vectors import VectorIndex, embedded


def _first_row(path: Path, columns: list[str]) -> dict | None:
    for batch in pq.ParquetFile(path).iter_batches(batch_size=1, columns=columns):
        return batch.to_pylist()[0]
    return None


def _ingested(ingest_dir: Path, table: str) -> int:
    return sum(pq.ParquetFile(f).metadata.num_rows for f in table_files(ingest_dir, (table,)))


def validate_version(building: Path, ingest_dir: Path, con: duckdb.DuckDBPyConnection) -> dict[str, str]:
    """check -> 'ok' or what failed. The typed statements hold every ingested statement but the skipped
    ones, and each evidence id they cite is in the evidence."""
    evidence = EvidenceReader(building)
    expected = evidence.rows()
    first = evidence.first(["evidence_id", "text", "source_type"])
    results: dict[str, str] = {}

    def check(name: str, fn: Callable[[], str | None]) -> None:
        try:
            problem = fn()
        except Exception as exc:  # a broken index must fail validation, whatever the error
            problem = f"{type(exc).__name__}: {exc}"
        results[name] = problem or "ok"

    def bm25() -> str | None:
        index = Bm25Index(building / layout.BM25)
        if index.count() != expected:
            return f"{index.count()} documents for {expected} evidence rows"
        hits = index.search(first["text"], 10)
        return None if any(h.evidence_id == first["evidence_id"] for h in hits) else "smoke query missed"

    def aliases() -> str | None:
        rows = pq.ParquetFile(building / layout.ALIAS_TABLE).metadata.num_rows
        index = AliasIndex(building / layout.ALIAS_INDEX)
        if index.count() != rows:
            return f"{index.count()} alias documents for {rows} aliases"
        row = _first_row(building / layout.ALIAS_TABLE, ["alias", "entity_id"])
        if row is None:
            return None
        return (
            None
            if any(h.entity_id == row["entity_id"] for h in index.lookup(row["alias"], 50))
            else ("smoke lookup missed")
        )

    def vectors() -> str | None:
        index = VectorIndex.open(building / layout.VECTORS)
        given = embedded(evidence, index.stats.embedded_sources)
        rows = scalar(con, f"SELECT count(*) FROM {given.sql(['evidence_id'])}")
        if index.count() != rows:
            return (
                f"{index.count()} vectors for {rows} evidence rows of {index.stats.embedded_sources or 'all'}"
            )
        sql = f"SELECT evidence_id, text FROM {given.sql(['evidence_id', 'text'])} ORDER BY pos LIMIT 1"
        found = con.sql(sql).fetchall()
        if not found:
            return None
        one = found[0]
        hits = index.search(index.embedder().encode([one[1]])[0], 5)
        return None if any(h.evidence_id == one[0] for h in hits) else "own text not nearest"

    def graph() -> str | None:
        with GraphIndex.open(building / layout.GRAPH_DB) as index:
            count = index.counts().get("Evidence", 0)
            if count != expected:
                return f"{count} evidence nodes for {expected} evidence rows"
            rows = index.query(
                "MATCH (e:Evidence {id: $id}) RETURN e.source_type AS source_type",
                {"id": first["evidence_id"]},
            )
            return None if rows and rows[0]["source_type"] == first["source_type"] else "smoke query missed"

    def statements() -> str | None:
        store = StatementStore(building / layout.STATEMENT_TABLE)
        ingested = _ingested(ingest_dir, "statements")
        if store.stats is None:
            return "the statements file carries no build stats"
        if store.count() != ingested - store.stats.skipped:
            return f"{store.count()} statements for {ingested} ingested, {store.stats.skipped} skipped"
        missing = scalar(
            con,
            f"SELECT count(*) FROM {read_sql([building / layout.STATEMENT_TABLE])} s "
            f"WHERE s.evidence_id IS NOT NULL AND s.evidence_id NOT IN "
            f"(SELECT evidence_id FROM {evidence.sql(['evidence_id'])})",
        )
        if missing:
            return f"{missing} statements cite evidence ids the evidence does not hold"
        row = _first_row(building / layout.STATEMENT_TABLE, ["statement_id", "subject"])
        if row is None:
            return None
        hits = store.lookup([row["subject"]])
        return None if hits and hits[0].statement_id == row["statement_id"] else "smoke lookup missed"

    def tables() -> str | None:
        store = TableStore(building / layout.TABLE_ROWS)
        if store.stats is None:
            return "the tables file carries no build stats"
        ingested = _ingested(ingest_dir, "table_rows")
        if store.count() != ingested - store.stats.duplicate_rows:
            return (
                f"{store.count()} table rows for {ingested} ingested, {store.stats.duplicate_rows} duplicates"
            )
        row = _first_row(building / layout.TABLE_ROWS, ["table_id"])
        if row is None:
            return None
        rows = store.rows(row["table_id"])
        return (
            None
            if rows and rows[0].table_id == row["table_id"] and rows[0].row_index == 0
            else "smoke lookup missed"
        )

    for name, fn in (
        ("bm25", bm25),
        ("aliases", aliases),
        ("vectors", vectors),
        ("graph", graph),
        ("statements", statements),
        ("tables", tables),
    ):
        check(name, fn)
    return results
