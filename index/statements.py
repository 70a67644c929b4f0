"""Typed statements of one index version: every ingested Wikidata statement, labelled, sorted by subject.

The evidence says a statement as text; this table keeps it as data (``schemas.statements``), so
the query side can compare amounts, pick the value of a year or the preferred rank, and follow
``evidence_id`` back to the text it cites. One Parquet file sorted by (subject, property, rank),
in small row groups: the min/max subject of each row group, read once when the file is opened,
tells a lookup which few row groups to read. Deprecated statements are kept, with their rank; the
query side decides what to do with them. A row that does not fit is skipped and counted with its
statement id, never fatal.
"""

from __future__ import annotations

import logging
import time
from collections import Counter
from collections.abc import Iterator, Mapping, Sequence
from pathlib import Path
from typing import Any

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.duck import MemoryBudget, record_batches, sql_path
from index.lexicon import Lexicon, table_files
from index.names import NameStore
from index.sorted_parquet import SortedParquet, write_sorted_batches
from index.verbalize.kg import statement_evidence
from index.verbalize.values import format_value
from ingest.parquet_sink import rows_to_table
from ingest.progress import progress
from schemas import arrow_schema
from schemas.statements import RANK_ORDER, TypedStatement

__all__ = ["StatementStats", "StatementStore", "TypedStatement", "build_statements"]

log = logging.getLogger(__name__)

ROW_GROUP_ROWS = 16_384  # small enough that a lookup by subject reads little besides its own rows
MAX_SKIPPED_IDS = 100  # listed in the stats (the manifest); the count covers every skipped row
STATS_KEY = b"hqa.statement_stats"  # the build's stats, kept in the file's schema metadata
# qualifier property -> the statement columns its first time value fills
TIME_QUALIFIERS = {
    "P585": ("point_in_time", "point_in_time_year", "point_in_time_precision"),
    "P580": ("start_time", "start_year", "start_precision"),
    "P582": ("end_time", "end_year", "end_precision"),
}


class StatementStats(BaseModel):
    """What the statements stage read, wrote and skipped."""

    files: int = Field(description="ingest statement files read")
    input_rows: int = Field(description="statement rows in those files")
    statements: int = Field(description="typed statements written")
    with_evidence: int = Field(description="statements the verbalizer says as KG evidence")
    deprecated: int
    skipped: int = Field(description="rows that did not fit, left out")
    skipped_ids: list[str] = Field(description=f"statement ids of the first {MAX_SKIPPED_IDS} skipped rows")
    skip_reasons: dict[str, int] = Field(default_factory=dict)
    seconds: float


def _known(name: str | None, entity_id: str | None) -> str | None:
    """A name, or None when the lexicon only had the id itself to offer."""
    return name if name and name != entity_id else None


def _value_columns(snak: Mapping[str, Any], lexicon: Lexicon) -> dict[str, Any]:
    """The typed value columns of a main snak or qualifier, with the labels of its ids."""
    prop = snak["property"]
    item = snak["value_item"] if snak["value_kind"] == "item" else None
    unit = snak["value_unit"]
    item_name = None
    if item:
        item_name = lexicon.property_name(item) if item.startswith("P") else lexicon.name(item)
    return {
        "property": prop,
        "property_label": _known(lexicon.property_name(prop), prop),
        "snak_type": snak["snak_type"],
        "value_kind": snak["value_kind"],
        "value_item": snak["value_item"],
        "value_item_label": _known(item_name, item),
        "value_string": snak["value_string"],
        "value_language": snak["value_language"],
        "value_amount": snak["value_amount"],
        "value_amount_text": snak["value_amount_text"],
        "value_unit": unit,
        "value_unit_label": _known(lexicon.unit_name(unit), unit) if unit else None,
        "value_time": snak["value_time"],
        "value_year": snak["value_year"],
        "value_precision": snak["value_precision"],
        "value_latitude": snak["value_latitude"],
        "value_longitude": snak["value_longitude"],
    }


