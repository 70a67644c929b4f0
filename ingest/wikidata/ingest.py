"""Ingest one shard of a Wikidata JSON dump into entities / statements / properties Parquet.

Reads both the official dump layout (a '[' line, one entity per line ending in ',', a ']' line)
and line-delimited entity JSON, from bz2, gzip or plain files, streaming: memory holds one
batch of rows, never the dump. Bad lines are quarantined with their line and byte offset.
"""

from __future__ import annotations

import logging
from pathlib import Path

import orjson
from pydantic import BaseModel, Field, field_validator

from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.shards import Shard, ShardLines
from ingest.sources import file_sha256
from ingest.wikidata.extract import entity_row, referenced_items, statement_rows
from ingest.wikidata.properties import property_row_from_entity
from schemas.ingest import IngestSummary
from schemas.wikidata import Entity, PropertyLabel, Statement

log = logging.getLogger(__name__)

READER = "wikidata"
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


def ingest_wikidata(
    source: Path, out_dir: Path, options: WikidataIngestOptions | None = None
) -> IngestSummary:
    """Ingest one shard of ``source`` into ``out_dir``; re-running the same shard replaces its output."""
    options = options or WikidataIngestOptions()
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"Wikidata dump not found: {source}")
    output = ShardOutput(out_dir, READER, source, options.shard.name, TABLES)
    lines = ShardLines(source, options.shard)
    read = written = skipped = statements = 0
    referenced: set[str] = set()
    seen: set[str] = set()
    bar = progress(f"wikidata {source.name}", unit=" entities")
    try:
        for line in lines:
            payload = _entity_json(line.data)
            if payload is None:
                continue
            read += 1
            bar.update()
            where = {"line": line.line_no, "byte_offset": line.offset}
            if len(payload) > options.max_line_bytes:
                output.reject(
                    error=f"line of {len(payload)} bytes exceeds max_line_bytes={options.max_line_bytes}",
                    error_type="RecordTooLarge",
                    excerpt=payload[:1000],
                    **where,
                )
                continue
            entity = None
            try:
                entity = orjson.loads(payload)
                if not isinstance(entity, dict):
                    raise ValueError(f"expected a JSON object, got {type(entity).__name__}")
                row = entity_row(entity, options.language)
                stmts = statement_rows(entity)
            except (orjson.JSONDecodeError, ValueError, KeyError, TypeError, AttributeError) as exc:
                entity_id = entity.get("id") if isinstance(entity, dict) else None
                output.reject(error=exc, excerpt=payload, record_id=entity_id, **where)
                continue
            if not options.scope.keeps(row):
                skipped += 1
                continue
            output["entities"].append(row)
            output["statements"].extend(stmts)
            if (prop := property_row_from_entity(row)) is not None:
                output["properties"].append(prop)
            written += 1
            statements += len(stmts)
            seen.add(row["id"])
            referenced |= referenced_items(stmts)
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
    dangling = len(referenced - seen)
    log.info(
        "%s: %d entities, %d statements, %d referenced ids not in this shard",
        source.name,
        written,
        statements,
        dangling,
    )
    return output.finish(
        source_sha256=file_sha256(source),
        records_read=read,
        records_written=written,
        records_skipped=skipped,
        bytes_read=lines.stream.bytes_read,
        notes={"statements": statements, "dangling_references_in_shard": dangling},
        max_error_rate=options.max_error_rate,
    )
