"""Plan an ingest as independent shard jobs, and run one job at a time, skipping unchanged ones.

A ``ShardJob`` names one reader over one shard of one input plus that input's checksum. It is
plain data, so an Airflow task can map over a list of them and run each on any worker. Running a
job whose input checksum and output-shaping options equal those of the output already in the
ingest folder does nothing and reports the earlier summary: re-running an ingest over unchanged
dumps is free, and a changed dump re-ingests only its own shards.
"""

from __future__ import annotations

import logging
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ingest.ottqa import PASSAGE_FILE, TABLE_FILE, OttqaIngestOptions, ingest_ottqa
from ingest.shard_output import options_fingerprint, summary_path
from ingest.shards import Shard
from ingest.sources import detect_compression, file_sha256
from ingest.wikidata.ingest import WikidataIngestOptions, WikidataScope, ingest_wikidata
from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia
from schemas.ingest import IngestSummary
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

Reader = Literal["wikidata", "wikipedia", "ottqa"]
RUNS = "_runs"


class IngestOptions(BaseModel):
    """Every reader's options for one ingest run."""

    wikidata: WikidataIngestOptions = Field(default_factory=WikidataIngestOptions)
    wikipedia: WikipediaIngestOptions = Field(default_factory=WikipediaIngestOptions)
    ottqa: OttqaIngestOptions = Field(default_factory=OttqaIngestOptions)

    @classmethod
    def from_settings(
        cls,
        settings: HqaSettings,
        scope: WikidataScope | None = None,
        *,
        wikidata_shard: Shard | None = None,
        ottqa_limit: int | None = None,
    ) -> IngestOptions:
        """Every reader's options from the settings (language, workers, error rate) plus the run's scope."""
        common = {"workers": settings.parser_workers, "max_error_rate": settings.max_error_rate}
        return cls(
            wikidata=WikidataIngestOptions(
                language=settings.language,
                scope=scope or WikidataScope(),
                shard=wikidata_shard or Shard(),
                **common,
            ),
            wikipedia=WikipediaIngestOptions(**common),
            ottqa=OttqaIngestOptions(limit=ottqa_limit, max_error_rate=settings.max_error_rate),
        )

    def for_job(self, job: ShardJob) -> WikidataIngestOptions | WikipediaIngestOptions | OttqaIngestOptions:
        if job.reader == "wikidata":
            return self.wikidata.model_copy(update={"shard": Shard.parse(job.shard)})
        return self.wikipedia if job.reader == "wikipedia" else self.ottqa


class ShardJob(BaseModel):
    """One reader over one shard of one input (an OTT-QA release folder counts as one input)."""

    reader: Reader
    source: str
    shard: str = Field("all", description="'all' or 'bytes:START:END' / 'lines:START:END' (Wikidata only)")
    sha256: str = Field(description="checksum of the input, as the ingest summary records it")

    @property
    def label(self) -> str:
        return f"{self.reader}:{Path(self.source).name}:{Shard.parse(self.shard).name}"

    def summary_file(self, out_dir: Path) -> Path:
        source = Path(self.source) / TABLE_FILE if self.reader == "ottqa" else Path(self.source)
        return summary_path(out_dir, self.reader, source, Shard.parse(self.shard).name)


class ShardOutcome(BaseModel):
    """A job's summary, and whether its earlier output was kept because nothing had changed."""

    job: ShardJob
    skipped: bool
    summary: IngestSummary


def input_checksum(reader: Reader, source: Path) -> str:
    """The checksum an ingest of ``source`` records (OTT-QA: both files' checksums, joined)."""
    if reader == "ottqa":
        return file_sha256(source / TABLE_FILE) + ":" + file_sha256(source / PASSAGE_FILE)
    return file_sha256(source)


def byte_shards(path: Path, shard_bytes: int | None) -> list[str]:
    """Byte-range shards of an uncompressed line dump; a compressed file is one shard.

    A compressed file's decompressed size is unknown without decompressing it, and byte shards
    address decompressed offsets: split compressed dumps by file (the dumps are published in parts).
    """
    size = path.stat().st_size
    if not shard_bytes or detect_compression(path) != "none" or size <= shard_bytes:
        return ["all"]
    starts = range(0, size, shard_bytes)
    return [f"bytes:{s}:{s + shard_bytes if s + shard_bytes < size else ''}" for s in starts]


