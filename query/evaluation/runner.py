"""The evaluation harness: run the engine over a benchmark once, measure every stage and ablation from it.

The plain BM25 baseline (``query.evaluation.baseline``) is searched beside the engine. One retrieval
pass per question keeps each retriever's list, the fused pool and the pool's features. Every stage
ablation is then a re-ordering of what that pass kept — BM25, dense, the KG walk or the hop alone,
fusion of two, three or four lists, stage one with hand-set or learned weights, stage two — so a dozen
configurations cost one retrieval pass plus the late-interaction scoring. Source ablations restrict
the retrievers to some source types and need a pass of their own each.

Answer presence is read through a label per pool row (does the row hold a gold answer?), computed once
per question, so presence at any depth of any ranking is a lookup.

The learned stage-one ranker and the learned answer scorer are cross-fitted: questions are split into
folds, a pairwise logistic regression (rows of one question's fused head: holds the answer or not) and
a candidate logistic regression (is the gold answer or not) are fitted on the other folds and applied
to the held-out fold. Their figures are therefore out-of-sample; the report says so.
"""

from __future__ import annotations

import logging
import multiprocessing as mp
import os
import pickle
import random
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from ingest.progress import progress
from query.config import EngineConfig
from query.engine import Engine
from query.evaluation.baseline import PlainBm25
from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.metrics import (
    ConfigSummary,
    QuestionEval,
    exact_match,
    first_presence_rank,
    gold_table_rank,
    summarize,
    token_f1,
)
from query.pipeline import StagedRun
from query.read.candidates import ANSWER_FEATURES, AnswerScorer
from query.rerank.stage_one import FEATURES, LinearRanker, stage_one
from query.retrieve.retrievers import fuse
from schemas.evidence import SourceType

log = logging.getLogger(__name__)

BASELINE = "bm25-baseline"


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


