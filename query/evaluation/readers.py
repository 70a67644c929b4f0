"""The reader as an evaluation axis: the same retrieval, read by the candidate reader and by each LLM.

Every question is retrieved and re-ranked once (the harness's trace, the engine as shipped), then read
by each reader in turn, so the rows differ only in the reading. Reading with an LLM takes seconds a
question, so each reader's per-question results are appended to ``<out>/readers/<reader>.jsonl`` as
they come and a rerun with the same ``--out`` picks up where the last one stopped.

The questions are split into a tuning fold and a report fold (a seeded shuffle): the confidence
threshold under which an LLM reader says "unknown" is chosen on the tuning fold and applied to the
report fold, and the report fold's rows are the figures to quote.
"""

from __future__ import annotations

import json
import random
import time
from collections import Counter
from collections.abc import Sequence
from pathlib import Path

from ingest.progress import progress
from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.metrics import (
    ConfigSummary,
    QuestionEval,
    calibrate_threshold,
    exact_match,
    first_presence_rank,
    normalize_answer,
    summarize,
    token_f1,
)
from query.evaluation.runner import Evaluator
from query.evaluation.traces import Trace
from query.llm.chat import Llm
from query.read.base import Reader
from query.read.llm_reader import LlmReader
from query.read.readers import CANDIDATES

READER_PREFIX = "reader="
TUNE, REPORT = "tune", "report"


def sample_questions(questions: Sequence[BenchmarkQuestion], n: int, seed: int) -> list[BenchmarkQuestion]:
    """A fixed random sample of ``n`` questions (all when fewer), in benchmark order."""
    if n >= len(questions):
        return list(questions)
    picked = set(random.Random(seed).sample(range(len(questions)), n))
    return [q for i, q in enumerate(questions) if i in picked]


def folds(questions: Sequence[BenchmarkQuestion], tune_share: float, seed: int) -> dict[str, str]:
    """Question id → "tune" or "report": a seeded shuffle, the first ``tune_share`` of it for tuning."""
    ids = [q.id for q in questions]
    random.Random(seed + 1).shuffle(ids)
    cut = round(len(ids) * tune_share)
    return {qid: (TUNE if i < cut else REPORT) for i, qid in enumerate(ids)}


def open_readers(evaluator: Evaluator, names: Sequence[str]) -> dict[str, Reader]:
    """Each named reader: "candidates", or an LLM reader on that backend with the engine's reader
    settings (the engine's own LLM reader when it already uses that backend)."""
    engine = evaluator.engine
    readers: dict[str, Reader] = {}
    for name in names:
        if name == CANDIDATES:
            readers[name] = engine.pipeline.candidates
        elif isinstance(engine.pipeline.reader, LlmReader) and engine.pipeline.reader.llm.name == name:
            readers[name] = engine.pipeline.reader
        else:
            settings = engine.config.llm.model_copy(update={"backend": name})
            settings = type(settings).model_validate(settings.model_dump())
            llm = Llm.open(settings.in_state_dir(engine.state_dir))
            readers[name] = LlmReader(llm, engine.pipeline.candidates, engine.config.llm_reader)
    return readers


def reader_evals(
    evaluator: Evaluator, traces: list[Trace], readers: dict[str, Reader], cache_dir: Path
) -> dict[str, list[QuestionEval]]:
    """Per reader, one eval per trace; results already in ``cache_dir`` are reused, new ones appended."""
    cache_dir.mkdir(parents=True, exist_ok=True)
    done = {name: _load(cache_dir / f"{name}.jsonl") for name in readers}
    todo = [t for t in traces if any(t.question.id not in done[name] for name in readers)]
    bar = progress("eval readers", total=len(todo) * len(readers), unit="read")
    for trace in todo:
        staged = trace.staged
        if staged is not None:
            pipeline = evaluator.engine.pipeline
            rows = {r.evidence_id: r for r in pipeline.store.get(staged.rankings["fused"])}
            trace.staged = staged = pipeline.rerank(staged.with_rows(rows))
        for name, reader in readers.items():
            if trace.question.id in done[name]:
                continue
            evaluation = _read_one(evaluator, trace, name, reader)
            done[name][trace.question.id] = evaluation
            with open(cache_dir / f"{name}.jsonl", "a") as f:
                f.write(evaluation.model_dump_json() + "\n")
            bar.update(1)
        if staged is not None:
            trace.staged = staged.with_rows({})
    bar.close()
    return {name: [done[name][t.question.id] for t in traces] for name in readers}


def _load(path: Path) -> dict[str, QuestionEval]:
    if not path.is_file():
        return {}
    out = {}
    for line in path.read_text().splitlines():
        if line.strip():
            evaluation = QuestionEval.model_validate_json(line)
            out[evaluation.question_id] = evaluation
    return out


