"""Plan an ingest as independent shard jobs, and run one job at a time, skipping unchanged ones.

A ``ShardJob`` names one reader over one shard of one input plus that input's checksum. It is
plain data, so an Airflow task can map over a list of them and run each on any worker. Running a
job whose input checksum and output-shaping options equal those of the output already in the
ingest folder does nothing and reports the earlier summary: re-running an ingest over unchanged
dumps is free, and a changed dump re-ingests only its own shards.
"""

from __future__ import annotations

import logging
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from ingest.checksums import ChecksumCache, FileStamp
from ingest.ottqa import PASSAGE_FILE, TABLE_FILE, OttqaIngestOptions, ingest_ottqa
from ingest.seek_index import SeekIndex, UnindexableArchive, read_from, saved_indexes, seek_index
from ingest.shard_output import options_fingerprint, read_summary, summary_path
from ingest.shards import Shard
from ingest.sources import detect_compression, file_sha256
from ingest.wikidata.ingest import WikidataIngestOptions, WikidataScope, ingest_wikidata
from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia
from schemas.ingest import IngestSummary
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

Reader = Literal["wikidata", "wikipedia", "ottqa"]
RUNS = "_runs"
INPUTS = "_inputs"


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
            ottqa=OttqaIngestOptions(limit=ottqa_limit, **common),
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
    stamp: str = Field(
        "", description="size and mtime of the input file(s) when planned: a change shows without hashing"
    )

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


def inputs_dir(out_dir: Path) -> Path:
    """What the ingest keeps about its inputs: saved checksums and the block indexes of compressed dumps."""
    return Path(out_dir) / INPUTS


def seek_dir(out_dir: Path) -> Path:
    return inputs_dir(out_dir) / "seek"


def input_files(reader: Reader, source: Path) -> list[Path]:
    """The files one input is read from (an OTT-QA release: its two files)."""
    return [Path(source) / TABLE_FILE, Path(source) / PASSAGE_FILE] if reader == "ottqa" else [Path(source)]


def input_stamp(reader: Reader, source: Path) -> str:
    """Size and mtime of the input's files: equal stamps mean the files were not rewritten."""
    return ";".join(f"{s.size}:{s.mtime_ns}" for s in map(FileStamp.of, input_files(reader, source)))


def input_checksum(reader: Reader, source: Path, cache: ChecksumCache | None = None) -> str:
    """The checksum an ingest of ``source`` records (OTT-QA: both files' checksums, joined), from
    ``cache`` when it holds the file unchanged."""
    digest = cache.sha256 if cache is not None else file_sha256
    return ":".join(digest(path) for path in input_files(reader, source))


