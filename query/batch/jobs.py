"""Batch question answering: a question file in, one Parquet of ``AnswerRecord`` rows out, in chunks.

The work is cut so an Airflow DAG can fan it out: ``plan_chunks`` pins one index version and cuts
the input into ranges, ``answer_chunk`` writes one part per range (atomic, idempotent),
``combine_parts`` joins the parts into one file in input order; the planned version is pinned
against ``prune`` (``VersionStore.pin``) until then. ``answer_file`` runs the same steps
in one process and resumes from the parts an interrupted run left behind.

Nothing of the input is lost: a malformed line becomes an output row with ``error`` set (naming
its line; see ``query.batch.questions``), and a question whose answering raised becomes a row with the
exception, so the output has exactly one row per input line, in input order.
"""

from __future__ import annotations

import hashlib
import json
import logging
import math
import os
import time
from collections.abc import Callable
from pathlib import Path
from typing import Literal

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.versions import VersionStore, resolve_index_dir
from ingest.parquet_sink import ParquetSink
from ingest.progress import progress
from query.batch.answerers import BATCH_ANSWERER, DEFAULT_K, Answerer, open_answerer
from query.batch.questions import QuestionEntry, QuestionFile, read_questions
from schemas.answers import ANSWER_RECORD_SCHEMA, AnswerRecord, Question
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

DEFAULT_CHUNK_SIZE = 100


class ChunkJob(BaseModel):
    """One range of a question file for one worker; everything it needs travels in the job as values."""

    questions_path: Path
    questions_sha256: str = Field(description="the file as planned: a chunk of a changed file fails")
    index_version_dir: Path = Field(description="resolved once when planning: every chunk uses this version")
    index_version: str
    answerer: str = BATCH_ANSWERER
    engine_config: Path | None = Field(
        None, description="engine config file of the planner's settings, resolved; None = the defaults"
    )
    engine_config_sha256: str | None = Field(None, description="that file as planned: a changed one fails")
    reader: Literal["llm", "candidates"] | None = Field(
        None, description="who reads the answers, overriding the engine config's reader; None = the config's"
    )
    k: int = Field(DEFAULT_K, ge=1, description="evidence kept per question")
    start: int = Field(ge=0, description="first entry, 0-based, rejected entries included")
    stop: int = Field(description="one past the last entry")
    total: int = Field(description="entries in the whole file, so a missing part is noticed")
    part: int = Field(ge=0)
    parts_dir: Path

    @property
    def part_path(self) -> Path:
        return self.parts_dir / f"part-{self.part:05d}.parquet"

    @property
    def sidecar_path(self) -> Path:
        """The ``ChunkResult`` of the finished part, which says what work the part holds (for resuming)."""
        return self.parts_dir / f"part-{self.part:05d}.json"


READING_FAILURES = (
    "questions the LLM reader could not read (server down or erring, output broken twice, model not "
    "loaded: reading outcome 'error' or 'unavailable'); the candidate reader answered them"
)
FAILED_READINGS = ("error", "unavailable")


class ChunkResult(BaseModel):
    job: ChunkJob
    path: Path
    rows: int
    answered: int
    unknown: int
    errors: int
    failed: int = Field(0, description="questions whose answering raised (rejected input lines not counted)")
    reading_failures: int = Field(0, description=READING_FAILURES)
    seconds: float = Field(description="time the part took to answer, when it was computed")
    reused: bool = Field(False, description="an existing part of the same work was taken as is")


class BatchSummary(BaseModel):
    out_path: Path
    questions_path: Path
    index_version: str
    answerer: str
    engine_config: Path | None = Field(None, description="the engine config file the answers were made with")
    questions: int = Field(description="output rows: one per input entry, rejected ones included")
    answered: int
    unknown: int = Field(description="answered without error but without an answer")
    errors: int = Field(description="rejected input entries and questions whose answering raised")
    failed: int = Field(0, description="questions whose answering raised")
    reading_failures: int = Field(0, description=READING_FAILURES)
    seconds: float = Field(description="answering time summed over parts (reused: their first run) + combine")
    mean_ms: float | None = Field(None, description="per question with timings (stages summed)")
    p50_ms: float | None = None
    p95_ms: float | None = None
    parts: int
    parts_reused: int


