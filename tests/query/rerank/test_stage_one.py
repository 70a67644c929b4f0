"""Stage one re-orders only the fused head (its pairwise fit: tests/query/evaluation/test_crossfit.py)."""

from __future__ import annotations

import numpy as np
import pytest

from query.rerank.stage_one import FEATURES, LinearRanker, stage_one


def test_stage_one_reorders_the_head_and_leaves_the_tail() -> None:
    ids = [f"e{i}" for i in range(6)]
    matrix = np.zeros((6, len(FEATURES)), dtype=np.float32)
    matrix[:, FEATURES.index("coverage")] = [0.1, 0.9, 0.5, 0.0, 1.0, 1.0]
    ranked, scores = stage_one(LinearRanker(weights={"coverage": 1.0}), matrix, ids, head=3)
    assert ranked == ["e1", "e2", "e0", "e3", "e4", "e5"]  # e4 and e5 score higher but sit in the tail
    assert list(scores) == pytest.approx([0.9, 0.5, 0.1])
    assert stage_one(LinearRanker(), matrix, ids, head=100)[0][:2] == ["e4", "e5"]
