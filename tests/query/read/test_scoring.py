"""Candidate features and the answer scorer: confidence, specificity, containment, saved weights."""

from __future__ import annotations

import math

import numpy as np
import pytest

from query.read.candidates import CandidateAnswerer
from query.read.scoring import ANSWER_FEATURES, AnswerScorer
from schemas.query import Intent
from tests.query.read.conftest import row


def test_hand_scorer_confidence_is_the_product_scaled_by_margin() -> None:
    scorer = AnswerScorer()
    scores = np.log(np.array([0.6, 0.2]))
    assert scorer.confidence(scores) == pytest.approx(min(1.0, 0.6 * (0.5 + 0.6 / 0.8)))
    assert scorer.confidence(np.array([math.log(0.3)])) == pytest.approx(0.45)


def test_unknown_feature_names_are_refused(tmp_path) -> None:
    path = tmp_path / "scorer.json"
    AnswerScorer(weights={"log_support": 1.0}, trained_on="x").save(path)
    assert AnswerScorer.load(path).weights == {"log_support": 1.0}
    with pytest.raises(ValueError, match="unknown answer features"):
        AnswerScorer(weights={"nonsense": 1.0}).vector()


def test_a_generic_word_loses_to_a_specific_name_under_the_hand_scorer() -> None:
    intent = Intent(
        question="Who coached the team in 2016?",
        answer_type="person",
        keywords=["coached", "team"],
        extractor="t",
    )
    evidence = [row("text", "Page: The American team was coached by Clay Helton in 2016 .")]
    rarity = {"american": 0.1, "clay": 0.5, "helton": 0.8}

    def specificity(text: str) -> float:
        return max((rarity.get(w.lower(), 0.9) for w in text.split()), default=0.0)

    plain = CandidateAnswerer().run(intent, [], evidence, lambda _e: None)
    specific = CandidateAnswerer(specificity=specificity).run(intent, [], evidence, lambda _e: None)
    assert specific.answer == "Clay Helton"
    col = ANSWER_FEATURES.index("log_specific")
    by_text = {c.text: specific.features[i] for i, c in enumerate(specific.candidates)}
    assert by_text["American"][col] < by_text["Clay Helton"][col] == 0.0
    assert "American" in {c.text for c in plain.candidates}


def test_a_candidate_inside_a_longer_one_is_marked_contained() -> None:
    intent = Intent(
        question="Who is the head coach?", answer_type="person", keywords=["coach"], extractor="t"
    )
    evidence = [row("text", "Page: Head coach Clay Helton said Helton would stay .")]
    choice = CandidateAnswerer().run(intent, [], evidence, lambda _e: None)
    col = ANSWER_FEATURES.index("contained")
    by_text = {c.text: choice.features[i] for i, c in enumerate(choice.candidates)}
    assert by_text["Helton"][col] == 1.0 and by_text["Clay Helton"][col] == 0.0


def test_a_known_kind_that_is_not_asked_for_lowers_a_linked_entity_and_an_unknown_kind_does_not() -> None:
    """CI on 4a04a66: untyped linked pages had been lowered to a neutral fit, below an unlinked word of
    the prose, so the table row's linked player lost to "Born". Only a known, other kind lowers a page."""
    intent = Intent(question="Who was his father?", answer_type="person", keywords=["father"], extractor="t")
    text = "Page: Born in Stagira , he was the son of Nicomachus and studied in Thessaloniki ."
    evidence = [row("text", text, entity_ids=["Nicomachus", "Thessaloniki"])]
    asked: list[list[str]] = []

    def kinds(entity_ids):
        asked.append(list(entity_ids))
        return {"Thessaloniki": "place"}  # Nicomachus: a page whose item says nothing of its kind

    choice = CandidateAnswerer(kinds=kinds).run(intent, [], evidence, lambda _e: None)
    col = ANSWER_FEATURES.index("log_type")
    fit = {(c.text, c.kind): math.exp(choice.features[i][col]) for i, c in enumerate(choice.candidates)}
    assert sorted(asked[0]) == ["Nicomachus", "Thessaloniki"]
    assert fit[("Thessaloniki", "entity")] == pytest.approx(0.05)  # a place is never a person
    assert fit[("Nicomachus", "entity")] == pytest.approx(1.0)  # unknown kind: a linked entity's fit
    assert fit[("Born", "name")] == pytest.approx(0.9)
    score = {(c.text, c.kind): c.score for c in choice.candidates}
    assert score[("Nicomachus", "entity")] > score[("Born", "name")]
