"""Re-ranking 1000 → 100 → 30: stage one (features → a linear score over the fused head), then stage two
(a pair scorer mixed with stage one) when one is configured."""

from __future__ import annotations

from dataclasses import replace

from query.pipeline.staged import FINAL, StagedRun
from query.rerank.pair_scorers import PairScorer
from query.rerank.settings import RerankSettings
from query.rerank.stage_one import LinearRanker, stage_one
from query.rerank.stage_two import stage_two
from query.timing import timed

FUSED, RERANK1, RERANK2 = "fused", "rerank1", "rerank2"


class Reranking:
    """The rerank stage of the pipeline; holds no mutable state, so threads may share it."""

    def __init__(self, settings: RerankSettings, ranker: LinearRanker, pair_scorer: PairScorer | None):
        self.settings, self.ranker, self.pair_scorer = settings, ranker, pair_scorer

    def run(
        self,
        staged: StagedRun,
        ranker: LinearRanker | None = None,
        pair_cache: dict[str, float] | None = None,
    ) -> StagedRun:
        """A new run with the "rerank1" (and "rerank2") and "final" rankings and the final scores.

        Each ranking covers the whole pool: a stage re-orders its head and leaves the tail in the previous
        stage's order, so answer presence can be read at any depth. ``ranker`` replaces the configured
        stage-one weights (the harness's cross-fitted folds); ``pair_cache`` (evidence id → pair score)
        lets a caller re-rank the same question without scoring a text twice."""
        settings = self.settings
        timings = dict(staged.timings)
        rankings = dict(staged.rankings)
        ids = rankings[FUSED]
        with timed(timings, "rerank1"):
            if settings.stage1 and ids:
                ids, scores = stage_one(ranker or self.ranker, staged.features, ids, settings.stage1_keep)
                first = dict(zip(ids, (float(x) for x in scores), strict=False))
            else:
                first = {e: staged.pool.fused[e] for e in ids[: settings.stage1_keep]}
            rankings[RERANK1] = ids
        kept = ids[: settings.stage1_keep]
        final = {e: first[e] for e in kept}
        if self.pair_scorer is not None and kept:
            with timed(timings, "rerank2"):
                texts = {e: staged.rows[e].text for e in kept}
                kept, final = stage_two(
                    self.pair_scorer, staged.question, kept, texts, first, settings.stage2_weight, pair_cache
                )
            rankings[RERANK2] = kept + ids[settings.stage1_keep :]
        rankings[FINAL] = kept[: settings.stage2_keep]
        return replace(staged, rankings=rankings, final_scores=final, timings=timings)
