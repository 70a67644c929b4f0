"""The retrieval pass over one question, and the rankings every configuration derives from it.

One pass per question keeps each retriever's list, the fused pool and the pool's features
(``retrieval_trace``). Every stage ablation is then a re-ordering of what the pass kept — BM25, dense,
the KG walk or the hop alone, fusion of two, three or four lists (``retrieval_trace``), stage one with
hand-set or learned weights and source filters (``stage_one_rankings``), stage two mixed in at several
weights (``stage_two_rankings``) — so a dozen configurations cost one retrieval pass plus the
late-interaction scoring. Answer presence is read through a label per pool row (does the row hold a
gold answer?), computed once per question, so presence at any depth of any ranking is a lookup.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Sequence

import numpy as np

from query.engine import Engine
from query.evaluation.baseline import PlainBm25
from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.metrics import answer_presence
from query.evaluation.traces import Trace
from query.pipeline import StagedRun
from query.rerank.pair_scorers import PairScorer
from query.rerank.stage_one import LinearRanker, stage_one
from query.rerank.stage_two import stage_two
from query.retrieve.retrievers import fuse
from schemas.evidence import SourceType

log = logging.getLogger(__name__)

BASELINE = "bm25-baseline"

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
"""What each configuration the pass derives is, as the report says it."""


def retrieval_trace(engine: Engine, baseline: PlainBm25 | None, question: BenchmarkQuestion) -> Trace:
    """One question through the engine's retrieval (and the plain baseline), with answer presence per
    row and the fusions of fewer lists; a question that raises is a trace with its error."""
    started = time.perf_counter()
    try:
        staged = engine.pipeline.retrieve(engine.understand(question.question))
    except Exception as exc:  # one failing question is a miss in the report, not a dead run
        log.exception("question %s failed", question.id)
        return Trace(question, None, error=f"{type(exc).__name__}: {exc}")
    staged.timings["retrieve_total"] = (time.perf_counter() - started) * 1000
    trace = Trace(question, staged, timings=dict(staged.timings))
    holds = answer_presence(question.answer_texts())
    if baseline is not None:
        t0 = time.perf_counter()
        hits = baseline.search(question.question, 1000)
        trace.timings["bm25_baseline"] = (time.perf_counter() - t0) * 1000
        trace.baseline = [h.doc_id for h in hits]
        for hit in hits:
            trace.present[hit.doc_id] = holds(hit.text)
            trace.tables[hit.doc_id] = hit.table_id
            trace.sources[hit.doc_id] = hit.source_type
    ids = set(staged.pool.ids)
    for ranked in staged.retrieved.values():
        ids.update(ranked.ids)
    rows = {r.evidence_id: r for r in staged.rows.values()}
    missing = [e for e in ids if e not in rows]
    rows.update({r.evidence_id: r for r in engine.pipeline.store.get(missing)})
    for evidence_id, row in rows.items():
        trace.present[evidence_id] = holds(row.text)
        trace.tables[evidence_id] = row.raw_provenance.get("table_id")
        trace.sources[evidence_id] = row.source_type
    trace.labels = np.array([trace.present.get(e, False) for e in staged.pool.ids], dtype=bool)
    trace.rankings = {name: r.ids for name, r in staged.retrieved.items()}
    if baseline is not None:
        trace.rankings[BASELINE] = trace.baseline
    trace.rankings.update(_fusions(engine, staged))
    trace.staged = staged.with_rows({})  # ids, scores and features are kept; rows are fetched again
    return trace


def _fusions(engine: Engine, staged: StagedRun) -> dict[str, list[str]]:
    """The fusions of two lists (BM25 and dense), of three (no hop) and of all four."""
    lists = staged.retrieved
    rankings: dict[str, list[str]] = {}
    if "bm25" in lists and "dense" in lists:
        pair = fuse([lists["bm25"], lists["dense"]], engine.config.retrieval)
        rankings["rrf-bm25-dense"] = pair.ids
    if "hop" in lists:
        first = [lists[n] for n in ("kg", "bm25", "dense") if n in lists]
        rankings["rrf-no-hop"] = fuse(first, engine.config.retrieval).ids
    rankings["rrf-all"] = list(staged.pool.ids)
    return rankings


def stage_one_rankings(
    trace: Trace,
    head: int,
    learned: LinearRanker | None,
    head_sizes: Sequence[int],
    source_ablations: Sequence[Sequence[SourceType]],
) -> None:
    """Stage one with hand-set weights, and with ``learned`` (the trace's fold ranker) over the fused
    head and the other ``head_sizes``; then the source filters of the fused and the learned rankings."""
    staged = trace.staged
    if staged is None:
        return
    trace.rankings["rerank1-hand"] = _stage1(trace, "rerank1-hand", LinearRanker(), head)
    if learned is not None:
        trace.rankings["rerank1-learned"] = _stage1(trace, "rerank1-learned", learned, head)
        for size in head_sizes:
            name = f"rerank1-learned-head{size}"
            trace.rankings[name] = _stage1(trace, name, learned, size)
    for sources in source_ablations:
        for base in ("rrf-all", "rerank1-learned"):
            if base in trace.rankings:
                kept = [e for e in trace.rankings[base] if trace.sources.get(e) in sources]
                trace.rankings[f"only-{'+'.join(sources)}/{base}"] = kept


def _stage1(trace: Trace, name: str, ranker: LinearRanker, head: int) -> list[str]:
    """Stage one's order, its head's scores kept in the trace for stage two to mix with."""
    staged = trace.staged
    assert staged is not None
    ids, scores = stage_one(ranker, staged.features, list(staged.pool.ids), head)
    trace.stage_one_scores[name] = dict(zip(ids, (float(x) for x in scores), strict=False))
    return ids


def stage_two_rankings(
    engine: Engine, pair_scorer: PairScorer, trace: Trace, base: str, weights: Sequence[float]
) -> None:
    """Stage two on ``base``'s head at each weight (the first named ``rerank2``, the others
    ``rerank2-w<weight>``), through the engine's own ``stage_two`` with ``base``'s stage-one scores (the
    fused scores for a ranking stage one did not make), so the harness measures the stage two that runs."""
    staged = trace.staged
    if staged is None or base not in trace.rankings:
        return
    keep = engine.config.rerank.stage1_keep
    rows = {r.evidence_id: r for r in engine.pipeline.store.get(trace.rankings[base][:keep])}
    head = [e for e in trace.rankings[base][:keep] if e in rows]
    first = trace.stage_one_scores.get(base) or {e: staged.pool.fused.get(e, 0.0) for e in head}
    first = {e: first.get(e, min(first.values(), default=0.0)) for e in head}
    texts = {e: rows[e].text for e in head}
    cache: dict[str, float] = {}
    started = time.perf_counter()
    for weight in weights:
        order, _ = stage_two(pair_scorer, staged.question, head, texts, first, weight, cache)
        if weight == weights[0]:
            trace.timings["rerank2"] = (time.perf_counter() - started) * 1000
        name = "rerank2" if weight == weights[0] else f"rerank2-w{weight:g}"
        trace.rankings[name] = order + trace.rankings[base][keep:]


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


def config_timings(trace: Trace, config: str) -> dict[str, float]:
    """The stage timings a configuration would have spent: the stages its ranking needed."""
    stages = _STAGES.get(config)
    if stages is None:
        stages = _RETRIEVAL + (("features",) if config.startswith("rerank") else ())
        stages += ("rerank2",) if config == "rerank2" else ()
    return {s: trace.timings[s] for s in stages if s in trace.timings}