def typed_statement(
    statement: Mapping[str, Any], lexicon: Lexicon, source: str, evidence_source: str
) -> dict[str, Any]:
    """One ingest statement row as a ``TypedStatement`` dict; raises when the row is not usable."""
    for key in ("statement_id", "subject", "property"):
        if not isinstance(statement[key], str) or not statement[key]:
            raise ValueError(f"{key} is {statement[key]!r}")
    if statement["rank"] not in RANK_ORDER:
        raise ValueError(f"unknown rank {statement['rank']!r}")
    subject = statement["subject"]
    qualifiers = statement["qualifiers"] or []
    row = {
        "statement_id": statement["statement_id"],
        "subject": subject,
        "subject_label": _known(lexicon.name(subject), subject),
        "rank": statement["rank"],
        "datatype": statement["datatype"],
        **_value_columns(statement, lexicon),
        "value_calendar": statement["value_calendar"],
        "value_globe": statement["value_globe"],
        "value_text": format_value(statement, lexicon),
        "qualifiers": [{**_value_columns(q, lexicon), "text": format_value(q, lexicon)} for q in qualifiers],
        "source": source,
    }
    for prop, (time_col, year_col, precision_col) in TIME_QUALIFIERS.items():
        first = next(
            (
                q
                for q in qualifiers
                if q["property"] == prop and q["value_kind"] == "time" and q["value_time"]
            ),
            None,
        )
        row[time_col] = first["value_time"] if first else None
        row[year_col] = first["value_year"] if first else None
        row[precision_col] = first["value_precision"] if first else None
    # The verbalizer's own function, so the id is exactly that of the evidence row it wrote.
    evidence = statement_evidence(statement, lexicon, evidence_source, Counter())
    row["evidence_id"] = evidence["evidence_id"] if evidence else None
    return row


class _Skips:
    """Rows left out: counted by reason, the first ids kept, each logged with its position."""

    def __init__(self) -> None:
        self.count = 0
        self.ids: list[str] = []
        self.reasons: Counter = Counter()

    def add(self, record: Mapping[str, Any], where: str, exc: Exception) -> None:
        self.count += 1
        self.reasons[type(exc).__name__] += 1
        statement_id = record.get("statement_id") or where
        if len(self.ids) < MAX_SKIPPED_IDS:
            self.ids.append(str(statement_id))
            log.warning("statement %s (%s) skipped: %s: %s", statement_id, where, type(exc).__name__, exc)


def _to_table(
    rows: list[dict], records: list[dict], wheres: list[str], skips: _Skips, positions: list[int]
) -> tuple[pa.Table, list[int]]:
    """Rows as Arrow (with the positions of those kept); when the batch does not convert, row by row,
    leaving out the ones that do not fit."""
    try:
        return rows_to_table(rows, TypedStatement), positions
    except ValueError:
        pass
    kept, kept_positions = [], []
    for row, record, where, position in zip(rows, records, wheres, positions, strict=True):
        try:
            kept.append(rows_to_table([row], TypedStatement))
            kept_positions.append(position)
        except ValueError as exc:
            skips.add(record, where, exc)
    table = pa.concat_tables(kept) if kept else arrow_schema(TypedStatement).empty_table()
    return table, kept_positions


PART_COLUMNS = [pa.field("_pos", pa.int64()), pa.field("_rank", pa.int8())]
SORTED_SQL = """
SELECT * EXCLUDE (_pos, _rank) FROM read_parquet({parts}) ORDER BY subject, property, _rank, _pos
"""


def _with_order(table: pa.Table, positions: list[int]) -> pa.Table:
    """The sort keys the row groups are cut by: rank order (preferred first) and input position."""
    ranks = pc.index_in(table["rank"], value_set=pa.array(list(RANK_ORDER))).cast(pa.int8())
    return table.append_column(PART_COLUMNS[0], pa.array(positions, pa.int64())).append_column(
        PART_COLUMNS[1], ranks
    )


def _file_tables(
    index: int, path: Path, names: NameStore, skips: _Skips, batch_rows: int, work: Path
) -> Iterator[pa.Table]:
    """The typed statements of one ingest file, batch by batch, with their position (file, row) and rank
    order for the sort."""
    source = path.name
    evidence_source = path.name.rsplit(".", 2)[0]  # as the verbalizer names the input
    start = 0
    with names.names_for_file("statements", path, batch_rows, work) as batch_names:
        for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows):
            lexicon = batch_names.lexicon(start, batch.num_rows)
            rows, records, wheres, positions = [], [], [], []
            for offset, record in enumerate(batch.to_pylist()):
                where = f"{path}, row {start + offset}"
                try:
                    rows.append(typed_statement(record, lexicon, source, evidence_source))
                except Exception as exc:  # a bad row is skipped and counted, whatever is wrong with it
                    skips.add(record, where, exc)
                    continue
                records.append(record)
                wheres.append(where)
                positions.append((index << 40) + start + offset)
            start += batch.num_rows
            yield _with_order(*_to_table(rows, records, wheres, skips, positions))


