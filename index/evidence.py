"""Verbalize the ingest output into evidence Parquet: one output file per ingest file.

Each ingest file (one table of one input shard) is verbalized on its own, so the Airflow rebuild can
map this over shards and a re-run replaces exactly one file. The file is read in batches of the
columns its verbalizer needs; for each batch the ids and titles it mentions are looked up in the
build's name tables (``index.names``), because a statement in one shard names entities of another —
so memory is bounded by the batch, whatever the size of the file or the corpus. Identical evidence
inside a file is written once (counted): repeats are dropped as they come while the ids seen fit a
bound the memory budget sets, and past it found by DuckDB once the file is written and left out when
it is moved into place (the same rows either way). Across files, the index build dedupes
(``index.evidence_reader``).
"""

from __future__ import annotations

import os
import time
from collections import Counter
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from index.duck import record_batches
from index.lexicon import table_files
from index.names import BatchNames, NameStore
from index.verbalize import frames, infobox, kg, tables, text
from index.verbalize.buffer import EVIDENCE_SCHEMA, EvidenceBuffer
from ingest.files import atomic_path
from ingest.parquet_sink import ParquetSink
from ingest.progress import progress
from schemas.evidence import Evidence
from schemas.settings import VerbalizeSettings

__all__ = ["VerbalizeSettings", "VerbalizeStats", "ingest_files", "verbalize_all", "verbalize_file"]

SOURCE_TABLES = ("statements", "passages", "table_rows", "infobox_fields", "entities")
READ_BATCH_ROWS = 10_000
SEEN_LIMIT = 1_000_000  # ids a file's verbalizer remembers to drop repeats (~120 MB); past it, DuckDB
ROW_GROUP_ROWS = 200_000  # the ingest sink's own; evidence files have always been written so


class VerbalizeStats(BaseModel):
    """What verbalizing one ingest file read, wrote and skipped (by reason)."""

    table: str
    input: str
    output: str
    records: int
    evidence: int
    duplicates: int
    skipped: dict[str, int]
    seconds: float


@dataclass(frozen=True)
class SourceTable:
    """How one ingest table is verbalized: its evidence type, columns, keys and provenance fields."""

    source_type: str
    columns: list[str] | None  # None: every column (a statement's value columns are all used)
    provenance: tuple[str, ...]


SOURCES = {
    "statements": SourceTable("kg", None, kg.STATEMENT_PROVENANCE),
    "entities": SourceTable("kg", ["id"], kg.ENTITY_PROVENANCE),
    "passages": SourceTable("text", text.COLUMNS, text.PROVENANCE),
    "table_rows": SourceTable("table", tables.COLUMNS, tables.PROVENANCE),
    "infobox_fields": SourceTable("infobox", infobox.COLUMNS, infobox.PROVENANCE),
}


def _verbalize_batch(
    table: str,
    batch: pa.RecordBatch,
    first_row: int,
    names: BatchNames,
    source: str,
    settings: VerbalizeSettings,
    skipped: Counter,
) -> pa.Table:
    """The evidence of one batch of records: passages and table rows said by polars (``frames``), KG
    statements, entities and infobox fields record by record with the batch's lexicon."""
    if table == "passages":
        return frames.passage_frame(
            batch, names.titles(first_row, batch.num_rows), source, settings.max_words
        )
    if table == "table_rows":
        rows, empty = frames.row_frame(batch, names.titles(first_row, batch.num_rows), source)
        if empty:
            skipped["row without text"] += empty
        return rows
    spec = SOURCES[table]
    out = EvidenceBuffer(spec.source_type, spec.provenance)
    lexicon = names.lexicon(first_row, batch.num_rows)
    if table == "statements":
        kg.statement_batch(batch, lexicon, source, out, skipped)
    elif table == "entities":
        kg.entity_batch(batch.column("id").to_pylist(), lexicon, source, out)
    else:
        infobox.field_batch(batch, lexicon, source, out, skipped)
    return out.table()


