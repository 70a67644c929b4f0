"""Combining a batch: the answered parts joined into one Parquet in input order, and the run's summary.

The parts must be one plan's, each range exactly once; the output has one row per input entry. The
planned index version is unpinned once the parts are combined. A run whose questions failed beyond
``max_failure_rate`` raises ``AnsweringFailed`` after writing every answer, so the failure is seen.
"""

from __future__ import annotations

import logging
import time
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.versions import VersionStore
from ingest.parquet_sink import ParquetSink
from query.batch.answer import READING_FAILURES, ChunkResult
from query.evaluation.metrics import percentile
from schemas.answers import ANSWER_RECORD_SCHEMA, AnswerRecord
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)


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


class AnsweringFailed(RuntimeError):
    """More of the questions asked failed than the run allows; the answers are written all the same."""


DEFAULT_MAX_FAILURE_RATE = HqaSettings.model_fields["answer_max_failure_rate"].default
"""Written once, in ``HqaSettings``."""


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
    VersionStore(first.index_version_dir.parent).unpin(first.index_version_dir, first.pin)
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
        "p50_ms": round(percentile(ordered, 50), 3),
        "p95_ms": round(percentile(ordered, 95), 3),
    }
