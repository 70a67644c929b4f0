"""The candidate reader: the answer among the top evidence's candidates, or "unknown".

Its parts: test_extract.py and test_scoring.py; a scorer fitted on benchmark candidates: test_crossfit.py
in tests/query/evaluation."""

from __future__ import annotations

from query.read.candidates import CandidateAnswerer
from query.read.scoring import ANSWER_FEATURES
from schemas.query import Intent
from tests.query.read.conftest import row


def test_the_candidate_under_the_asked_header_wins_with_the_hand_scorer() -> None:
    intent = Intent(
        question="Who was the interior decorator of Sunrise?",
        answer_type="person",
        keywords=["interior", "decorator", "sunrise"],
        extractor="test",
    )
    evidence = [
        row("table", "Page / Awards: Film: Sunrise, Interior decorator: Rochus Gliese, Producer: William Fox")
    ]
    choice = CandidateAnswerer().run(intent, [], evidence, lambda _e: None)
    assert choice.answer == "Rochus Gliese" and not choice.unknown
    assert choice.features is not None and choice.features.shape == (
        len(choice.candidates),
        len(ANSWER_FEATURES),
    )
    assert choice.supporting == [evidence[0].evidence_id]


def test_no_evidence_means_unknown() -> None:
    intent = Intent(question="Who is Zorblax?", answer_type="person", extractor="test")
    choice = CandidateAnswerer().run(intent, [], [], lambda _e: None)
    assert choice.unknown and choice.confidence == 0.0 and not choice.candidates