def build_statements(
    ingest_dir: Path, names: NameStore, out_path: Path, work_dir: Path, budget: MemoryBudget
) -> StatementStats:
    """Write every ingest statement, typed and labelled, to one sorted Parquet file (atomically).

    Typed batch by batch into an unsorted part file, then sorted by DuckDB out of core (subject,
    property, rank, input order) and written in row groups of ``ROW_GROUP_ROWS``. Without any statements
    in the ingest (no Wikidata input) the file is written empty, with the schema.
    """
    started = time.perf_counter()
    files = table_files(Path(ingest_dir), ("statements",))
    input_rows = sum(pq.ParquetFile(f).metadata.num_rows for f in files)
    schema = arrow_schema(TypedStatement)
    work_dir = Path(work_dir)
    parts = work_dir / "statements.unsorted.parquet"
    parts.parent.mkdir(parents=True, exist_ok=True)
    skips = _Skips()
    counts: Counter = Counter()
    batch_rows = budget.batch_rows(4_000, ceiling=50_000)
    bar = progress("statements", total=input_rows, unit="stmt", unit_scale=True)
    try:
        with pq.ParquetWriter(parts, schema.append(PART_COLUMNS[0]).append(PART_COLUMNS[1])) as writer:
            for index, path in enumerate(files):
                for table in _file_tables(index, path, names, skips, batch_rows, work_dir / f"names-{index}"):
                    writer.write_table(table)
                    counts["statements"] += table.num_rows
                    counts["with_evidence"] += table.num_rows - table["evidence_id"].null_count
                    counts["deprecated"] += pc.sum(pc.equal(table["rank"], "deprecated")).as_py() or 0
                    bar.update(table.num_rows)
    finally:
        bar.close()
    stats = StatementStats(
        files=len(files),
        input_rows=input_rows,
        statements=counts["statements"],
        with_evidence=counts["with_evidence"],
        deprecated=counts["deprecated"],
        skipped=skips.count,
        skipped_ids=skips.ids,
        skip_reasons=dict(skips.reasons),
        seconds=round(time.perf_counter() - started, 3),
    )
    sorted_rows = record_batches(names.con, SORTED_SQL.format(parts=sql_path(parts)), rows=ROW_GROUP_ROWS)
    write_sorted_batches(
        sorted_rows, schema, out_path, ["subject", "property"], ROW_GROUP_ROWS, STATS_KEY, stats
    )
    parts.unlink()
    return stats


class StatementStore:
    """The typed statements of one index version, looked up by subject.

    Opening reads only the file's footer; a lookup reads the row groups whose subject range holds a
    wanted subject, one thread each call, so one store can serve many threads at once.
    """

    def __init__(self, path: Path):
        self.path = Path(path)
        if not self.path.is_file():
            raise FileNotFoundError(
                f"no typed statements at {self.path}: this index version was built before the "
                "statements stage existed; rebuild the index with `hqa build`"
            )
        self._file = SortedParquet(self.path, "subject")
        raw = self._file.metadata
        self.stats = StatementStats.model_validate_json(raw[STATS_KEY]) if STATS_KEY in raw else None

    def count(self) -> int:
        return self._file.num_rows

    def lookup(
        self, subjects: Sequence[str], properties: Sequence[str] | None = None
    ) -> list[TypedStatement]:
        """Statements of these subjects (of these properties only, when given), in file order:
        subject, property, then preferred before normal before deprecated."""
        if not subjects or (properties is not None and not properties):
            return []
        condition = None if properties is None else pc.field("property").isin(sorted(set(properties)))
        table = self._file.read(list(subjects), condition)
        if table is None:
            return []
        return [TypedStatement.model_validate(row) for row in table.to_pylist()]

    def subjects_with_text(self, property: str, text: str) -> list[str]:
        """Subjects with a non-deprecated statement of ``property`` whose value reads ``text`` (case
        ignored): "German" as a demonym (P1549) names Germany. A scan of four columns of the whole file,
        so callers ask once and keep the answer; the property and text are filter values, never code."""
        table = pq.read_table(
            self.path,
            columns=["subject", "property", "value_text", "rank"],
            filters=(pc.field("property") == property) & (pc.field("rank") != "deprecated"),
        )
        wanted = text.casefold()
        rows = zip(table.column("subject").to_pylist(), table.column("value_text").to_pylist(), strict=True)
        return sorted({subject for subject, value in rows if (value or "").casefold() == wanted})