def plan_chunks(
    questions_path: Path,
    index_dir: Path,
    parts_dir: Path,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    k: int = DEFAULT_K,
    *,
    engine_config: Path | None = None,
    reader: Literal["llm", "candidates"] | None = None,
) -> list[ChunkJob]:
    """Cut the question file into jobs of ``chunk_size`` entries, all on the index version current now.

    ``index_dir`` is resolved here, once, so a rebuild that publishes mid-run does not mix versions.
    ``engine_config`` (the caller's ``HqaSettings.engine_config``; None = the engine's defaults) is
    resolved and checksummed here too, and travels in every job to the workers that answer them, with
    ``reader`` when the caller overrides the config's reader.
    """
    questions = read_questions(questions_path)
    return _plan(
        questions, resolve_index_dir(index_dir), Path(parts_dir), chunk_size, k, engine_config, reader
    )


def pin_holder(parts_dir: Path) -> str:
    """The name a batch run pins its index version under: one per parts folder, so a resumed run re-pins
    its own pin rather than adding one."""
    return "batch-" + hashlib.sha256(str(Path(parts_dir).resolve()).encode()).hexdigest()[:16]


def _check_chunk_size(chunk_size: int) -> None:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")


def _engine_config_sha256(path: Path) -> str:
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise FileNotFoundError(
            f"engine config {path} cannot be read ({exc.strerror}): fix engine_config in the settings"
        ) from exc


def _plan(
    questions: QuestionFile,
    version_dir: Path,
    parts_dir: Path,
    chunk_size: int,
    k: int,
    engine_config: Path | None,
    reader: Literal["llm", "candidates"] | None = None,
) -> list[ChunkJob]:
    _check_chunk_size(chunk_size)
    store = VersionStore(version_dir.parent)
    version = store.manifest(version_dir).version
    # pinned until combine_parts: chunks may open the version long after rebuilds have published newer ones
    store.pin(version_dir, pin_holder(parts_dir))
    total = len(questions.entries)
    # resolved now: the workers that answer may run elsewhere, in another working directory
    config = Path(engine_config).resolve() if engine_config is not None else None
    config_sha256 = _engine_config_sha256(config) if config is not None else None
    return [
        ChunkJob(
            questions_path=questions.path,
            questions_sha256=questions.sha256,
            index_version_dir=version_dir,
            index_version=version,
            engine_config=config,
            engine_config_sha256=config_sha256,
            reader=reader,
            k=k,
            start=start,
            stop=min(start + chunk_size, total),
            total=total,
            part=part,
            parts_dir=parts_dir,
        )
        for part, start in enumerate(range(0, total, chunk_size))
    ]


def answer_chunk(job: ChunkJob, answerer: Answerer | None = None) -> ChunkResult:
    """Answer one range and write it to ``job.part_path`` (atomic; a re-run replaces it with the same rows).

    Without ``answerer``, one is opened on the job's index version and closed again. Rows of a re-run
    are the same except for the measured timings.
    """
    questions = read_questions(job.questions_path)
    if questions.sha256 != job.questions_sha256:
        raise ValueError(
            f"{job.questions_path} changed since the batch was planned "
            f"(sha256 {questions.sha256[:12]}…, planned {job.questions_sha256[:12]}…): plan it again"
        )
    if answerer is not None:
        return _answer_range(job, questions.entries, answerer)
    answerer = _open_job_answerer(job)
    try:
        return _answer_range(job, questions.entries, answerer)
    finally:
        answerer.close()


def _open_job_answerer(job: ChunkJob) -> Answerer:
    """The answerer the job was planned for, configured by the engine config file as it was planned."""
    if job.engine_config is not None:
        sha256 = _engine_config_sha256(job.engine_config)
        if sha256 != job.engine_config_sha256:
            raise ValueError(
                f"engine config {job.engine_config} changed since the batch was planned "
                f"(sha256 {sha256[:12]}…, planned {(job.engine_config_sha256 or '')[:12]}…): plan it again"
            )
    return open_answerer(
        job.index_version_dir, job.k, name=job.answerer, engine_config=job.engine_config, reader=job.reader
    )