def byte_shards(path: Path, shard_bytes: int | None, index: SeekIndex | None = None) -> list[str]:
    """Byte-range shards of a line dump, about ``shard_bytes`` of the file each.

    Ranges address the decompressed stream. A plain file is cut every ``shard_bytes``; a compressed one
    into as many shards as its compressed size holds ``shard_bytes``, cutting its decompressed size (known
    from its block ``index``) evenly. Without an index a compressed file is one shard.
    """
    size = Path(path).stat().st_size
    if not shard_bytes or size <= shard_bytes or (index is None and detect_compression(path) != "none"):
        return ["all"]
    count = -(-size // shard_bytes)
    total = index.decompressed_bytes if index is not None else size
    starts = [total * i // count for i in range(count)]
    ends = [str(s) for s in starts[1:]] + [""]
    return [f"bytes:{start}:{end}" for start, end in zip(starts, ends, strict=True)]


def _wikidata_shards(path: Path, sha: str, out_dir: Path, shard_bytes: int | None, threads: int) -> list[str]:
    """``byte_shards`` of one Wikidata dump, building (once) the block index a compressed one needs."""
    index = None
    if shard_bytes and path.stat().st_size > shard_bytes and detect_compression(path) != "none":
        try:
            index = seek_index(path, sha, seek_dir(out_dir), threads=threads)
        except UnindexableArchive as exc:
            log.warning("%s; planned as one shard", exc)
    return byte_shards(path, shard_bytes, index)


def plan_shards(
    wikidata: list[Path],
    wikipedia: list[Path],
    ottqa: Path | None,
    *,
    out_dir: Path,
    wikidata_shard: Shard | None = None,
    shard_bytes: int | None = None,
    threads: int = 1,
) -> list[ShardJob]:
    """Jobs for every input: Wikidata split by ``wikidata_shard`` or into ``shard_bytes`` ranges.

    Checksums come from the ingest folder ``out_dir`` when a file is unchanged since it was hashed, else
    are computed ``threads`` files at a time and saved; so are the block indexes of compressed dumps that
    are split. Each is computed once per file, and every shard job reuses them.
    """
    readers: list[tuple[Reader, Path, str]] = [("wikidata", Path(p), "Wikidata dump") for p in wikidata]
    readers += [("wikipedia", Path(p), "Wikipedia dump") for p in wikipedia]
    if ottqa is not None:
        readers.append(("ottqa", Path(ottqa), "OTT-QA file"))
    for reader, source, what in readers:
        for path in input_files(reader, source):
            _require_file(path, what)
    cache = ChecksumCache(inputs_dir(out_dir) / "checksums")
    cache.sha256_many(
        [f for reader, source, _ in readers for f in input_files(reader, source)], threads=threads
    )
    jobs = []
    for reader, source, _ in readers:
        sha, stamp = input_checksum(reader, source, cache), input_stamp(reader, source)
        shards = ["all"]
        if reader == "wikidata" and wikidata_shard is not None and wikidata_shard.kind != "all":
            shards = [f"{wikidata_shard.kind}:{wikidata_shard.start}:{wikidata_shard.end or ''}"]
        elif reader == "wikidata":
            shards = _wikidata_shards(source, sha, out_dir, shard_bytes, threads)
        jobs += [
            ShardJob(reader=reader, source=str(source), shard=s, sha256=sha, stamp=stamp) for s in shards
        ]
    return jobs


def _require_file(path: Path, what: str) -> None:
    if not path.is_file():
        raise FileNotFoundError(f"{what} not found: {path}")


def earlier_output(job: ShardJob, out_dir: Path, options: IngestOptions) -> IngestSummary | None:
    """The summary of an earlier run of this job with the same input and options, if its files are intact."""
    path = job.summary_file(out_dir)
    if not path.is_file():
        return None
    summary = read_summary(path, out_dir)
    same = (
        summary.source_sha256 == job.sha256
        and summary.options_fingerprint == options_fingerprint(options.for_job(job))
        and all(Path(o.path).is_file() for o in summary.outputs)
    )
    return summary if same else None


def ingest_shard(
    job: ShardJob, out_dir: Path, options: IngestOptions, *, skip_unchanged: bool = True
) -> ShardOutcome:
    """Run one job into ``out_dir`` (replacing its earlier output) unless that output is up to date.

    The job's checksum is the one planning computed (or found saved): the input is not hashed again here.
    Its stamp (size, mtime) is checked before and after the run instead, so a dump rewritten since it was
    planned, or while it was read, fails the job rather than mislabelling its output.
    """
    if skip_unchanged and (summary := earlier_output(job, out_dir, options)) is not None:
        log.info("%s unchanged since its last ingest: skipped", job.label)
        return ShardOutcome(job=job, skipped=True, summary=summary)
    source = Path(job.source)
    _check_stamp(job, "since it was planned: plan the ingest again")
    reader_options = options.for_job(job)
    if job.reader == "wikidata":
        summary = ingest_wikidata(
            source,
            out_dir,
            reader_options,  # type: ignore[arg-type]
            source_sha256=job.sha256,
            seek=_seek_reader(job, out_dir, options.wikidata.workers),
        )
    elif job.reader == "wikipedia":
        summary = ingest_wikipedia(source, out_dir, reader_options)  # type: ignore[arg-type]
    else:
        summary = ingest_ottqa(source, out_dir, reader_options, source_sha256=job.sha256)  # type: ignore[arg-type]
    _check_stamp(job, "while it was ingested: run the ingest again")
    if summary.source_sha256 != job.sha256:
        raise RuntimeError(f"{job.label} changed while it was ingested: run the ingest again")
    return ShardOutcome(job=job, skipped=False, summary=summary)


def _check_stamp(job: ShardJob, when: str) -> None:
    if job.stamp and input_stamp(job.reader, Path(job.source)) != job.stamp:
        raise RuntimeError(f"{job.label}: the input changed {when}")


def _seek_reader(job: ShardJob, out_dir: Path, threads: int) -> Callable[[int, int], Iterator[bytes]] | None:
    """How a byte shard of a compressed dump reaches its start: through the file's saved block index
    (built here, once, if planning did not), so it never decompresses the shards before its own."""
    shard = Shard.parse(job.shard)
    source = Path(job.source)
    if shard.kind != "bytes" or shard.start == 0 or detect_compression(source) == "none":
        return None
    folder = seek_dir(out_dir)
    try:
        index = seek_index(source, job.sha256, folder, threads=threads)
    except UnindexableArchive as exc:
        log.warning("%s; the shard decompresses the file from its start", exc)
        return None
    assert index is not None  # a compressed file has one

    def seek(offset: int, block: int) -> Iterator[bytes]:
        return read_from(source, index, folder, offset, block=block)

    return seek


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
        summary = read_summary(path, out_dir)
        for output in summary.outputs:
            Path(output.path).unlink(missing_ok=True)
        path.unlink()
        removed.append(path.name)
        log.info("removed the output of %s, which is no longer an input", summary.source)
    wanted = {sha for job in jobs for sha in job.sha256.split(":")}
    for sha, files in saved_indexes(seek_dir(out_dir)).items():
        if sha not in wanted:  # the block index of a dump no longer given (or since changed)
            for file in files:
                file.unlink(missing_ok=True)
    return removed