def verbalize_file(
    table: str,
    path: Path,
    out_dir: Path,
    names: NameStore,
    settings: VerbalizeSettings | None = None,
    on_records: Callable[[int], None] | None = None,
    batch_rows: int = READ_BATCH_ROWS,
    row_group_rows: int = ROW_GROUP_ROWS,
    work_dir: Path | None = None,
    seen_limit: int = SEEN_LIMIT,
) -> VerbalizeStats:
    """Verbalize one ingest file into ``out_dir/<table>.<file name>``, written atomically.

    ``batch_rows`` records are read at a time; evidence is written in row groups of at least
    ``row_group_rows`` (memory holds about one row group of evidence besides the batch). The names
    the batches mention are joined into ``work_dir`` (removed at the end; default: beside the output).
    Repeated ids are dropped as they come while at most ``seen_limit`` ids have been seen; past that,
    by DuckDB once the file is written (the same rows either way)."""
    if table not in SOURCES:
        raise ValueError(f"no verbalizer for table {table!r}; known: {SOURCE_TABLES}")
    settings = settings or VerbalizeSettings()
    started = time.perf_counter()
    out = Path(out_dir) / f"{table}.{Path(path).name}"
    raw = out.with_name(f".{out.name}.{os.getpid()}.raw")
    work = Path(work_dir) if work_dir is not None else out.with_name(f".{out.name}.{os.getpid()}.names")
    source = Path(path).name.rsplit(".", 2)[0]  # '<input stem>.<shard>.parquet' -> the input it came from
    skipped: Counter = Counter()
    records = written = repeated = 0
    seen: set[str] | None = set()
    summaries = table != "entities" or settings.entity_summaries
    try:
        with (
            names.names_for_file(table, path, batch_rows, work) as batch_names,
            ParquetSink(raw, Evidence, row_group_rows=row_group_rows) as sink,
        ):
            parquet = pq.ParquetFile(path)
            for batch in parquet.iter_batches(batch_size=batch_rows, columns=SOURCES[table].columns):
                if summaries:
                    rows = _verbalize_batch(table, batch, records, batch_names, source, settings, skipped)
                    if seen is not None:
                        rows, dropped = _first_seen(rows, seen)
                        repeated += dropped
                        seen = seen if len(seen) <= seen_limit else None
                    sink.write_table(rows)
                    written += rows.num_rows
                else:
                    skipped["entity summaries off"] += batch.num_rows
                records += batch.num_rows
                if on_records is not None:
                    on_records(batch.num_rows)
        if seen is not None:
            os.replace(raw, out)
            later = 0
        else:  # too many ids to keep: the repeats the set did not see are found on disk
            later = drop_repeated_ids(raw, out, names.con, batch_rows)
    finally:
        raw.unlink(missing_ok=True)
    return VerbalizeStats(
        table=table,
        input=str(path),
        output=str(out),
        records=records,
        evidence=written - later,
        duplicates=repeated + later,
        skipped=dict(skipped),
        seconds=round(time.perf_counter() - started, 3),
    )


def _first_seen(rows: pa.Table, seen: set[str]) -> tuple[pa.Table, int]:
    """``rows`` without those whose id is in ``seen`` or earlier in ``rows``; ``seen`` learns the rest."""
    ids = rows.column("evidence_id").to_pylist()
    fresh = set(ids)
    if len(fresh) == len(ids) and fresh.isdisjoint(seen):  # the usual batch: no repeat, set operations only
        seen |= fresh
        return rows, 0
    keep = []
    for evidence_id in ids:
        keep.append(evidence_id not in seen)
        seen.add(evidence_id)
    dropped = len(keep) - sum(keep)
    return (rows.filter(pa.array(keep)) if dropped else rows), dropped


REPEATS_SQL = """
SELECT file_row_number AS row FROM (
    SELECT file_row_number,
           row_number() OVER (PARTITION BY evidence_id ORDER BY file_row_number) AS seen
    FROM read_parquet($path, file_row_number=true)
) WHERE seen > 1 ORDER BY row
"""


def drop_repeated_ids(raw: Path, out: Path, con: duckdb.DuckDBPyConnection, batch_rows: int) -> int:
    """Move ``raw`` to ``out`` without the rows whose evidence id an earlier row has; returns how many.

    DuckDB finds the repeats (out of core, one column read); the copy streams both the file and the
    sorted repeat positions, so neither is ever whole in memory."""
    stream = record_batches(con, REPEATS_SQL, {"path": str(raw)}, batch_rows)
    try:
        return _copy_without(raw, out, (b.column(0).to_numpy() for b in stream))
    finally:
        stream.close()


def _copy_without(raw: Path, out: Path, repeats: Iterator[np.ndarray]) -> int:
    pending = next((positions for positions in repeats if positions.size), None)
    if pending is None:
        os.replace(raw, out)
        return 0
    exhausted = False
    dropped = 0
    parquet = pq.ParquetFile(raw)
    with atomic_path(out) as tmp, pq.ParquetWriter(tmp, EVIDENCE_SCHEMA, compression="zstd") as writer:
        start = 0
        for group in range(parquet.num_row_groups):
            rows = parquet.read_row_group(group)
            end = start + rows.num_rows
            while not exhausted and (not pending.size or pending[-1] < end):  # more may fall in this group
                more = next(repeats, None)
                if more is None:
                    exhausted = True
                else:
                    pending = np.concatenate([pending, more])
            inside = pending[pending < end]
            pending = pending[pending >= end]
            keep = np.ones(rows.num_rows, dtype=bool)
            keep[inside - start] = False
            dropped += int(inside.size)
            writer.write_table(rows.filter(pa.array(keep)), row_group_size=max(1, rows.num_rows))
            start = end
    return dropped


def ingest_files(ingest_dir: Path) -> list[tuple[str, Path]]:
    """(table, file) for every ingest file the verbalizers read, in a stable order."""
    return [(table, path) for table in SOURCE_TABLES for path in table_files(ingest_dir, (table,))]


def verbalize_all(
    ingest_dir: Path,
    out_dir: Path,
    names: NameStore,
    settings: VerbalizeSettings | None = None,
    batch_rows: int = READ_BATCH_ROWS,
) -> list[VerbalizeStats]:
    """Verbalize every ingest file, with one progress bar over all records."""
    files = ingest_files(ingest_dir)
    if not files:
        raise FileNotFoundError(f"no ingest output under {ingest_dir}: run `hqa ingest` first")
    total = sum(pq.ParquetFile(path).metadata.num_rows for _, path in files)
    bar = progress("verbalize", total=total, unit="rec", unit_scale=True)
    try:
        return [
            verbalize_file(table, path, out_dir, names, settings, bar.update, batch_rows)
            for table, path in files
        ]
    finally:
        bar.close()