def plan_shards(
    wikidata: list[Path],
    wikipedia: list[Path],
    ottqa: Path | None,
    *,
    wikidata_shard: Shard | None = None,
    shard_bytes: int | None = None,
) -> list[ShardJob]:
    """Jobs for every input: Wikidata split by ``wikidata_shard`` or into ``shard_bytes`` ranges."""
    jobs = []
    for path in map(Path, wikidata):
        _require_file(path, "Wikidata dump")
        sha = input_checksum("wikidata", path)
        if wikidata_shard is not None and wikidata_shard.kind != "all":
            shards = [f"{wikidata_shard.kind}:{wikidata_shard.start}:{wikidata_shard.end or ''}"]
        else:
            shards = byte_shards(path, shard_bytes)
        jobs += [ShardJob(reader="wikidata", source=str(path), shard=s, sha256=sha) for s in shards]
    for path in map(Path, wikipedia):
        _require_file(path, "Wikipedia dump")
        jobs.append(ShardJob(reader="wikipedia", source=str(path), sha256=input_checksum("wikipedia", path)))
    if ottqa is not None:
        for name in (TABLE_FILE, PASSAGE_FILE):
            _require_file(Path(ottqa) / name, "OTT-QA file")
        jobs.append(ShardJob(reader="ottqa", source=str(ottqa), sha256=input_checksum("ottqa", Path(ottqa))))
    return jobs


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")


def earlier_output(job: ShardJob, out_dir: Path, options: IngestOptions) -> IngestSummary | None:
    """The summary of an earlier run of this job with the same input and options, if its files are intact."""
    path = job.summary_file(out_dir)
    if not path.is_file():
        return None
    summary = IngestSummary.model_validate_json(path.read_text())
    same = (
        summary.source_sha256 == job.sha256
        and summary.options_fingerprint == options_fingerprint(options.for_job(job))
        and all(Path(o.path).is_file() for o in summary.outputs)
    )
    return summary if same else None


def ingest_shard(
    job: ShardJob, out_dir: Path, options: IngestOptions, *, skip_unchanged: bool = True
) -> ShardOutcome:
    """Run one job into ``out_dir`` (replacing its earlier output) unless that output is up to date."""
    if skip_unchanged and (summary := earlier_output(job, out_dir, options)) is not None:
        log.info("%s unchanged since its last ingest: skipped", job.label)
        return ShardOutcome(job=job, skipped=True, summary=summary)
    source = Path(job.source)
    reader_options = options.for_job(job)
    if job.reader == "wikidata":
        summary = ingest_wikidata(source, out_dir, reader_options)  # type: ignore[arg-type]
    elif job.reader == "wikipedia":
        summary = ingest_wikipedia(source, out_dir, reader_options)  # type: ignore[arg-type]
    else:
        summary = ingest_ottqa(source, out_dir, reader_options)  # type: ignore[arg-type]
    if summary.source_sha256 != job.sha256:
        raise RuntimeError(f"{job.label} changed while it was ingested: run the ingest again")
    return ShardOutcome(job=job, skipped=False, summary=summary)


def prune_stale_outputs(out_dir: Path, jobs: list[ShardJob]) -> list[str]:
    """Delete the output of earlier runs that are not among ``jobs`` (inputs dropped or re-sharded).

    The ingest folder then holds exactly the planned inputs, so an index built from it does too.
    Returns the removed runs' summary names.
    """
    keep = {job.summary_file(out_dir).resolve() for job in jobs}
    removed = []
    for path in sorted((Path(out_dir) / RUNS).glob("*.json")):
        if path.resolve() in keep:
            continue
        summary = IngestSummary.model_validate_json(path.read_text())
        for output in summary.outputs:
            Path(output.path).unlink(missing_ok=True)
        path.unlink()
        removed.append(path.name)
        log.info("removed the output of %s, which is no longer an input", summary.source)
    return removed