@dataclass
class Trace:
    """What the retrieval pass keeps of one question (the rows themselves are fetched again on demand)."""

    question: BenchmarkQuestion
    staged: StagedRun | None
    baseline: list[str] = field(default_factory=list)
    present: dict[str, bool] = field(default_factory=dict)
    tables: dict[str, str | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    rankings: dict[str, list[str]] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    fold: int | None = None


DESCRIPTIONS: dict[str, str] = {
    BASELINE: (
        "plain BM25 (Tantivy, default tokenizer): the question as query, one document per whole passage "
        "and per table row; no linking, no re-ranking"
    ),
    "bm25": "BM25 with the intent's query and a boost for linked entities' evidence",
    "dense": "dense retrieval alone (LanceDB)",
    "kg": "one-hop walk from the linked entities alone (Kùzu)",
    "hop": "one hop from the first fusion's head along its links to the linked pages' leads alone (Kùzu)",
    "rrf-bm25-dense": "reciprocal-rank fusion of BM25 and dense",
    "rrf-no-hop": "reciprocal-rank fusion of BM25, dense and the KG walk (the first fusion, no hop)",
    "rrf-all": "reciprocal-rank fusion of BM25, dense, the KG walk and the hop",
    "rerank1-hand": "+ stage one, hand-set feature weights, re-ordering the fused top 100",
    "rerank1-learned": "+ stage one, pairwise logistic-regression weights cross-fitted on benchmark folds",
    "rerank2": "+ stage two, late interaction over MiniLM token vectors on the top 100, mixed half and half",
    "rerank2-w0.2": "+ stage two, late interaction on the top 100, 20 % of the mix",
}


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
        started = time.perf_counter()
        try:
            staged = self.pipeline.retrieve(self.engine.understand(question.question))
        except Exception as exc:  # one failing question is a miss in the report, not a dead run
            log.exception("question %s failed", question.id)
            return Trace(question, None, error=f"{type(exc).__name__}: {exc}")
        staged.timings["retrieve_total"] = (time.perf_counter() - started) * 1000
        trace = Trace(question, staged, timings=dict(staged.timings))
        golds = question.answer_texts()
        if self.baseline is not None:
            t0 = time.perf_counter()
            hits = self.baseline.search(question.question, 1000)
            trace.timings["bm25_baseline"] = (time.perf_counter() - t0) * 1000
            trace.baseline = [h.doc_id for h in hits]
            for hit in hits:
                trace.present[hit.doc_id] = first_presence_rank([hit.text], golds) is not None
                trace.tables[hit.doc_id] = hit.table_id
                trace.sources[hit.doc_id] = hit.source_type
        ids = set(staged.pool.ids)
        for ranked in staged.retrieved.values():
            ids.update(ranked.ids)
        rows = {r.evidence_id: r for r in staged.rows.values()}
        missing = [e for e in ids if e not in rows]
        rows.update({r.evidence_id: r for r in self.pipeline.store.get(missing)})
        for evidence_id, row in rows.items():
            trace.present[evidence_id] = first_presence_rank([row.text], golds) is not None
            trace.tables[evidence_id] = row.raw_provenance.get("table_id")
            trace.sources[evidence_id] = row.source_type
        trace.labels = np.array([trace.present.get(e, False) for e in staged.pool.ids], dtype=bool)
        lists = staged.retrieved
        trace.rankings = {name: r.ids for name, r in lists.items()}
        if self.baseline is not None:
            trace.rankings[BASELINE] = trace.baseline
        if "bm25" in lists and "dense" in lists:
            pair = fuse([lists["bm25"], lists["dense"]], self.engine.config.retrieval)
            trace.rankings["rrf-bm25-dense"] = pair.ids
        if "hop" in lists:
            first = [lists[n] for n in ("kg", "bm25", "dense") if n in lists]
            trace.rankings["rrf-no-hop"] = fuse(first, self.engine.config.retrieval).ids
        trace.rankings["rrf-all"] = list(staged.pool.ids)
        trace.staged = staged.with_rows({})  # ids, scores and features are kept; rows are fetched again
        return trace

    def run_pass(self, questions: list[BenchmarkQuestion], label: str) -> list[Trace]:
        bar = progress(f"eval {label}", total=len(questions), unit="question")
        traces = []
        try:
            for question in questions:
                traces.append(self.trace(question))
                bar.update(1)
        finally:
            bar.close()
        return traces

    # -- stage one: hand-set and cross-fitted ----------------------------------------------------------

    def fit_folds(self, traces: list[Trace]) -> list[int]:
        """Fit one ranker per fold on the other folds; returns each trace's fold."""
        rng = random.Random(self.settings.seed)
        folds = [rng.randrange(self.settings.folds) for _ in traces]
        for trace, fold in zip(traces, folds, strict=True):
            trace.fold = fold
        self.fold_rankers = []
        for fold in range(self.settings.folds):
            train = [t for t, f in zip(traces, folds, strict=True) if f != fold and t.staged is not None]
            self.fold_rankers.append(
                fit_ranker(
                    train,
                    f"fold {fold + 1} of {self.settings.folds} held out",
                    self.engine.config.rerank.stage1_keep,
                    self.settings.seed + fold,
                )
            )
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
        self.fold_scorers = []
        for fold in range(self.settings.folds):
            train = [ex for f, ex in examples if f != fold and ex is not None]
            self.fold_scorers.append(
                fit_answer_scorer(
                    train, f"{config} candidates, fold {fold + 1} of {self.settings.folds} held out"
                )
            )
        return [ex for _, ex in examples if ex is not None]

    def rerank(self, trace: Trace, fold: int | None) -> None:
        """Stage one with both weightings, stage two on the learned one: rankings into the trace."""
        staged = trace.staged
        if staged is None:
            return
        head = self.engine.config.rerank.stage1_keep
        trace.rankings["rerank1-hand"] = _stage1(staged, LinearRanker(), head)
        if fold is not None and self.fold_rankers:
            trace.rankings["rerank1-learned"] = _stage1(staged, self.fold_rankers[fold], head)
            for size in self.settings.head_sizes:
                trace.rankings[f"rerank1-learned-head{size}"] = _stage1(staged, self.fold_rankers[fold], size)
        for sources in self.settings.source_ablations:
            for base in ("rrf-all", "rerank1-learned"):
                if base in trace.rankings:
                    kept = [e for e in trace.rankings[base] if trace.sources.get(e) in sources]
                    trace.rankings[f"only-{'+'.join(sources)}/{base}"] = kept

    def stage2(self, trace: Trace, base: str) -> None:
        staged = trace.staged
        if staged is None or self.pair_scorer is None or base not in trace.rankings:
            return
        keep = self.engine.config.rerank.stage1_keep
        head = trace.rankings[base][:keep]
        rows = {r.evidence_id: r for r in self.pipeline.store.get(head)}
        started = time.perf_counter()
        scores = self.pair_scorer.score(staged.question, [rows[e].text for e in head if e in rows])
        trace.timings["rerank2"] = (time.perf_counter() - started) * 1000
        head = [e for e in head if e in rows]
        stage1 = np.arange(len(head), 0, -1, dtype=np.float32)  # stage one's order as a score
        for weight in self.settings.stage2_weights:
            mixed = (1 - weight) * _z(stage1) + weight * _z(scores)
            order = np.argsort(-mixed, kind="stable")
            name = "rerank2" if weight == self.settings.stage2_weights[0] else f"rerank2-w{weight:g}"
            trace.rankings[name] = [head[i] for i in order] + trace.rankings[base][keep:]

    # -- reading and scoring ---------------------------------------------------------------------------

    def evaluate(self, trace: Trace, config: str, read: bool, learned_reader: bool = False) -> QuestionEval:
        """One configuration on one question; ``read`` runs the reader with the engine's answer scorer,
        or with ``learned_reader`` the scorer fitted on the other folds than the question's."""
        q = trace.question
        if trace.error is not None or config not in trace.rankings:
            return QuestionEval.failed(q.id, config, trace.error or f"no ranking {config}")
        ranking = trace.rankings[config]
        rank = next((i for i, e in enumerate(ranking, start=1) if trace.present.get(e)), None)
        prediction, answered, timings = "", False, _config_timings(trace, config)
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


def _stage1(staged: StagedRun, ranker: LinearRanker, head: int) -> list[str]:
    return stage_one(ranker, staged.features, list(staged.pool.ids), head)[0]


def _z(values: np.ndarray) -> np.ndarray:
    spread = float(values.std()) if values.size else 0.0
    return (values - values.mean()) / (spread if spread > 1e-9 else 1.0) if values.size else values


_STAGES: dict[str, tuple[str, ...]] = {
    BASELINE: ("bm25_baseline",),
    "bm25": ("intent", "linking", "retrieve_bm25"),
    "dense": ("embed_question", "retrieve_dense"),
    "kg": ("intent", "linking", "retrieve_kg"),
    "hop": ("intent", "linking", "retrieve_kg", "retrieve_bm25", "embed_question", "retrieve_dense"),
}
_RETRIEVAL = (
    *("intent", "linking", "retrieve_kg", "retrieve_bm25"),
    *("embed_question", "retrieve_dense", "retrieve_hop", "fusion"),
)


def _config_timings(trace: Trace, config: str) -> dict[str, float]:
    stages = _STAGES.get(config)
    if stages is None:
        stages = _RETRIEVAL + (("features",) if config.startswith("rerank") else ())
        stages += ("rerank2",) if config == "rerank2" else ()
    return {s: trace.timings[s] for s in stages if s in trace.timings}


def fit_ranker(traces: list[Trace], trained_on: str, head: int = 100, seed: int = 13) -> LinearRanker:
    """Pairwise logistic regression over the fused head: which of two rows of one question holds the answer.

    Stage one only ever compares rows of the same question, so it learns from pairs (a row holding the
    answer, one that does not, both in the first ``head`` of the fused pool): the weights separate
    answers from their neighbours, not easy questions from hard ones. A pointwise fit over whole pools
    did worse (OTT-QA dev, first 600, out of fold: presence at 30 0.66 against 0.77). Features that are
    constant in the training data (no KG statements in OTT-QA) keep their hand-set weight.
    """
    from sklearn.linear_model import LogisticRegression

    rng = np.random.default_rng(seed)
    diffs, questions = [], 0
    for trace in traces:
        if trace.staged is None:
            continue
        x, labels = trace.staged.features[:head], trace.labels[:head]
        pos, neg = np.flatnonzero(labels), np.flatnonzero(~labels)
        if not pos.size or not neg.size:
            continue
        questions += 1
        diffs.append(x[rng.choice(pos, PAIRS_PER_QUESTION)] - x[rng.choice(neg, PAIRS_PER_QUESTION)])
    if not diffs:
        raise ValueError("no training question has an answer in its fused head: cannot fit a ranker")
    x = np.concatenate(diffs)
    x, y = np.concatenate([x, -x]), np.concatenate([np.ones(len(x)), np.zeros(len(x))])
    scale = x.std(axis=0)
    seen = scale > 1e-9
    scale[~seen] = 1.0
    model = LogisticRegression(fit_intercept=False, max_iter=3000, C=0.1)
    model.fit(x / scale, y)
    coef = model.coef_[0] / scale
    hand = LinearRanker().weights
    weights = {
        name: round(float(w), 6) if known else hand.get(name, 0.0)
        for name, w, known in zip(FEATURES, coef, seen, strict=True)
    }
    return LinearRanker(weights=weights, trained_on=f"{trained_on} ({questions} questions, pairwise)")


PAIRS_PER_QUESTION = 30


def fit_answer_scorer(examples: list[tuple[np.ndarray, np.ndarray]], trained_on: str) -> AnswerScorer:
    """Logistic regression of 'this candidate is a gold answer' over every candidate of every question.

    Unweighted, so its probability is calibrated: the confidence of the best candidate is the chance
    that it is right, and one threshold on it trades answered questions against precision. Questions
    with no right candidate stay in as negatives; that is what teaches the scorer to be unsure.
    """
    from sklearn.linear_model import LogisticRegression

    examples = [(x, y) for x, y in examples if len(y)]
    if not examples or not any(y.any() for _, y in examples):
        raise ValueError("no right answer among the training candidates: cannot fit an answer scorer")
    x = np.concatenate([x for x, _ in examples])
    y = np.concatenate([y for _, y in examples])
    mean, scale = x.mean(axis=0), x.std(axis=0)
    seen = scale > 1e-9
    scale[~seen] = 1.0
    model = LogisticRegression(max_iter=3000, C=1.0)
    model.fit((x - mean) / scale, y)
    coef = np.where(seen, model.coef_[0] / scale, 0.0)
    bias = float(model.intercept_[0] - (coef * mean).sum())
    weights = {name: round(float(w), 6) for name, w in zip(ANSWER_FEATURES, coef, strict=True)}
    right = int(y.sum())
    return AnswerScorer(
        weights=weights,
        bias=round(bias, 6),
        trained_on=f"{trained_on} ({len(examples)} questions, {len(y)} candidates, {right} right)",
    )


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


def save_traces(path: Path, main: list[Trace], extra: dict[str, list[Trace]]) -> None:
    """Keep a run's passes so the configurations can be re-derived without retrieving again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_suffix(".tmp")
    with tmp.open("wb") as f:
        pickle.dump({"main": main, "extra": extra}, f, protocol=pickle.HIGHEST_PROTOCOL)
    os.replace(tmp, path)


def load_traces(path: Path) -> tuple[list[Trace], dict[str, list[Trace]]]:
    with path.open("rb") as f:
        data = pickle.load(f)  # our own cache file, written by save_traces
    return data["main"], data["extra"]


__all__ = [
    "BASELINE",
    "EvalSettings",
    "Evaluator",
    "Trace",
    "fit_answer_scorer",
    "fit_ranker",
    "load_traces",
    "rerank_all",
    "run_ablation_passes",
    "save_traces",
]
