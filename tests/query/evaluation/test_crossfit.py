"""Cross-fitting: the pairwise stage-one fit, the answer-scorer fit, and one model per held-out fold."""

from __future__ import annotations

import random
from types import SimpleNamespace

import numpy as np
import pytest

from query.evaluation.crossfit import assign_folds, fit_answer_scorer, fit_ranker, fold_rankers
from query.evaluation.loaders import BenchmarkQuestion
from query.evaluation.traces import Trace
from query.read.scoring import ANSWER_FEATURES
from query.rerank.stage_one import DEFAULT_WEIGHTS, FEATURES


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


def test_fitted_scorer_learns_the_telling_feature_and_is_calibrated() -> None:
    rng = np.random.default_rng(0)
    col = ANSWER_FEATURES.index("header_match")
    examples = []
    for _ in range(300):
        x = rng.normal(size=(8, len(ANSWER_FEATURES)))
        x[:, col] = 0.0
        y = np.zeros(8, dtype=bool)
        if rng.random() < 0.5:  # half the questions have their answer among the candidates
            right = rng.integers(8)
            x[right, col], y[right] = 1.0, True
        examples.append((x, y))
    scorer = fit_answer_scorer(examples, "synthetic")
    assert scorer.trained_on and "300 questions" in scorer.trained_on
    weights = scorer.weights
    assert weights["header_match"] == max(weights.values()) and weights["header_match"] > 2
    # a candidate with the telling feature is likely right, one without it is not
    with_it, without = np.zeros(len(ANSWER_FEATURES)), np.zeros(len(ANSWER_FEATURES))
    with_it[col] = 1.0
    scores = scorer.score(np.stack([with_it, without]))
    assert scorer.confidence(scores) > 0.8 and scorer.confidence(scores[1:]) < 0.1


def test_fitting_without_a_right_candidate_is_refused() -> None:
    with pytest.raises(ValueError, match="no right answer"):
        fit_answer_scorer([(np.zeros((3, len(ANSWER_FEATURES))), np.zeros(3, dtype=bool))], "none")


def _telling_traces(n: int, seed: int) -> list[Trace]:
    rng = np.random.default_rng(seed)
    traces = []
    for _ in range(n):
        x = rng.random((40, len(FEATURES))).astype(np.float32)
        labels = np.zeros(40, dtype=bool)
        right = rng.integers(40)
        x[right, FEATURES.index("hop")] += 2.0
        labels[right] = True
        traces.append(_trace(x, labels))
    return traces


def test_folds_are_drawn_with_the_seed_and_set_on_the_traces() -> None:
    traces = _telling_traces(30, seed=2)
    folds = assign_folds(traces, 3, seed=13)
    rng = random.Random(13)
    assert folds == [rng.randrange(3) for _ in range(30)]
    assert [t.fold for t in traces] == folds


def test_each_fold_ranker_is_fitted_without_its_own_fold() -> None:
    traces = _telling_traces(30, seed=3)
    folds = assign_folds(traces, 3, seed=13)
    rankers = fold_rankers(traces, folds, 3, head=40, seed=13)
    assert len(rankers) == 3
    for fold, ranker in enumerate(rankers):
        others = sum(f != fold for f in folds)
        assert ranker.trained_on == f"fold {fold + 1} of 3 held out ({others} questions, pairwise)"
        assert max(ranker.weights, key=lambda k: ranker.weights[k]) == "hop"
