"""Stage one: it re-orders only the fused head, and its pairwise fit learns which rows hold answers."""

from __future__ import annotations

from types import SimpleNamespace

import numpy as np
import pytest

from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.runner import Trace, fit_ranker
from query.rerank.stage_one import DEFAULT_WEIGHTS, FEATURES, LinearRanker, stage_one


def test_stage_one_reorders_the_head_and_leaves_the_tail() -> None:
    ids = [f"e{i}" for i in range(6)]
    matrix = np.zeros((6, len(FEATURES)), dtype=np.float32)
    matrix[:, FEATURES.index("coverage")] = [0.1, 0.9, 0.5, 0.0, 1.0, 1.0]
    ranked, scores = stage_one(LinearRanker(weights={"coverage": 1.0}), matrix, ids, head=3)
    assert ranked == ["e1", "e2", "e0", "e3", "e4", "e5"]  # e4 and e5 score higher but sit in the tail
    assert list(scores) == pytest.approx([0.9, 0.5, 0.1])
    assert stage_one(LinearRanker(), matrix, ids, head=100)[0][:2] == ["e4", "e5"]


def _trace(features: np.ndarray, labels: np.ndarray) -> Trace:
    question = BenchmarkQuestion(id="q", question="?", answers=[])
    trace = Trace(question, SimpleNamespace(features=features))  # type: ignore[arg-type]
    trace.labels = labels
    return trace


def test_pairwise_fit_finds_the_telling_feature_inside_the_head() -> None:
    rng = np.random.default_rng(1)
    col = FEATURES.index("hop")
    traces = []
    for _ in range(80):
        x = rng.random((150, len(FEATURES))).astype(np.float32)
        x[:, FEATURES.index("src_kg")] = 0.0  # constant, as in OTT-QA: keeps its hand-set weight
        labels = np.zeros(150, dtype=bool)
        right = rng.integers(100)
        x[right, col] += 2.0
        labels[right] = True
        labels[120] = True  # outside the head: must not be learned from
        x[120, FEATURES.index("bm25")] += 5.0
        traces.append(_trace(x, labels))
    ranker = fit_ranker(traces, "synthetic", head=100)
    assert ranker.trained_on and "80 questions, pairwise" in ranker.trained_on
    learned = {k: v for k, v in ranker.weights.items() if k != "src_kg"}
    assert max(learned, key=lambda k: learned[k]) == "hop"
    assert abs(ranker.weights["bm25"]) < ranker.weights["hop"] / 5
    assert ranker.weights["src_kg"] == DEFAULT_WEIGHTS.get("src_kg", 0.0)


def test_pairwise_fit_needs_an_answer_in_some_head() -> None:
    x = np.zeros((10, len(FEATURES)), dtype=np.float32)
    with pytest.raises(ValueError, match="no training question"):
        fit_ranker([_trace(x, np.zeros(10, dtype=bool))], "none")
