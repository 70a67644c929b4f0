"""Cross-fitting: the learned stage-one ranker and answer scorer, fitted on some folds, applied to another.

Questions are split into folds at random (seeded); for each fold a pairwise logistic regression (rows
of one question's fused head: holds the answer or not) and a candidate logistic regression (is the
gold answer or not) are fitted on the other folds and applied to the held-out one. Every figure of a
learned configuration is therefore out of sample.
"""

from __future__ import annotations

import random

import numpy as np

from query.evaluation.traces import Trace
from query.read.scoring import ANSWER_FEATURES, AnswerScorer
from query.rerank.stage_one import FEATURES, LinearRanker

Examples = list[tuple[np.ndarray, np.ndarray]]
"""Per question: the candidates' feature rows and which of them are a gold answer."""


def assign_folds(traces: list[Trace], folds: int, seed: int) -> list[int]:
    """A fold for each trace (also set on it), drawn at random with ``seed``."""
    rng = random.Random(seed)
    drawn = [rng.randrange(folds) for _ in traces]
    for trace, fold in zip(traces, drawn, strict=True):
        trace.fold = fold
    return drawn


def fold_rankers(
    traces: list[Trace], folds: list[int], count: int, head: int, seed: int
) -> list[LinearRanker]:
    """One stage-one ranker per fold, fitted on the traces of the other folds."""
    rankers = []
    for fold in range(count):
        train = [t for t, f in zip(traces, folds, strict=True) if f != fold and t.staged is not None]
        rankers.append(fit_ranker(train, f"fold {fold + 1} of {count} held out", head, seed + fold))
    return rankers


def fold_answer_scorers(
    examples: list[tuple[int | None, tuple[np.ndarray, np.ndarray] | None]], count: int, config: str
) -> list[AnswerScorer]:
    """One answer scorer per fold, fitted on the candidates (``config``'s evidence) of the other folds;
    ``examples`` are (fold, candidates or None) per question."""
    scorers = []
    for fold in range(count):
        train = [ex for f, ex in examples if f != fold and ex is not None]
        scorers.append(fit_answer_scorer(train, f"{config} candidates, fold {fold + 1} of {count} held out"))
    return scorers


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


def fit_answer_scorer(examples: Examples, trained_on: str) -> AnswerScorer:
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
