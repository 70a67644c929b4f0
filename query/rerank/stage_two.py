"""Stage two: a pair scorer re-orders stage one's survivors, mixed with stage one's score.

Both scores are standardized (``stage_one.standardize``) before they are mixed, so the weight means the
same whatever scale a scorer has. The engine and the evaluation harness both call ``stage_two``: the
harness measures the stage two that runs.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np

from query.rerank.pair_scorers import PairScorer
from query.rerank.stage_one import standardize


def stage_two(
    scorer: PairScorer,
    question: str,
    ids: list[str],
    texts: Mapping[str, str],
    first: Mapping[str, float],
    weight: float,
    cache: dict[str, float] | None = None,
) -> tuple[list[str], dict[str, float]]:
    """``ids`` (stage one's survivors) re-ordered by ``(1 - weight) · z(first) + weight · z(pair)``, and
    each id's mixed score. ``cache`` (evidence id → pair score) lets a caller score a question's rows
    again without scoring a text twice."""
    if not ids:
        return [], {}
    cache = cache if cache is not None else {}
    todo = [e for e in ids if e not in cache]
    if todo:
        scored = scorer.score(question, [texts[e] for e in todo])
        cache.update(zip(todo, (float(x) for x in scored), strict=True))
    pair = np.array([cache[e] for e in ids], dtype=np.float32)
    stage_one = standardize(np.array([first[e] for e in ids], dtype=np.float32))
    mixed = (1 - weight) * stage_one + weight * standardize(pair)
    order = np.argsort(-mixed, kind="stable")
    return [ids[i] for i in order], {ids[i]: float(mixed[i]) for i in order}
