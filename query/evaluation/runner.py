"""The evaluation harness: run the engine over a benchmark once, measure every stage and ablation from it.

The plain BM25 baseline (``query.evaluation.baseline``) is searched beside the engine. ``Evaluator``
runs one retrieval pass per question (``query.evaluation.passes``), cross-fits the learned stage-one
ranker and answer scorer on folds (``query.evaluation.crossfit``), derives every configuration's
ranking from the pass, reads the answers and summarizes each configuration. Source ablations restrict
the retrievers to some source types and need a pass of their own each, run beside the main pass in a
second process. A run's passes can be kept and reloaded (``query.evaluation.traces``).
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import time
from concurrent.futures import ProcessPoolExecutor
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from ingest.progress import progress
from query.config import EngineConfig
from query.engine import Engine
from query.evaluation.baseline import PlainBm25
from query.evaluation.crossfit import assign_folds, fold_answer_scorers, fold_rankers
from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.metrics import (
    ConfigSummary,
    QuestionEval,
    exact_match,
    gold_table_rank,
    summarize,
    token_f1,
)
from query.evaluation.passes import (
    DESCRIPTIONS,
    config_timings,
    retrieval_trace,
    stage_one_rankings,
    stage_two_rankings,
)
from query.evaluation.traces import Trace, load_traces
from query.read.scoring import AnswerScorer
from query.rerank.stage_one import LinearRanker
from schemas.evidence import SourceType

log = logging.getLogger(__name__)


class EvalSettings(BaseModel):
    folds: int = Field(2, ge=2, description="cross-fitting folds of the learned ranker")
    seed: int = 13
    stage2: bool = Field(True, description="score the stage-two ablation (the slow one)")
    stage2_weights: list[float] = Field(
        default_factory=lambda: [0.5, 0.2],
        min_length=1,
        description="pair score's shares in the stage-two mix; the first is the 'rerank2' row",
    )
    stage2_scorer: str = Field(
        "late-interaction", description="pair scorer of the ablation when the engine config has none"
    )
    source_ablations: list[list[SourceType]] = Field(
        default_factory=lambda: [["text"], ["table"]], description="source sets run as passes of their own"
    )
    head_sizes: list[int] = Field(
        default_factory=lambda: [300, 1000], description="other fused heads for stage one to re-order"
    )
    answer_configs: list[str] = Field(
        default_factory=lambda: ["rrf-all", "rerank1-hand", "rerank1-learned", "rerank2"],
        description="read for EM/F1",
    )


class Evaluator:
    """Runs the passes, fits the folds, derives the configurations and summarizes them."""

    def __init__(
        self, engine: Engine, settings: EvalSettings | None = None, baseline: PlainBm25 | None = None
    ):
        """``baseline``: the plain BM25 index of the engine's version; without it no baseline row."""
        self.engine = engine
        self.settings = settings or EvalSettings()
        self.baseline = baseline
        self.pipeline = engine.pipeline
        self.pair_scorer = engine.pipeline.reranking.pair_scorer
        self.answerer = engine.pipeline.candidates.answerer  # the engine's configured scorer
        self.fold_rankers: list[LinearRanker] = []
        self.fold_scorers: list[AnswerScorer] = []

    # -- pass A: retrieval ------------------------------------------------------------------------------

    def trace(self, question: BenchmarkQuestion) -> Trace:
        return retrieval_trace(self.engine, self.baseline, question)

    def run_pass(self, questions: list[BenchmarkQuestion], label: str) -> list[Trace]:
        bar = progress(f"eval {label}", total=len(questions), unit="question")
        found = []
        try:
            for question in questions:
                found.append(self.trace(question))
                bar.update(1)
        finally:
            bar.close()
        return found

    # -- stage one: hand-set and cross-fitted ----------------------------------------------------------

    def fit_folds(self, traces: list[Trace]) -> list[int]:
        """Fit one ranker per fold on the other folds; returns each trace's fold."""
        folds = assign_folds(traces, self.settings.folds, self.settings.seed)
        head = self.engine.config.rerank.stage1_keep
        self.fold_rankers = fold_rankers(traces, folds, self.settings.folds, head, self.settings.seed)
        return folds

    def answer_examples(self, trace: Trace, config: str) -> tuple[np.ndarray, np.ndarray] | None:
        """The candidates the reader finds in ``config``'s top evidence: features, and which are right."""
        staged = trace.staged
        if staged is None or config not in trace.rankings:
            return None
        rows = self.pipeline.store.get(trace.rankings[config][: self.engine.config.answer.top_evidence])
        _, drafts, matrix, _ = self.answerer.candidates(staged.intent, staged.links, rows, self.engine.label)
        golds = trace.question.answer_texts()
        return matrix, np.array([exact_match(d.text, golds) for d in drafts], dtype=bool)

    def fit_answer_folds(self, traces: list[Trace], config: str) -> list[tuple[np.ndarray, np.ndarray]]:
        """One answer scorer per fold, fitted on the other folds' candidates from ``config``'s evidence;
        returns every question's candidates (features, right or not) for a fit on all of them."""
        examples = []
        bar = progress(f"answer candidates of {config}", total=len(traces), unit="question")
        for trace in traces:
            examples.append((trace.fold, self.answer_examples(trace, config)))
            bar.update(1)
        bar.close()
        self.fold_scorers = fold_answer_scorers(examples, self.settings.folds, config)
        return [ex for _, ex in examples if ex is not None]

    def rerank(self, trace: Trace, fold: int | None) -> None:
        """Stage one with both weightings, stage two on the learned one: rankings into the trace."""
        learned = self.fold_rankers[fold] if fold is not None and self.fold_rankers else None
        head = self.engine.config.rerank.stage1_keep
        stage_one_rankings(trace, head, learned, self.settings.head_sizes, self.settings.source_ablations)

    def stage2(self, trace: Trace, base: str) -> None:
        if self.pair_scorer is None:
            return
        stage_two_rankings(self.engine, self.pair_scorer, trace, base, self.settings.stage2_weights)

    # -- reading and scoring ---------------------------------------------------------------------------

    def evaluate(self, trace: Trace, config: str, read: bool, learned_reader: bool = False) -> QuestionEval:
        """One configuration on one question; ``read`` runs the reader with the engine's answer scorer,
        or with ``learned_reader`` the scorer fitted on the other folds than the question's."""
        q = trace.question
        if trace.error is not None or config not in trace.rankings:
            return QuestionEval.failed(q.id, config, trace.error or f"no ranking {config}")
        ranking = trace.rankings[config]
        rank = next((i for i, e in enumerate(ranking, start=1) if trace.present.get(e)), None)
        prediction, answered, timings = "", False, config_timings(trace, config)
        confidence: float | None = None
        best: str | None = None
        if read:
            started = time.perf_counter()
            rows = self.pipeline.store.get(ranking[: self.engine.config.answer.top_evidence])
            staged = trace.staged
            scorer = None
            if learned_reader and self.fold_scorers and trace.fold is not None:
                scorer = self.fold_scorers[trace.fold]
            choice = self.answerer.run(staged.intent, staged.links, rows, self.engine.label, scorer)
            timings["answer"] = (time.perf_counter() - started) * 1000
            prediction, answered = ("" if choice.unknown else choice.answer), not choice.unknown
            confidence = choice.confidence
            best = choice.candidates[0].text if choice.candidates else None
        golds = q.answer_texts()
        return QuestionEval(
            question_id=q.id,
            config=config,
            presence_rank=rank,
            pool_size=len(ranking),
            gold_table_rank=gold_table_rank((trace.tables.get(e) for e in ranking), q.gold_table_id),
            has_gold_table=q.gold_table_id is not None,
            prediction=prediction,
            answered=answered,
            em=exact_match(prediction, golds) if answered else 0.0,
            f1=token_f1(prediction, golds) if answered else 0.0,
            timings_ms={**timings, "total": sum(timings.values())},
            confidence=confidence,
            candidate_em=exact_match(best, golds) if best is not None else 0.0,
        )

    def summaries(
        self, traces: list[Trace], configs: list[str], prefix: str = "", learned_reader: bool = False
    ) -> list[ConfigSummary]:
        """One summary per configuration; ``learned_reader`` reads with the answer scorer cross-fitted on
        folds (the reader's ablation), named ``<config>+learned-reader``."""
        out = []
        for config in configs:
            if not any(config in t.rankings for t in traces):
                continue
            read = config in self.settings.answer_configs
            evals = []
            # reading is the slow part (minutes on a full benchmark): a bar for the configurations that read
            bar = progress(f"read {prefix}{config}", total=len(traces), unit="question", shown=read)
            for trace in traces:
                evals.append(self.evaluate(trace, config, read, learned_reader))
                bar.update(1)
            bar.close()
            name = prefix + config + ("+learned-reader" if learned_reader else "")
            for e in evals:
                e.config = name
            description = DESCRIPTIONS.get(config.split("-head")[0], config)
            if "-head" in config:
                description += f" (re-ordering the fused top {config.rsplit('head', 1)[1]})"
            if learned_reader:
                description += "; answers read with a candidate scorer cross-fitted on folds"
            out.append(summarize(name, description, evals))
        return out


