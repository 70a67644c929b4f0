"""The router's contract: order by estimate (ties keep the configured order), fall back on a decline,
survive a mode that raises, and always say what every mode did."""

from __future__ import annotations

from dataclasses import dataclass

import pytest

from query.modes import Declined, NoModeAnswered, Router, Understanding
from schemas.query import Intent, QueryResult


def _understanding(question: str = "What is the area of Belgium?") -> Understanding:
    intent = Intent(question=question, answer_type="number", extractor="test")
    return Understanding(question, intent, [])


@dataclass
class Scripted:
    """A mode whose estimate and outcome are given: 'answer', 'decline' or 'raise'."""

    name: str
    score: float
    outcome: str
    runs: int = 0

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        return self.score, f"{self.name} estimates {self.score}"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        self.runs += 1
        if self.outcome == "raise":
            raise RuntimeError("backend down")
        if self.outcome == "decline":
            return Declined(self.name, f"{self.name} has nothing")
        return QueryResult(
            question=understanding.question,
            answer=f"from {self.name}",
            unknown=False,
            confidence=0.9,
            evidence=[],
            intent=understanding.intent,
            reader=self.name,
            index_version="test",
        )


def test_the_higher_estimate_runs_first_and_the_rest_are_not_tried():
    low, high = Scripted("low", 0.5, "answer"), Scripted("high", 0.8, "answer")
    result = Router([low, high]).run(_understanding())
    assert result.answer == "from high" and result.mode == "high"
    assert [(s.mode, s.outcome) for s in result.route] == [("high", "answered"), ("low", "not tried")]
    assert low.runs == 0


def test_a_decline_falls_back_to_the_next_mode_with_its_reason_kept():
    first, fallback = Scripted("kg", 0.9, "decline"), Scripted("read", 0.5, "answer")
    result = Router([first, fallback]).run(_understanding())
    assert result.mode == "read"
    assert result.route[0].outcome == "declined" and result.route[0].reason == "kg has nothing"
    assert result.route[1].outcome == "answered"


def test_ties_keep_the_configured_order():
    a, b = Scripted("a", 0.5, "answer"), Scripted("b", 0.5, "answer")
    assert Router([b, a]).run(_understanding()).mode == "b"
    assert Router([a, b]).run(_understanding()).mode == "a"


def test_a_zero_estimate_is_not_run_unless_it_is_the_last_resort():
    zero, last = Scripted("zero", 0.0, "answer"), Scripted("last", 0.3, "answer")
    result = Router([zero, last]).run(_understanding())
    assert result.mode == "last" and zero.runs == 0
    assert (result.route[-1].mode, result.route[-1].outcome) == (
        "zero",
        "declined",
    )  # after the others, never run
    only = Scripted("only", 0.0, "answer")
    assert Router([only]).run(_understanding()).mode == "only"


def test_a_mode_that_raises_is_a_decline_not_a_failed_question():
    broken, fallback = Scripted("broken", 0.9, "raise"), Scripted("read", 0.5, "answer")
    result = Router([broken, fallback]).run(_understanding())
    assert result.mode == "read"
    assert "RuntimeError: backend down" in result.route[0].reason


def test_every_mode_declining_is_an_error_that_names_each_reason():
    with pytest.raises(NoModeAnswered, match=r"a has nothing.*b has nothing"):
        Router([Scripted("a", 0.9, "decline"), Scripted("b", 0.5, "decline")]).run(_understanding())


def test_a_router_needs_distinct_modes():
    with pytest.raises(ValueError, match="at least one mode"):
        Router([])
    with pytest.raises(ValueError, match="twice"):
        Router([Scripted("a", 0.5, "answer"), Scripted("a", 0.4, "answer")])
