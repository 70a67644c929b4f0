"""Verbalize the ingest output into evidence Parquet: one output file per ingest file.

Each ingest file (one table of one input shard) is verbalized on its own, so the Airflow rebuild can
map this over shards and a re-run replaces exactly one file. Names come from one ``Lexicon`` loaded
from the whole ingest output, because a statement in one shard names entities of another.
Identical evidence inside a file is written once (counted); across files, the index build dedupes.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterator
from pathlib import Path

import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.lexicon import Lexicon, table_files
from index.verbalize.infobox import field_evidence
from index.verbalize.kg import entity_evidence, statement_evidence
from index.verbalize.tables import row_evidence
from index.verbalize.text import passage_evidence
from ingest.parquet_sink import ParquetSink
from ingest.progress import progress
from schemas.evidence import Evidence

SOURCE_TABLES = ("statements", "passages", "table_rows", "infobox_fields", "entities")
READ_BATCH_ROWS = 10_000


class VerbalizeSettings(BaseModel):
    max_words: int = Field(100, ge=10, description="words per passage window (plus its context prefix)")
    entity_summaries: bool = Field(True, description="evidence for each entity's description and aliases")


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


def _records(path: Path, columns: list[str] | None = None) -> Iterator[dict]:
    parquet = pq.ParquetFile(path)
    for batch in parquet.iter_batches(batch_size=READ_BATCH_ROWS, columns=columns):
        yield from batch.to_pylist()


def _evidence_rows(
    table: str, path: Path, lexicon: Lexicon, settings: VerbalizeSettings, skipped: Counter
) -> Iterator[tuple[int, list[dict]]]:
    """(records consumed, evidence rows) for each record of one ingest file."""
    source = path.name.rsplit(".", 2)[0]  # '<input stem>.<shard>.parquet' -> the input it came from
    if table == "statements":
        for record in _records(path):
            row = statement_evidence(record, lexicon, source, skipped)
            yield 1, [row] if row else []
    elif table == "entities":
        for record in _records(path, ["id"]):
            if not settings.entity_summaries:
                skipped["entity summaries off"] += 1
                yield 1, []
                continue
            yield 1, list(entity_evidence(lexicon, [record["id"]], source))
    elif table == "passages":
        for record in _records(path):
            yield 1, list(passage_evidence(record, lexicon, source, settings.max_words))
    elif table == "table_rows":
        for record in _records(path):
            row = row_evidence(record, lexicon, source)
            if row is None:
                skipped["row without text"] += 1
            yield 1, [row] if row else []
    elif table == "infobox_fields":
        for record in _records(path):
            row = field_evidence(record, lexicon, source, skipped)
            yield 1, [row] if row else []
    else:
        raise ValueError(f"no verbalizer for table {table!r}; known: {SOURCE_TABLES}")


def verbalize_file(
    table: str,
    path: Path,
    out_dir: Path,
    lexicon: Lexicon,
    settings: VerbalizeSettings | None = None,
    on_records: Callable[[int], None] | None = None,
) -> VerbalizeStats:
    """Verbalize one ingest file into ``out_dir/<table>.<file name>``, written atomically."""
    settings = settings or VerbalizeSettings()
    started = time.perf_counter()
    out = Path(out_dir) / f"{table}.{Path(path).name}"
    skipped: Counter = Counter()
    seen: set[str] = set()
    records = written = duplicates = 0
    with ParquetSink(out, Evidence) as sink:
        for consumed, rows in _evidence_rows(table, Path(path), lexicon, settings, skipped):
            records += consumed
            if on_records is not None and records % 1000 == 0:
                on_records(1000)
            for row in rows:
                if row["evidence_id"] in seen:
                    duplicates += 1
                    continue
                seen.add(row["evidence_id"])
                sink.append(row)
                written += 1
    if on_records is not None:
        on_records(records % 1000)
    return VerbalizeStats(
        table=table,
        input=str(path),
        output=str(out),
        records=records,
        evidence=written,
        duplicates=duplicates,
        skipped=dict(skipped),
        seconds=round(time.perf_counter() - started, 3),
    )


def ingest_files(ingest_dir: Path) -> list[tuple[str, Path]]:
    """(table, file) for every ingest file the verbalizers read, in a stable order."""
    return [(table, path) for table in SOURCE_TABLES for path in table_files(ingest_dir, (table,))]


def verbalize_all(
    ingest_dir: Path,
    out_dir: Path,
    lexicon: Lexicon,
    settings: VerbalizeSettings | None = None,
) -> list[VerbalizeStats]:
    """Verbalize every ingest file, with one progress bar over all records."""
    files = ingest_files(ingest_dir)
    if not files:
        raise FileNotFoundError(f"no ingest output under {ingest_dir}: run `hqa ingest` first")
    total = sum(pq.ParquetFile(path).metadata.num_rows for _, path in files)
    bar = progress("verbalize", total=total, unit="rec", unit_scale=True)
    try:
        return [verbalize_file(table, path, out_dir, lexicon, settings, bar.update) for table, path in files]
    finally:
        bar.close()
