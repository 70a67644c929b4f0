"""Answer metrics (normalization, EM, F1), answer presence, summaries, thresholds and percentiles."""

from __future__ import annotations

import pytest

from query.evaluation import (
    AP_KS,
    HIT_KS,
    AnswerSpec,
    BenchmarkQuestion,
    QuestionEval,
    ap_curve,
    evaluate_question,
    exact_match,
    first_presence_rank,
    gold_table_rank,
    normalize_answer,
    summarize,
    token_f1,
)
from query.evaluation.metrics import calibrate_threshold, percentile
from tests.query.evaluation.conftest import hand_made_evals, question_eval

# --- normalization, EM, F1 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Beatles", "beatles"),
        ("  A   tale of  two cities. ", "tale of two cities"),
        ("U.S.", "us"),
        ("Aristotle 's Poetics", "aristotle s poetics"),
        ("an Apple, the pear", "apple pear"),
        ("theatre", "theatre"),  # an article inside a word stays
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_classic_cases() -> None:
    assert exact_match("the Beatles", ["Beatles"]) == 1.0
    assert exact_match("Lynda La Plante.", "lynda la plante") == 1.0
    assert exact_match("Paris", ["London", "paris"]) == 1.0
    assert exact_match("Paris, France", ["Paris"]) == 0.0
    assert exact_match("Paris", []) == 0.0


def test_token_f1_classic_cases() -> None:
    assert token_f1("Paris", ["Paris"]) == 1.0
    # pred {new, york, city} vs gold {new, york}: P = 2/3, R = 1 -> F1 = 0.8
    assert token_f1("New York City", ["New York"]) == pytest.approx(0.8)
    # max over golds: 0.8 against "New York", 1.0 against "New York City"
    assert token_f1("New York City", ["New York", "new york city"]) == 1.0
    assert token_f1("Berlin", ["Paris"]) == 0.0
    # repeated tokens count once per occurrence: pred {a1, a1} vs gold {a1}: P = 1/2, R = 1 -> 2/3
    assert token_f1("x x", ["x"]) == pytest.approx(2 / 3)
    # an answer that normalizes to nothing matches only an empty prediction
    assert token_f1("the", ["a"]) == 1.0
    assert token_f1("Paris", ["the"]) == 0.0
    assert token_f1("Paris", []) == 0.0


# --- presence and gold-table rank ------------------------------------------------------------------


def test_presence_rank_respects_token_boundaries() -> None:
    texts = ["founded in 19950 by", "a year: 1995 .", "1995"]
    assert first_presence_rank(texts, ["1995"]) == 2
    assert first_presence_rank(["19950", "11995", "1995x"], ["1995"]) is None


def test_presence_rank_articles_case_and_punctuation() -> None:
    assert first_presence_rank(["nothing here", "Songs by Beatles, 1963"], ["the Beatles"]) == 2
    assert first_presence_rank(["THE BEATLES!"], ["beatles"]) == 1
    # evidence tokenized as released by OTT-QA still holds plainly written answers
    assert first_presence_rank(["attendance of 15 , 728 people"], ["15,728"]) == 1
    assert first_presence_rank(["Aristotle's Poetics"], ["Aristotle 's Poetics"]) == 1
    assert first_presence_rank(["born in the U.S."], ["US"]) == 1
    # a multi-token answer must appear as a contiguous sequence
    assert first_presence_rank(["La Plante, Lynda"], ["Lynda La Plante"]) is None


def test_presence_rank_on_non_ascii_punctuation() -> None:
    # the ASCII fast path and the per-character path must treat punctuation alike
    assert first_presence_rank(["Zürich \u2013 1,000 “people”"], ["1,000 people"]) == 1
    assert first_presence_rank(["Zürich \u2013 1,000 “people”"], ["Zürich"]) == 1
    assert first_presence_rank(["Zurich\u20141000"], ["1000"]) == 1
    assert normalize_answer("Zürich, “the” City!") == "zürich “ ” city"


def test_presence_rank_edge_cases() -> None:
    assert first_presence_rank([], ["x"]) is None
    assert first_presence_rank(["the a an"], ["the"]) is None  # answers that normalize to nothing are ignored
    assert first_presence_rank(["alpha", "beta"], ["gamma", "beta"]) == 2


def test_gold_table_rank_counts_distinct_tables() -> None:
    tables = [None, "T1", "T1", None, "T2", "T1", "T3"]
    assert gold_table_rank(tables, "T1") == 1
    assert gold_table_rank(tables, "T2") == 2
    assert gold_table_rank(tables, "T3") == 3
    assert gold_table_rank(tables, "T9") is None
    assert gold_table_rank(tables, None) is None


def test_evaluate_question_scores_one_result() -> None:
    question = BenchmarkQuestion(
        id="q", question="Who?", answers=[AnswerSpec(text="Lynda La Plante")], gold_table_id="T2"
    )
    result = evaluate_question(
        question,
        "base",
        evidence_texts=["no", "created by Lynda La Plante in 1991"],
        evidence_table_ids=["T1", "T1", "T2"],
        prediction="lynda la plante",
        answered=True,
        timings_ms={"retrieve": 5.0},
    )
    assert (result.presence_rank, result.pool_size, result.gold_table_rank) == (2, 2, 2)
    assert (result.em, result.f1, result.has_gold_table) == (1.0, 1.0, True)
    refrained = evaluate_question(
        question, "base", evidence_texts=[], prediction="Lynda La Plante", answered=False
    )
    assert (refrained.em, refrained.f1, refrained.presence_rank) == (0.0, 0.0, None)