def _answer_range(
    job: ChunkJob,
    entries: list[QuestionEntry],
    answerer: Answerer,
    tick: Callable[[int], object] | None = None,
) -> ChunkResult:
    if (answerer.name, answerer.index_version) != (job.answerer, job.index_version):
        raise ValueError(
            f"answerer {answerer.name!r} on index version {answerer.index_version} cannot answer part "
            f"{job.part}, planned for {job.answerer!r} on {job.index_version}"
        )
    started = time.perf_counter()
    records, failed = [], 0
    for entry in entries[job.start : job.stop]:
        records.append(_answer_entry(entry, answerer))
        failed += entry.error is None and records[-1].error is not None
        if tick is not None:
            tick(1)
    job.sidecar_path.unlink(missing_ok=True)  # no stale claim about the part while it is rewritten
    with ParquetSink(job.part_path, AnswerRecord) as sink:
        sink.extend([r.model_dump() for r in records])
    result = ChunkResult(
        job=job,
        path=job.part_path,
        rows=len(records),
        **_outcomes(records),
        failed=failed,
        seconds=round(time.perf_counter() - started, 3),
    )
    _write_atomic(job.sidecar_path, result.model_dump_json(indent=2))
    return result


def _answer_entry(entry: QuestionEntry, answerer: Answerer) -> AnswerRecord:
    """The answer row for one entry; a rejected entry or a failing question becomes an error row."""
    if entry.error is not None:
        return _error_record(entry, answerer, f"rejected input line {entry.line}: {entry.error}")
    try:
        return answerer.answer(Question(id=entry.id, question=entry.question))
    except Exception as exc:  # one bad question must not sink the other answers of its chunk
        log.warning("question %s (line %d) failed: %s: %s", entry.id, entry.line, type(exc).__name__, exc)
        return _error_record(entry, answerer, f"{type(exc).__name__}: {exc}")


def _error_record(entry: QuestionEntry, answerer: Answerer, error: str) -> AnswerRecord:
    return AnswerRecord(
        question_id=entry.id or "",
        question=entry.question or "",
        index_version=answerer.index_version,
        answerer=answerer.name,
        error=error,
    )


def _outcomes(records: list[AnswerRecord]) -> dict[str, int]:
    errors = sum(r.error is not None for r in records)
    answered = sum(r.error is None and r.answer is not None for r in records)
    failed_readings = sum(
        r.reading is not None and json.loads(r.reading).get("outcome") in FAILED_READINGS for r in records
    )
    return {
        "answered": answered,
        "unknown": len(records) - answered - errors,
        "errors": errors,
        "reading_failures": failed_readings,
    }


def _write_atomic(path: Path, text: str) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_text(text)
    os.replace(tmp, path)


def existing_part(job: ChunkJob) -> ChunkResult | None:
    """The finished part of exactly this work (same question file, range, index version, answerer,
    engine config, k), in the ``AnswerRecord`` shape of this code.

    Returns None when the part must be (re)computed: no part, no sidecar, either from other work, a
    part an older version wrote with other columns (``combine_parts`` would refuse it), or a part with
    questions that raised or LLM readings that failed: the cause (a server down, an index being
    copied) may be gone by the re-run, and keeping the part would keep its failures.
    """
    if not (job.part_path.is_file() and job.sidecar_path.is_file()):
        return None
    try:
        saved = ChunkResult.model_validate_json(job.sidecar_path.read_text())
        part = pq.ParquetFile(job.part_path)
        rows, schema = part.metadata.num_rows, part.schema_arrow
    except (ValueError, OSError, pa.ArrowInvalid):
        return None
    if _work(saved.job) != _work(job) or rows != saved.rows or rows != job.stop - job.start:
        return None
    if not schema.equals(ANSWER_RECORD_SCHEMA, check_metadata=False):
        log.info("%s has columns of another AnswerRecord version: answering it again", job.part_path)
        return None
    if saved.failed or saved.reading_failures:
        log.info(
            "%s has %d failed questions and %d failed readings: answering it again",
            job.part_path,
            saved.failed,
            saved.reading_failures,
        )
        return None
    return saved.model_copy(update={"job": job, "path": job.part_path, "reused": True})


