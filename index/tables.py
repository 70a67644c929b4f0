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

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.lexicon import table_files
from index.sorted_parquet import SortedParquet, write_sorted
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


def _with_evidence_ids(part: pa.Table, evidence_file: Path) -> pa.Table:
    """``part`` (one ingest file's rows) with the id of the evidence its verbalizer wrote for each row."""
    ids = pa.nulls(part.num_rows, pa.string())
    if evidence_file.is_file() and part.num_rows:
        said = pq.read_table(evidence_file, columns=["evidence_id", "provenance"])
        provenance = said["provenance"].combine_chunks()
        keys = [
            f"{t}\x1f{r}"
            for t, r in zip(
                provenance.field("table_id").to_pylist(),
                provenance.field("row_index").to_pylist(),
                strict=True,
            )
        ]
        wanted = [
            f"{t}\x1f{r}"
            for t, r in zip(part["table_id"].to_pylist(), part["row_index"].to_pylist(), strict=True)
        ]
        at = pc.index_in(pa.array(wanted, pa.string()), value_set=pa.array(keys, pa.string()))
        ids = pc.take(said["evidence_id"].combine_chunks(), at)
    return part.append_column("evidence_id", ids)


def build_tables(ingest_dir: Path, evidence_dir: Path, out_path: Path) -> TableStats:
    """Write every ingest table row to one file sorted by (table id, row index), atomically.

    Each row carries the id of its evidence, read from the evidence stage's file for the same ingest
    file (``table_rows.<ingest file name>``), so a row picked by SQL leads straight to its evidence.
    """
    started = time.perf_counter()
    files = table_files(Path(ingest_dir), ("table_rows",))
    schema = arrow_schema(IndexedTableRow)
    plain = arrow_schema(TableRow)
    parts = [
        _with_evidence_ids(pq.read_table(f, schema=plain), Path(evidence_dir) / f"table_rows.{f.name}").cast(
            schema
        )
        for f in files
    ]
    table = pa.concat_tables(parts) if parts else schema.empty_table()
    rows_in = table.num_rows
    if rows_in:
        # a page in two dumps gives the same table id twice: the first file in name order keeps the
        # whole table (rows of two revisions are never mixed)
        source = pa.array([i for i, part in enumerate(parts) for _ in range(part.num_rows)], pa.int32())
        keyed = table.append_column("_file", source)
        first = keyed.group_by("table_id", use_threads=False).aggregate([("_file", "min")])
        owner = pc.index_in(keyed["table_id"], value_set=first["table_id"])
        keep = pc.equal(source, pc.take(first["_file_min"], owner))
        table = table.filter(keep)
        table = table.take(pc.sort_indices(table, [("table_id", "ascending"), ("row_index", "ascending")]))
    stats = TableStats(
        files=len(files),
        tables=pc.count_distinct(table["table_id"]).as_py() if table.num_rows else 0,
        rows=table.num_rows,
        duplicate_rows=rows_in - table.num_rows,
        rows_without_evidence=table["evidence_id"].null_count,
        seconds=round(time.perf_counter() - started, 3),
    )
    write_sorted(
        table.replace_schema_metadata(schema.metadata),
        out_path,
        ["table_id", "row_index"],
        ROW_GROUP_ROWS,
        STATS_KEY,
        stats,
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
