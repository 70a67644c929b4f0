"""Ingest one shard of a Wikidata JSON dump into entities / statements / properties Parquet.

Reads both the official dump layout (a '[' line, one entity per line ending in ',', a ']' line)
and line-delimited entity JSON, from bz2, gzip or plain files, streaming: memory holds one
batch of rows, never the dump. Bad lines are quarantined with their line and byte offset.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import orjson
import pyarrow as pa
from pydantic import BaseModel, Field, field_validator

from ingest.gc_pause import gc_paused
from ingest.parquet_sink import rows_to_table, tuples_to_table
from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.shards import Shard, ShardLines
from ingest.sources import file_sha256
from ingest.wikidata.extract import entity_row, referenced_items, statement_rows
from ingest.wikidata.properties import property_row_from_entity
from ingest.wikidata.typed import TYPED_MISSES, entity_decoder, typed_rows
from ingest.workers import worker_pool
from schemas.ingest import IngestSummary
from schemas.wikidata import Entity, PropertyLabel, Statement

log = logging.getLogger(__name__)

READER = "wikidata"
BATCH_BYTES = 1 << 20  # lines handed to a worker at a time
TABLES: dict[str, type[BaseModel]] = {
    "entities": Entity,
    "statements": Statement,
    "properties": PropertyLabel,
}


class WikidataScope(BaseModel):
    """Which items to keep. Empty filters keep everything; property entities are always kept."""

    ids: frozenset[str] = frozenset()
    instance_of: frozenset[str] = frozenset()
    require_enwiki: bool = False

    def keeps(self, row: dict) -> bool:
        if row["kind"] == "property":
            return True
        if self.ids and row["id"] not in self.ids:
            return False
        if self.instance_of and not self.instance_of.intersection(row["instance_of"]):
            return False
        return not (self.require_enwiki and not row["enwiki_title"])


class WikidataIngestOptions(BaseModel):
    language: str = "en"
    scope: WikidataScope = WikidataScope()
    shard: Shard = Shard()
    max_error_rate: float | None = Field(0.01, description="fail the run above this quarantined share")
    max_line_bytes: int = Field(64 << 20, description="lines longer than this are quarantined unparsed")
    workers: int = Field(1, ge=1, description="extraction processes, sized by the caller; 1 = in-process")

    @field_validator("language")
    @classmethod
    def _language(cls, value: str) -> str:
        if not value or not value.replace("-", "").isalnum():
            raise ValueError(f"language must be a Wikidata language code like 'en', got {value!r}")
        return value

    @field_validator("max_error_rate")
    @classmethod
    def _rate(cls, value: float | None) -> float | None:
        if value is not None and not 0 <= value <= 1:
            raise ValueError(f"max_error_rate must lie in [0, 1], got {value}")
        return value


def _entity_json(data: bytes) -> bytes | None:
    """The JSON object on a dump line, or None for the array brackets and blank lines."""
    data = data.strip()
    if data.endswith(b","):
        data = data[:-1]
    if not data or data in (b"[", b"]"):
        return None
    return data


@dataclass
class _BatchResult:
    """What one batch of lines gave: Arrow tables (cheap to send between processes) and tallies."""

    entities: pa.Table
    statements: pa.Table
    properties: list[dict]
    rejects: list[dict]
    read: int = 0
    written: int = 0
    skipped: int = 0
    referenced: set[str] = field(default_factory=set)
    seen: set[str] = field(default_factory=set)


@dataclass
class _LineBatch:
    """Consecutive dump lines, sent to a worker as plain bytes (cheap to pickle)."""

    first_line_no: int | None
    first_offset: int
    lines: list[bytes]
    options: WikidataIngestOptions

    def positions(self) -> Iterator[tuple[int | None, int, bytes]]:
        offset = self.first_offset
        for i, data in enumerate(self.lines):
            yield (None if self.first_line_no is None else self.first_line_no + i), offset, data
            offset += len(data) + 1


@dataclass
class _Extracted:
    """One entity line's rows, kept with its position until they are known to fit the schema."""

    where: dict
    payload: bytes
    row: dict
    statements: list[tuple]  # in the column order of ``Statement``


def _extract_batch(batch: _LineBatch) -> _BatchResult:
    """Parse and extract one batch of dump lines; runs in a worker process when workers > 1.

    The cyclic garbage collector is paused meanwhile: a batch allocates millions of dicts and tuples (parsed
    JSON, statement rows), none of them in a cycle, and collections triggered by their count alone cost a
    fifth of the extraction. It runs again between batches.
    """
    with gc_paused():
        return _extract_lines(batch)


def _extract_lines(batch: _LineBatch) -> _BatchResult:
    options = batch.options
    decode = entity_decoder(options.language)
    extracted: list[_Extracted] = []
    rejects: list[dict] = []
    read = skipped = 0
    for line_no, offset, data in batch.positions():
        payload = _entity_json(data)
        if payload is None:
            continue
        read += 1
        where = {"line": line_no, "byte_offset": offset}
        if len(payload) > options.max_line_bytes:
            rejects.append(
                {
                    **where,
                    "error": f"line of {len(payload)} bytes exceeds max_line_bytes={options.max_line_bytes}",
                    "error_type": "RecordTooLarge",
                    "excerpt": payload[:1000],
                }
            )
            continue
        try:
            row, stmts = _entity_rows(payload, options.language, decode)
        except _Unreadable as bad:
            rejects.append({**where, "error": bad.error, "excerpt": payload, "record_id": bad.record_id})
            continue
        if not options.scope.keeps(row):
            skipped += 1
            continue
        extracted.append(_Extracted(where, payload, row, stmts))
    entities, statements, kept = _fitting_tables(extracted, rejects)
    properties = [prop for r in kept if (prop := property_row_from_entity(r.row)) is not None]
    return _BatchResult(
        entities=entities,
        statements=statements,
        properties=properties,
        rejects=sorted(rejects, key=lambda reject: reject["byte_offset"]),
        read=read,
        written=len(kept),
        skipped=skipped,
        referenced=set().union(*(referenced_items(r.statements) for r in kept)),
        seen={r.row["id"] for r in kept},
    )