def _work(job: ChunkJob) -> dict:
    """What makes two jobs the same work; paths are left out (the same file may be named differently)."""
    return job.model_dump(
        include={
            "questions_sha256",
            "index_version",
            "answerer",
            "engine_config_sha256",
            "reader",
            "k",
            "start",
            "stop",
            "total",
            "part",
        }
    )


class AnsweringFailed(RuntimeError):
    """More of the questions asked failed than the run allows; the answers are written all the same."""


DEFAULT_MAX_FAILURE_RATE = 0.1


def combine_parts(
    results: list[ChunkResult], out_path: Path, max_failure_rate: float | None = DEFAULT_MAX_FAILURE_RATE
) -> BatchSummary:
    """Write all parts as one Parquet in question order (atomic), then delete the parts.

    Refuses parts of different plans (question file, index version, answerer, engine config) or a gap
    in the ranges. Then, like ingest's error-rate limit, fails the run (``AnsweringFailed``) when more
    than ``max_failure_rate`` of the questions asked raised — an engine that cannot open its index
    would otherwise end "successfully" with every row an error. Rejected input lines are not counted:
    they are the input's errors, reported when it is read.
    """
    started = time.perf_counter()
    ordered = _check_complete(results)
    out_path = Path(out_path)
    row_ms: list[float] = []
    first_failure = None
    with ParquetSink(out_path, AnswerRecord) as sink:
        for result in ordered:
            table = _read_part(result)
            row_ms.extend(_question_ms(table))
            if first_failure is None and result.failed:
                first_failure = next(
                    e for e in table["error"].to_pylist() if e and not e.startswith("rejected input line")
                )
            sink.write_table(table)
    _remove_parts(ordered)
    first = ordered[0].job
    VersionStore(first.index_version_dir.parent).unpin(first.index_version_dir, pin_holder(first.parts_dir))
    summary = BatchSummary(
        out_path=out_path,
        questions_path=first.questions_path,
        index_version=first.index_version,
        answerer=first.answerer,
        engine_config=first.engine_config,
        questions=sum(r.rows for r in ordered),
        answered=sum(r.answered for r in ordered),
        unknown=sum(r.unknown for r in ordered),
        errors=sum(r.errors for r in ordered),
        seconds=round(sum(r.seconds for r in ordered) + time.perf_counter() - started, 3),
        **_latency(row_ms),
        failed=sum(r.failed for r in ordered),
        reading_failures=sum(r.reading_failures for r in ordered),
        parts=len(ordered),
        parts_reused=sum(r.reused for r in ordered),
    )
    log.info("answered %s: %s", out_path, summary.model_dump(mode="json"))
    if summary.reading_failures:  # the run goes on (the candidate reader answered), but not unnoticed
        log.warning(
            "the LLM reader failed on %d questions, which the candidate reader answered; each row's "
            "reading column says why",
            summary.reading_failures,
        )
    asked = summary.answered + summary.unknown + summary.failed
    if max_failure_rate is not None and asked and summary.failed / asked > max_failure_rate:
        raise AnsweringFailed(
            f"{summary.failed} of {asked} questions failed, over the limit of {max_failure_rate:.0%} "
            f"(first: {first_failure}); every answer and error is written to {out_path}: fix the cause "
            "and run the batch again"
        )
    return summary


def _check_complete(results: list[ChunkResult]) -> list[ChunkResult]:
    """The results in question order, after checking they are one plan's parts, each exactly once."""
    if not results:
        raise ValueError("no chunk results to combine")
    plans = {
        (r.job.questions_sha256, r.job.index_version, r.job.answerer, r.job.engine_config_sha256, r.job.total)
        for r in results
    }
    if len(plans) > 1:
        raise ValueError(
            "parts come from different plans (question file, index version, answerer, engine config): "
            f"{plans}"
        )
    ordered = sorted(results, key=lambda r: r.job.start)
    position = 0
    for result in ordered:
        if result.job.start != position:
            raise ValueError(
                f"part {result.job.part} starts at entry {result.job.start}, expected {position}: "
                "a part is missing or given twice"
            )
        position = result.job.stop
    if position != ordered[0].job.total:
        raise ValueError(f"parts cover entries 0..{position} of {ordered[0].job.total}: the last are missing")
    return ordered