def _read_one(evaluator: Evaluator, trace: Trace, name: str, reader: Reader) -> QuestionEval:
    config = READER_PREFIX + name
    staged = trace.staged
    if staged is None:
        return QuestionEval.failed(trace.question.id, config, trace.error or "no retrieval pass")
    engine = evaluator.engine
    started = time.perf_counter()
    read = engine.pipeline.read(staged, reader)
    ms = (time.perf_counter() - started) * 1000
    choice, reading = read.choice, read.reading
    final = staged.rankings["final"]
    golds = trace.question.answer_texts()
    answered = not choice.unknown
    prediction = choice.answer if answered else ""
    holders = [staged.rows[e].text for e in choice.supporting if e in staged.rows]
    cites = None
    if answered:
        wanted = normalize_answer(prediction)
        cites = bool(wanted) and any(wanted in normalize_answer(text) for text in holders)
    raw = reading.raw_answer if reading is not None and reading.raw_answer else choice.answer
    return QuestionEval(
        question_id=trace.question.id,
        config=config,
        presence_rank=first_presence_rank([staged.rows[e].text for e in final], golds),
        pool_size=len(final),
        has_gold_table=trace.question.gold_table_id is not None,
        prediction=prediction,
        answered=answered,
        em=exact_match(prediction, golds) if answered else 0.0,
        f1=token_f1(prediction, golds) if answered else 0.0,
        timings_ms={"read": ms, "total": ms},
        confidence=choice.confidence if answered else None,
        candidate_em=exact_match(choice.answer if answered else raw, golds),
        prompt_tokens=reading.prompt_tokens if reading is not None else 0,
        completion_tokens=reading.completion_tokens if reading is not None else 0,
        read_outcome=reading.outcome if reading is not None else None,
        cites_answer=cites,
    )


def reader_summaries(
    evals: dict[str, list[QuestionEval]], fold_of: dict[str, str], describe: dict[str, str]
) -> list[ConfigSummary]:
    """Per reader: all questions, the tuning fold, the report fold, and the report fold answered only
    above the confidence threshold chosen on the tuning fold."""
    out = []
    for name, rows in evals.items():
        config = READER_PREFIX + name
        out.append(_summary(config, describe[name], rows))
        tune = [e for e in rows if fold_of.get(e.question_id) == TUNE]
        report = [e for e in rows if fold_of.get(e.question_id) == REPORT]
        if not tune or not report:
            continue
        out.append(_summary(f"{config}/fold={TUNE}", f"{describe[name]}; tuning fold", tune))
        out.append(_summary(f"{config}/fold={REPORT}", f"{describe[name]}; report fold", report))
        calibrated = [e for e in tune if e.confidence is not None]
        if calibrated and name != CANDIDATES:
            chosen = calibrate_threshold(calibrated).chosen
            gated = [_gate(e, chosen) for e in report]
            out.append(
                _summary(
                    f"{config}/fold={REPORT}/threshold={chosen:g}",
                    f"{describe[name]}; report fold, 'unknown' under confidence {chosen:g} "
                    "(chosen on the tuning fold)",
                    gated,
                )
            )
    return out


def _gate(e: QuestionEval, threshold: float) -> QuestionEval:
    if not e.answered or (e.confidence or 0.0) >= threshold:
        return e
    return e.model_copy(update={"answered": False, "prediction": "", "em": 0.0, "f1": 0.0})


def _summary(config: str, description: str, rows: list[QuestionEval]) -> ConfigSummary:
    renamed = [e.model_copy(update={"config": config}) for e in rows]
    summary = summarize(config, description, renamed)
    read = [e for e in rows if e.error is None]
    if any(e.read_outcome for e in read):
        summary.tokens = {
            "prompt": sum(e.prompt_tokens for e in read) / len(read),
            "completion": sum(e.completion_tokens for e in read) / len(read),
        }
        summary.read_outcomes = dict(Counter(e.read_outcome or "none" for e in read))
    answered = [e for e in read if e.answered and e.cites_answer is not None]
    if answered:
        summary.cites_answer = sum(bool(e.cites_answer) for e in answered) / len(answered)
    return summary


def write_sample(path: Path, questions: Sequence[BenchmarkQuestion], fold_of: dict[str, str], seed: int):
    """The sample's ids and folds, so the figures can be reproduced question for question."""
    path.parent.mkdir(parents=True, exist_ok=True)
    rows = [{"id": q.id, "fold": fold_of.get(q.id)} for q in questions]
    path.write_text(json.dumps({"seed": seed, "questions": rows}, indent=1) + "\n")