def source_passes(
    index_dir: Path, config: EngineConfig, settings: EvalSettings, questions: list[BenchmarkQuestion]
) -> dict[str, list[Trace]]:
    """One retrieval pass per source ablation, in an engine of its own (runs in a worker process)."""
    traces: dict[str, list[Trace]] = {}
    for sources in settings.source_ablations:
        name = "+".join(sources)
        restricted = config.model_copy(deep=True)
        restricted.retrieval.sources = list(sources)
        restricted.rerank.stage2 = None
        with Engine.open(index_dir, restricted) as engine:
            traces[name] = Evaluator(engine, settings).run_pass(questions, f"sources={name}")
    return traces


def run_ablation_passes(
    evaluator: Evaluator,
    questions: list[BenchmarkQuestion],
    index_dir: Path,
    source_limit: int | None = None,
    parallel: bool = True,
) -> tuple[list[Trace], dict[str, list[Trace]]]:
    """The main pass with every source, and the source-restricted passes (over the first
    ``source_limit`` questions) beside it in a second process: each pass is single-threaded Python
    and the machine has two cores."""
    settings, config = evaluator.settings, evaluator.engine.config
    subset = questions[:source_limit] if source_limit else questions
    extra: dict[str, list[Trace]] = {}
    if parallel and settings.source_ablations:
        context = mp.get_context("forkserver")
        with ProcessPoolExecutor(max_workers=1, mp_context=context) as pool:
            future = pool.submit(source_passes, index_dir, config, settings, subset)
            main = evaluator.run_pass(questions, "all sources")
            extra = future.result()
    else:
        main = evaluator.run_pass(questions, "all sources")
        if settings.source_ablations:
            extra = source_passes(index_dir, config, settings, subset)
    rerank_all(evaluator, main, extra)
    return main, extra


def rerank_all(evaluator: Evaluator, main: list[Trace], extra: dict[str, list[Trace]]) -> None:
    """Fit the folds on the main pass and re-rank every pass (the source passes are prefixes of it)."""
    folds = evaluator.fit_folds(main)
    for traces in (main, *extra.values()):
        for trace, fold in zip(traces, folds[: len(traces)], strict=True):
            evaluator.rerank(trace, fold)


__all__ = [
    "EvalSettings",
    "Evaluator",
    "Trace",
    # moved: query.evaluation.traces.load_traces; kept for benchmarks/fusion_weights.py and
    # benchmarks/reader_weights.py until the lead's refactor lands (``Trace`` stays importable here
    # too: the two benchmarks import it, and trace files pickled before the move name it here)
    "load_traces",
    "rerank_all",
    "run_ablation_passes",
]