def _read_part(result: ChunkResult) -> pa.Table:
    table = pq.read_table(result.path)
    if not table.schema.equals(ANSWER_RECORD_SCHEMA, check_metadata=False) or table.num_rows != result.rows:
        raise ValueError(
            f"{result.path} does not hold the {result.rows} AnswerRecord rows its result claims: "
            "answer that chunk again"
        )
    return table


def _question_ms(table: pa.Table) -> list[float]:
    """Stage timings summed per question; rows without timings (rejected input) are not questions asked."""
    return [sum(t["ms"] for t in timings) for timings in table["timings"].to_pylist() if timings]


def _remove_parts(results: list[ChunkResult]) -> None:
    for result in results:
        result.path.unlink(missing_ok=True)
        result.job.sidecar_path.unlink(missing_ok=True)
    for parts_dir in {r.job.parts_dir for r in results}:
        try:
            parts_dir.rmdir()
        except OSError:
            log.debug("%s kept: it holds other files", parts_dir)


def _latency(row_ms: list[float]) -> dict[str, float | None]:
    if not row_ms:
        return {"mean_ms": None, "p50_ms": None, "p95_ms": None}
    ordered = sorted(row_ms)
    return {
        "mean_ms": round(sum(ordered) / len(ordered), 3),
        "p50_ms": round(_percentile(ordered, 0.50), 3),
        "p95_ms": round(_percentile(ordered, 0.95), 3),
    }


def _percentile(ordered: list[float], q: float) -> float:
    """Linear interpolation between the closest ranks (numpy's default method), on sorted values."""
    position = (len(ordered) - 1) * q
    low = math.floor(position)
    high = min(low + 1, len(ordered) - 1)
    return ordered[low] + (ordered[high] - ordered[low]) * (position - low)


def parts_dir_for(out_path: Path) -> Path:
    """Where ``answer_file`` keeps the parts of ``out_path`` until they are combined (beside it, hidden)."""
    out_path = Path(out_path)
    return out_path.with_name(f".{out_path.name}.parts")


def answer_file(
    questions_path: Path,
    out_path: Path,
    index_dir: Path,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    *,
    k: int = DEFAULT_K,
    parts_dir: Path | None = None,
    settings: HqaSettings | None = None,
    reader: Literal["llm", "candidates"] | None = None,
    max_failure_rate: float | None = DEFAULT_MAX_FAILURE_RATE,
) -> BatchSummary:
    """The whole batch in this process, with a progress bar: plan, answer each chunk, combine.

    ``settings`` are the caller's (the CLI's, with its ``--config`` file); their ``engine_config``
    configures the engine. None = the engine's defaults: this function reads no settings of its own.
    ``reader`` overrides the config's reader ("candidates" for the fast path).

    Resumable: a part an interrupted run left in ``parts_dir`` (default ``parts_dir_for(out_path)``)
    for the same question file, range, index version, answerer and engine config is reused, not
    recomputed (``BatchSummary.parts_reused`` counts them), unless it holds failures (see
    ``existing_part``). The answerer is opened only if a part is missing.
    """
    questions = read_questions(questions_path)
    parts_dir = Path(parts_dir) if parts_dir is not None else parts_dir_for(out_path)
    engine_config = settings.engine_config if settings is not None else None
    jobs = _plan(questions, resolve_index_dir(index_dir), parts_dir, chunk_size, k, engine_config, reader)
    results = []
    answerer: Answerer | None = None
    bar = progress("answer", total=len(questions.entries), unit="question")
    try:
        for job in jobs:
            result = existing_part(job)
            if result is None:
                if answerer is None:
                    answerer = _open_job_answerer(job)
                result = _answer_range(job, questions.entries, answerer, tick=bar.update)
            else:
                bar.update(result.rows)
            results.append(result)
    finally:
        bar.close()
        if answerer is not None:
            answerer.close()
    return combine_parts(results, out_path, max_failure_rate)
