"""The engine as shipped, end to end: the retrieve-read mode alone against the router over every mode.

Both rows reuse the retrieval pass the harness already made (``Trace``): ``retrieve-read`` re-ranks the
trace's pool with the engine's own configuration (bundled weights, no refitting) and reads it, which is
what the mode answers; ``router`` runs the configured router on the same understanding (intent and
links), with the retrieve-read mode answering from that reading instead of retrieving again. So the two
rows differ only where another mode answered, and the report counts how many questions each mode took.

Questions of a benchmark that labels their kind (a ``type`` field, as the KG question set does) also get
one row per kind, so a mode that helps one kind and hurts another shows.
"""

from __future__ import annotations

import re
import time
from collections import Counter
from dataclasses import dataclass

from ingest.progress import progress
from query.evaluation.metrics import (
    ConfigSummary,
    QuestionEval,
    evaluate_question,
    exact_match,
    summarize,
    token_f1,
)
from query.evaluation.runner import Evaluator
from query.evaluation.traces import Trace
from query.modes import Router, Understanding
from query.modes.retrieve_read import RetrieveReadMode
from schemas.query import QueryResult

RETRIEVE_READ = "retrieve-read"
ROUTER = "router"
DESCRIPTIONS = {
    RETRIEVE_READ: "engine as shipped, retrieve → re-rank (bundled weights) → read, no other mode",
    ROUTER: "engine as shipped, the router over the configured modes (retrieve-read as the fallback)",
}
TYPE_KEY = "type"
BARE_ID = re.compile(r"^[QPL][1-9]\d*$")
"""An answer that is an entity id, not a name: never acceptable, whatever the gold says."""


@dataclass
class _TracePipeline:
    """The retrieve-read mode's pipeline answering from a reading already made for this trace."""

    result: QueryResult
    index_version: str

    def answer(self, understanding: Understanding) -> QueryResult:
        return self.result


def route_evals(evaluator: Evaluator, traces: list[Trace]) -> dict[str, list[QuestionEval]]:
    """Per question: the retrieve-read mode's eval and the router's (with the mode that answered)."""
    out: dict[str, list[QuestionEval]] = {RETRIEVE_READ: [], ROUTER: []}
    bar = progress("eval router", total=len(traces), unit="question")
    for trace in traces:
        plain, routed = _route_one(evaluator, trace)
        out[RETRIEVE_READ].append(plain)
        out[ROUTER].append(routed)
        bar.update(1)
    bar.close()
    return out


def _route_one(evaluator: Evaluator, trace: Trace) -> tuple[QuestionEval, QuestionEval]:
    engine = evaluator.engine
    staged = trace.staged
    if staged is None:
        failed = QuestionEval.failed(trace.question.id, RETRIEVE_READ, trace.error or "no retrieval pass")
        return failed, failed.model_copy(update={"config": ROUTER})
    started = time.perf_counter()
    pipeline = engine.pipeline
    staged = pipeline.rerank(
        staged.with_rows({r.evidence_id: r for r in pipeline.store.get(staged.rankings["fused"])})
    )
    read = pipeline.read(staged)
    choice = read.choice
    read_ms = (time.perf_counter() - started) * 1000
    final = staged.rankings["final"]
    order = staged.rankings.get("rerank2", staged.rankings["rerank1"])
    trace.rankings[RETRIEVE_READ] = final + [e for e in order if e not in set(final)]
    plain = evaluator.evaluate(trace, RETRIEVE_READ, read=False)
    plain = _with_answer(plain, trace, choice.answer, not choice.unknown, RETRIEVE_READ)
    plain.timings_ms.pop("total", None)
    plain.timings_ms["features"] = trace.timings.get("features", 0.0)
    plain.timings_ms["rerank_and_read"] = read_ms
    plain.timings_ms["total"] = sum(plain.timings_ms.values())
    understanding = Understanding(staged.question, staged.intent, staged.links, {})
    fallback = pipeline.result(staged, read)  # with its evidence: the mode's guard reads the cited rows
    modes = [
        RetrieveReadMode(_TracePipeline(fallback, engine.index_version), m.guard)
        if isinstance(m, RetrieveReadMode)
        else m
        for m in engine.router.modes
    ]
    started = time.perf_counter()
    result = Router(modes).run(understanding)
    route_ms = (time.perf_counter() - started) * 1000
    if result.mode == RETRIEVE_READ and result.unknown == choice.unknown:  # as read, not refused after
        routed = plain.model_copy(update={"config": ROUTER, "mode": RETRIEVE_READ}, deep=True)
        routed.timings_ms["route"] = route_ms  # the modes that declined before retrieve-read answered
        routed.timings_ms["total"] += route_ms
        return plain.model_copy(update={"mode": RETRIEVE_READ}), routed
    timings = {t.stage: t.ms for t in result.timings} | {"intent": trace.timings.get("intent", 0.0)}
    timings["linking"] = trace.timings.get("linking", 0.0)
    timings["total"] = sum(timings.values())
    routed = evaluate_question(
        trace.question,
        ROUTER,
        evidence_texts=[e.text for e in result.evidence],
        prediction="" if result.unknown else result.answer,
        answered=not result.unknown,
        timings_ms=timings,
    )
    routed.mode = result.mode
    return plain.model_copy(update={"mode": RETRIEVE_READ}), routed


def _with_answer(base: QuestionEval, trace: Trace, answer: str, answered: bool, config: str) -> QuestionEval:
    golds = trace.question.answer_texts()
    return base.model_copy(
        update={
            "config": config,
            "prediction": answer if answered else "",
            "answered": answered,
            "em": exact_match(answer, golds) if answered else 0.0,
            "f1": token_f1(answer, golds) if answered else 0.0,
        }
    )


def route_summaries(
    evals: dict[str, list[QuestionEval]], traces: list[Trace], reader: str = "candidates"
) -> list[ConfigSummary]:
    """The two rows over every question, then one pair per question type when the benchmark has types.
    ``reader``: who read the answers (the engine config's reader), named in every row's description."""
    kinds = {t.question.id: t.question.meta.get(TYPE_KEY) for t in traces}
    described = {config: f"{text}; answers read by {reader}" for config, text in DESCRIPTIONS.items()}
    out = []
    for config, rows in evals.items():
        out.append(_summary(config, described[config], rows))
    for kind in sorted({k for k in kinds.values() if k}):
        for config, rows in evals.items():
            subset = [e.model_copy(update={"config": f"{config}/{TYPE_KEY}={kind}"}) for e in rows]
            subset = [e for e in subset if kinds.get(e.question_id) == kind]
            out.append(
                _summary(f"{config}/{TYPE_KEY}={kind}", f"{described[config]}; {kind} questions", subset)
            )
    return out


def _summary(config: str, description: str, rows: list[QuestionEval]) -> ConfigSummary:
    renamed = [e.model_copy(update={"config": config}) for e in rows]
    summary = summarize(config, description, renamed)
    summary.modes = dict(Counter(e.mode or "none" for e in rows))
    summary.bare_id_answers = sum(bool(e.answered and BARE_ID.match(e.prediction.strip())) for e in rows)
    return summary
