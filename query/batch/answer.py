"""Answering one chunk job: one Parquet part of ``AnswerRecord`` rows, and a sidecar saying what it holds.

A part is written atomically and a re-run replaces it with the same rows (timings aside). The sidecar
(``ChunkResult``) lets a resumed run reuse a finished part of exactly the same work (``existing_part``)
instead of answering it again. Nothing of the input is lost: a rejected input line and a question whose
answering raised each become a row with ``error`` set.
"""

from __future__ import annotations

import json
import logging
import time
from collections.abc import Callable
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from ingest.files import write_text_atomic
from ingest.parquet_sink import ParquetSink
from query.batch.answerers import Answerer, open_answerer
from query.batch.plan import ChunkJob, engine_config_sha256
from query.batch.questions import QuestionEntry, read_questions
from schemas.answers import ANSWER_RECORD_SCHEMA, AnswerRecord, Question

log = logging.getLogger(__name__)


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
        return answer_range(job, questions.entries, answerer)
    answerer = open_job_answerer(job)
    try:
        return answer_range(job, questions.entries, answerer)
    finally:
        answerer.close()


def open_job_answerer(job: ChunkJob) -> Answerer:
    """The answerer the job was planned for, configured by the engine config file as it was planned."""
    if job.engine_config is not None:
        sha256 = engine_config_sha256(job.engine_config)
        if sha256 != job.engine_config_sha256:
            raise ValueError(
                f"engine config {job.engine_config} changed since the batch was planned "
                f"(sha256 {sha256[:12]}…, planned {(job.engine_config_sha256 or '')[:12]}…): plan it again"
            )
    return open_answerer(
        job.index_version_dir, job.k, name=job.answerer, engine_config=job.engine_config, reader=job.reader
    )


def answer_range(
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
    write_text_atomic(job.sidecar_path, result.model_dump_json(indent=2))
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