class _Unreadable(Exception):
    """A line neither reader takes: why, and the entity id when the line has one."""

    def __init__(self, error: Exception, record_id: str | None):
        super().__init__(str(error))
        self.error = error
        self.record_id = record_id


def _entity_rows(payload: bytes, language: str, decode: Callable[[bytes], Any]) -> tuple[dict, list[tuple]]:
    """The entity row and statement rows of one line: from the typed decoder (``typed``), or, for a line
    outside the shape it takes, from the general reader (``extract``), which keeps the line or says what is
    wrong with it exactly as before the typed decoder existed."""
    try:
        return typed_rows(decode, payload, language)
    except TYPED_MISSES:
        pass
    entity = None
    try:
        entity = orjson.loads(payload)
        if not isinstance(entity, dict):
            raise ValueError(f"expected a JSON object, got {type(entity).__name__}")
        return entity_row(entity, language), statement_rows(entity)
    except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
        entity_id = entity.get("id") if isinstance(entity, dict) else None
        if entity_id is not None and not isinstance(entity_id, str):  # {"id": 12}: say it as written
            entity_id = repr(entity_id)[:200]
        raise _Unreadable(exc, entity_id) from None


def _fitting_tables(
    extracted: list[_Extracted], rejects: list[dict]
) -> tuple[pa.Table, pa.Table, list[_Extracted]]:
    """Entity and statement tables of the batch, and the records in them.

    An entity of the right outline can still hold a value of the wrong type (a label that is a number, a
    claim id that is a list) that only the schema catches when rows become Arrow. That used to fail the
    batch, and with it the run: then the batch is converted again entity by entity, and an entity whose
    rows do not fit is quarantined with its line like any other bad record.
    """
    try:
        return (*_tables(extracted), extracted)
    except ValueError:
        pass
    kept = []
    for record in extracted:
        try:
            _tables([record])
        except ValueError as exc:
            rejects.append(
                {**record.where, "error": exc, "excerpt": record.payload, "record_id": record.row["id"]}
            )
        else:
            kept.append(record)
    return (*_tables(kept), kept)


def _tables(records: list[_Extracted]) -> tuple[pa.Table, pa.Table]:
    entities = rows_to_table([r.row for r in records], Entity)
    return entities, tuples_to_table([s for r in records for s in r.statements], Statement)


def _line_batches(lines: ShardLines, options: WikidataIngestOptions) -> Iterator[_LineBatch]:
    batch: _LineBatch | None = None
    size = 0
    for line in lines:
        if batch is None:
            batch = _LineBatch(line.line_no, line.offset, [], options)
        batch.lines.append(line.data)
        size += len(line.data)
        if size >= BATCH_BYTES:
            yield batch
            batch, size = None, 0
    if batch is not None:
        yield batch


def ingest_wikidata(
    source: Path,
    out_dir: Path,
    options: WikidataIngestOptions | None = None,
    *,
    source_sha256: str | None = None,
    seek: Callable[[int, int], Iterator[bytes]] | None = None,
) -> IngestSummary:
    """Ingest one shard of ``source`` into ``out_dir``; re-running the same shard replaces its output.

    ``source_sha256`` is the input's checksum when the caller has it (a planned shard job): the shard does
    not hash the whole dump again. ``seek`` reads a compressed dump from a decompressed offset through its
    block index (``ingest.seek_index``), so a byte shard decodes only its own part.
    """
    options = options or WikidataIngestOptions()
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"Wikidata dump not found: {source}")
    output = ShardOutput(out_dir, READER, source, options.shard.name, TABLES, options=options)
    pool = worker_pool(options.workers)
    lines = ShardLines(source, options.shard, seek=seek)
    read = written = skipped = statements = 0
    referenced: set[str] = set()
    seen: set[str] = set()
    bar = progress(f"wikidata {source.name}", unit=" entities")
    try:
        batches = _line_batches(lines, options)
        results = pool.imap(_extract_batch, batches) if pool else map(_extract_batch, batches)
        for result in results:
            output["entities"].write_table(result.entities)
            output["statements"].write_table(result.statements)
            output["properties"].extend(result.properties)
            for reject in result.rejects:
                output.reject(**reject)
            read += result.read
            written += result.written
            skipped += result.skipped
            statements += result.statements.num_rows
            referenced |= result.referenced
            seen |= result.seen
            bar.update(result.read)
        if lines.stream.truncated is not None:
            cut = lines.stream.truncated
            output.reject(
                error=f"archive ends early: {cut.error}; lines before the cut were kept",
                error_type="TruncatedArchive",
                byte_offset=cut.byte_offset,
            )
    except BaseException:
        output.abort()
        raise
    finally:
        bar.close()
        if pool:
            pool.terminate()
    dangling = len(referenced - seen)
    log.info(
        "%s: %d entities, %d statements, %d referenced ids not in this shard",
        source.name,
        written,
        statements,
        dangling,
    )
    return output.finish(
        source_sha256=source_sha256 or lines.stream.sha256 or file_sha256(source),
        records_read=read,
        records_written=written,
        records_skipped=skipped,
        bytes_read=lines.stream.bytes_read,
        notes={"statements": statements, "dangling_references_in_shard": dangling},
        max_error_rate=options.max_error_rate,
    )