# --- summarize -------------------------------------------------------------------------------------


def test_summarize_hand_computed() -> None:
    summary = summarize("c", "hand-made", hand_made_evals(), settings={"k": 100})
    assert (summary.questions, summary.errors, summary.answered) == (5, 1, 2)
    # presence ranks of the 5: 1, 7, 250, None, (error)
    assert summary.ap == pytest.approx({1: 0.2, 5: 0.2, 10: 0.4, 30: 0.4, 100: 0.4, 1000: 0.6})
    assert set(summary.ap) == set(AP_KS)
    # gold table ranks: 1, 4, None, 20, (error)
    assert summary.hit == pytest.approx({1: 0.2, 5: 0.4, 10: 0.4, 30: 0.6, 100: 0.6})
    assert set(summary.hit) == set(HIT_KS)
    assert summary.mrr == pytest.approx((1 + 1 / 4 + 0 + 1 / 20 + 0) / 5)
    assert summary.gold_table_questions == 5
    assert summary.em == pytest.approx(1 / 5)
    assert summary.f1 == pytest.approx(1.5 / 5)
    assert summary.refrain_rate == pytest.approx(3 / 5)  # two "unknown", one error
    assert summary.precision_answered == pytest.approx(1 / 2)
    assert summary.mean_pool_size == pytest.approx((50 + 50 + 500 + 1000) / 4)
    # latency over the 4 questions without error; p50 of 40, 60, 80, 100 = 70, p95 = 80 + 0.85 * 20
    assert list(summary.latency_ms) == ["retrieve", "read", "total"]
    assert summary.latency_ms["total"] == pytest.approx({"p50": 70.0, "p95": 97.0, "mean": 70.0})
    assert summary.latency_ms["retrieve"]["p50"] == pytest.approx(25.0)
    assert summary.settings == {"k": 100}


def test_summarize_without_gold_tables_or_answers() -> None:
    evals = [
        question_eval("a", presence_rank=3, has_gold_table=False, answered=False),
        question_eval("b", has_gold_table=False, answered=False, timings_ms={"x": 2.0, "y": 3.0}),
    ]
    summary = summarize("c", "kgqa", evals)
    assert summary.gold_table_questions == 0
    assert summary.mrr == 0.0 and summary.hit[1] == 0.0
    assert summary.precision_answered == 0.0 and summary.refrain_rate == 1.0
    assert summary.latency_ms["total"]["mean"] == 5.0  # no "total" stage given: the sum of the stages


def test_summarize_rejects_other_configs_and_handles_empty() -> None:
    with pytest.raises(ValueError, match="other configs: d"):
        summarize("c", "", [question_eval("a"), QuestionEval(question_id="b", config="d")])
    empty = summarize("c", "nothing", [])
    assert empty.questions == 0 and empty.ap[1] == 0.0 and empty.latency_ms == {}


def test_ap_curve_and_percentile() -> None:
    evals = hand_made_evals()
    assert ap_curve(evals, [1, 7, 6, 300]) == pytest.approx({1: 0.2, 7: 0.4, 6: 0.2, 300: 0.6})
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    with pytest.raises(ValueError):
        percentile([], 50)


def test_threshold_sweep_hand_computed() -> None:
    # best-candidate confidence and whether that candidate is right; the last one was not read
    evals = [
        question_eval("a", confidence=0.6, candidate_em=1.0),
        question_eval("b", confidence=0.3, candidate_em=1.0),
        question_eval("c", confidence=0.25, candidate_em=0.0),
        question_eval("d", confidence=0.1, candidate_em=0.0),
        question_eval("e", confidence=0.01, candidate_em=0.0),
        question_eval("f"),
    ]
    calibration = calibrate_threshold(evals, grid=(0.0, 0.2, 0.3, 0.5, 0.9))
    points = {p.threshold: p for p in calibration.points}
    assert points[0.0].answered == 1.0 and points[0.0].precision == pytest.approx(2 / 5)
    assert points[0.2].answered == pytest.approx(3 / 5) and points[0.2].em == pytest.approx(2 / 5)
    # at 0.3 both right answers are kept and every wrong one refused: F1 1.0, the recommendation
    assert points[0.3].precision == 1.0 and points[0.3].f1 == 1.0 and calibration.chosen == 0.3
    assert points[0.5].f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert points[0.9].answered == 0.0 and points[0.9].f1 == 0.0
    # summaries carry the sweep only when the configuration was read
    assert summarize("c", "read", evals).threshold is not None
    assert summarize("c", "not read", [question_eval("x")]).threshold is None


def test_question_eval_failed() -> None:
    failed = QuestionEval.failed("q", "c", "timeout", {"total": 3.0})
    assert failed.error == "timeout" and not failed.answered and failed.presence_rank is None


def test_percentile_agrees_with_numpy_on_the_0_to_100_scale() -> None:
    """One percentile for the report's latencies and the batch summary's (whose own copy took 0-1)."""
    import numpy as np

    values = list(np.random.default_rng(5).gamma(2.0, 40.0, size=37))
    for q in (0, 5, 50, 95, 99, 100):
        assert percentile(values, q) == pytest.approx(float(np.percentile(values, q)), rel=1e-12)
    with pytest.raises(ValueError, match=r"\[0, 100\]"):
        percentile(values, 0.95 * 200)
