"""Every Wikipedia table of one index version, row by row with its cells, looked up by table id.

The evidence says each table row as one sentence, which is what retrieval needs; a question that
ranks, counts or compares over a table needs the whole table as data — every row, each cell under
its header with its links — so the table-sql mode can type the columns and run SQL over them. This
stage copies the ingest's table rows (``schemas.wikipedia.TableRow``) into one Parquet file of the
version, sorted by (table id, row), in small row groups, read through ``SortedParquet``: a table's
rows sit in one or two row groups. A version is then self-contained: the query side never reads the
ingest folder, which a later ingest may already have changed.
"""

from __future__ import annotations

import time
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.duck import MemoryBudget, read_sql, record_batches, sql_path
from index.lexicon import table_files
from index.sorted_parquet import SortedParquet, write_sorted_batches
from schemas import arrow_schema
from schemas.wikipedia import IndexedTableRow, TableRow

ROW_GROUP_ROWS = 4_096
STATS_KEY = b"hqa.table_stats"


class TableStats(BaseModel):
    """What the tables stage read and wrote."""

    files: int = Field(description="ingest table-row files read")
    tables: int
    rows: int
    duplicate_rows: int = Field(0, description="rows of tables already read from an earlier file; dropped")
    rows_without_evidence: int = Field(0, description="rows the verbalizer skipped (no text in any cell)")
    seconds: float


def _evidence_ids(files: list[Path], evidence_dir: Path) -> str:
    """(file index, table id, row, evidence id) of the rows each ingest file's table evidence says: the
    evidence file ``table_rows.<ingest file name>`` of the same ingest file, its first row of a key."""
    parts = [
        f"SELECT {index} AS f, provenance.table_id AS table_id, provenance.row_index AS row_index, "
        "evidence_id, "
        f"file_row_number FROM read_parquet({sql_path(evidence_dir / f'table_rows.{path.name}')}, "
        "file_row_number=true)"
        for index, path in enumerate(files)
        if (evidence_dir / f"table_rows.{path.name}").is_file()
    ]
    if not parts:
        return (
            "(SELECT NULL::BIGINT AS f, NULL::VARCHAR AS table_id, NULL::INTEGER AS row_index, "
            "NULL::VARCHAR AS evidence_id WHERE false)"
        )
    return (
        "(SELECT f, table_id, row_index, arg_min(evidence_id, file_row_number) AS evidence_id "
        f"FROM ({' UNION ALL '.join(parts)}) GROUP BY f, table_id, row_index)"
    )


KEPT_SQL = """
WITH rows AS (SELECT {columns}, pos, pos >> 40 AS f FROM {rows}),
owners AS (SELECT table_id, min(f) AS f FROM rows GROUP BY table_id)
SELECT r.*, e.evidence_id FROM rows r
JOIN owners o ON o.table_id = r.table_id AND o.f = r.f
LEFT JOIN {evidence} e ON e.f = r.f AND e.table_id = r.table_id AND e.row_index = r.row_index
"""


def build_tables(
    ingest_dir: Path, evidence_dir: Path, out_path: Path, con: duckdb.DuckDBPyConnection, budget: MemoryBudget
) -> TableStats:
    """Write every ingest table row to one file sorted by (table id, row index), atomically.

    Each row carries the id of its evidence, read from the evidence stage's file for the same ingest
    file (``table_rows.<ingest file name>``), so a row picked by SQL leads straight to its evidence. A
    page in two dumps gives the same table id twice: the first file in name order keeps the whole table
    (rows of two revisions are never mixed). The join and the sort are DuckDB's, out of core.
    """
    started = time.perf_counter()
    files = table_files(Path(ingest_dir), ("table_rows",))
    schema = arrow_schema(IndexedTableRow)
    plain = arrow_schema(TableRow)
    if files:
        kept = KEPT_SQL.format(
            columns=", ".join(plain.names),
            rows=read_sql(files, position=True),
            evidence=_evidence_ids(files, Path(evidence_dir)),
        )
        rows_in = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
        ((tables, rows, without),) = con.sql(
            f"SELECT count(DISTINCT table_id), count(*), count(*) - count(evidence_id) FROM ({kept})"
        ).fetchall()
        ordered = f"SELECT {', '.join(schema.names)} FROM ({kept}) ORDER BY table_id, row_index, pos"
    else:
        rows_in = tables = rows = without = 0
        ordered = None
    stats = TableStats(
        files=len(files),
        tables=tables,
        rows=rows,
        duplicate_rows=rows_in - rows,
        rows_without_evidence=without,
        seconds=round(time.perf_counter() - started, 3),
    )
    batches = (
        record_batches(con, ordered, rows=budget.batch_rows(3_000, ceiling=ROW_GROUP_ROWS)) if ordered else []
    )
    write_sorted_batches(
        batches, schema, out_path, ["table_id", "row_index"], ROW_GROUP_ROWS, STATS_KEY, stats
    )
    return stats


class TableStore:
    """The tables of one index version; ``rows(table_id)`` gives a table's rows in order."""

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(
                f"no tables at {self.path}: this index version was built before the tables stage "
                "existed; rebuild the index with `hqa build`"
            )
        self._file = SortedParquet(self.path, "table_id")
        raw = self._file.metadata
        self.stats = TableStats.model_validate_json(raw[STATS_KEY]) if STATS_KEY in raw else None

    def count(self) -> int:
        """Table rows held (all tables)."""
        return self._file.num_rows

    def rows(self, table_id: str) -> list[IndexedTableRow]:
        table = self._file.read([table_id])
        return [] if table is None else [IndexedTableRow.model_validate(r) for r in table.to_pylist()]
