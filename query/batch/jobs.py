"""Batch question answering: a question file in, one Parquet of ``AnswerRecord`` rows out, in chunks.

The work is cut so an Airflow DAG can fan it out: ``plan_chunks`` (``query.batch.plan``) pins one index
version and cuts the input into ranges, ``answer_chunk`` (``query.batch.answer``) writes one part per
range (atomic, idempotent), ``combine_parts`` (``query.batch.combine``) joins the parts into one file in
input order and unpins the version. ``answer_file`` runs the same steps in one process and resumes from
the parts an interrupted run left behind.

Nothing of the input is lost: a malformed line becomes an output row with ``error`` set (naming
its line; see ``query.batch.questions``), and a question whose answering raised becomes a row with the
exception, so the output has exactly one row per input line, in input order.
"""

from __future__ import annotations

from pathlib import Path
from typing import Literal

from index.versions import resolve_index_dir
from ingest.progress import progress
from query.batch.answer import answer_range, existing_part, open_job_answerer
from query.batch.answerers import DEFAULT_K, Answerer
from query.batch.combine import DEFAULT_MAX_FAILURE_RATE, BatchSummary, combine_parts
from query.batch.plan import DEFAULT_CHUNK_SIZE, parts_dir_for, plan_questions
from query.batch.questions import read_questions


def answer_file(
    questions_path: Path,
    out_path: Path,
    index_dir: Path,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    *,
    k: int = DEFAULT_K,
    parts_dir: Path | None = None,
    engine_config: Path | None = None,
    reader: Literal["llm", "candidates"] | None = None,
    max_failure_rate: float | None = DEFAULT_MAX_FAILURE_RATE,
) -> BatchSummary:
    """The whole batch in this process, with a progress bar: plan, answer each chunk, combine.

    ``engine_config`` is the engine config file of the caller's settings (the CLI's
    ``HqaSettings.engine_config``); None = the engine's defaults: this function reads no settings.
    ``reader`` overrides the config's reader ("candidates" for the fast path).

    Resumable: a part an interrupted run left in ``parts_dir`` (default ``parts_dir_for(out_path)``)
    for the same question file, range, index version, answerer and engine config is reused, not
    recomputed (``BatchSummary.parts_reused`` counts them), unless it holds failures (see
    ``existing_part``). The answerer is opened only if a part is missing.
    """
    questions = read_questions(questions_path)
    parts_dir = Path(parts_dir) if parts_dir is not None else parts_dir_for(out_path)
    jobs = plan_questions(
        questions, resolve_index_dir(index_dir), parts_dir, chunk_size, k, engine_config, reader
    )
    results = []
    answerer: Answerer | None = None
    bar = progress("answer", total=len(questions.entries), unit="question")
    try:
        for job in jobs:
            result = existing_part(job)
            if result is None:
                if answerer is None:
                    answerer = open_job_answerer(job)
                result = answer_range(job, questions.entries, answerer, tick=bar.update)
            else:
                bar.update(result.rows)
            results.append(result)
    finally:
        bar.close()
        if answerer is not None:
            answerer.close()
    return combine_parts(results, out_path, max_failure_rate)
