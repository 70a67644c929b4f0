"""The candidate reader's parts: what it extracts from passages, table rows and statements, how its
scorers weigh candidates, and how a scorer is fitted on benchmark candidates."""

from __future__ import annotations

import math

import numpy as np
import pytest

from query.evaluation.runner import fit_answer_scorer
from query.read.candidates import (
    ANSWER_FEATURES,
    AnswerScorer,
    CandidateAnswerer,
    cell_values,
    extract,
    prose_candidates,
)
from query.retrieve.evidence_store import EvidenceRow
from schemas.query import Intent


def row(source_type: str, text: str, title: str = "Page", entity_ids: list[str] | None = None) -> EvidenceRow:
    return EvidenceRow(f"id-{abs(hash(text))}", source_type, text, title, title, entity_ids or [], {})


def texts(drafts) -> set[str]:
    return {d.text for d in drafts}


def test_prose_candidates_cover_the_shapes_answers_take() -> None:
    # as OTT-QA releases text: spaces around punctuation
    text = (
        "It was headquartered in Roanoke , Virginia . CEO Penelope Endersby was born on November 15 , 1962 "
        "and won $ 130 million , 10th place and 20% of 1,000 people in the 2016 Summer Olympics twice . "
        "The Somme department dates from 11 May and September 1998 ."
    )
    found = texts(prose_candidates(text))
    for expected in (
        "Roanoke , Virginia",
        "Penelope Endersby",
        "November 15 , 1962",
        "$ 130 million",
        "10th place",
        "20%",
        "1,000 people",
        "2016 Summer Olympics",
        "twice",
        "Somme",
        "11 May",
        "September 1998",
        "1962",
    ):
        assert expected in found, expected
    assert "The" not in found and "$ 130 million and" not in found


def test_cell_values_keep_their_headers() -> None:
    assert cell_values("Year: 1995 (68th), Film: A Little Princess") == [
        ("Year", "1995 (68th)"),
        ("Film", "A Little Princess"),
    ]


def test_structured_values_carry_their_header() -> None:
    table = row("table", "Page / Awards: Year: 1928, Film: Sunrise, Interior decorator: Rochus Gliese")
    by_text = {d.text: d for d in extract(table, lambda _e: None)}
    assert by_text["Rochus Gliese"].structured and by_text["Rochus Gliese"].header == "Interior decorator"
    infobox = row(
        "infobox", "Albert Einstein / Infobox scientist: Doctoral advisor: Alfred Kleiner", "Albert Einstein"
    )
    by_text = {d.text: d for d in extract(infobox, lambda _e: None)}
    assert by_text["Alfred Kleiner"].header == "Doctoral advisor"


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


def test_a_name_ends_at_a_sentence_end_but_not_at_an_abbreviation() -> None:
    text = (
        "Stagira, east of Thessaloniki. His father Nicomachus. George Vaughn Jr. Smith lived in St. Louis ."
    )
    found = {name.strip(" .") for name in texts(prose_candidates(text))}  # extract() strips the stop
    assert {"Thessaloniki", "Nicomachus", "George Vaughn Jr. Smith", "St. Louis"} <= found
    assert not any(". His" in name or ". George" in name for name in found)


def test_a_bare_entity_id_is_never_a_candidate():
    # the slice has no label for Belgium's head of government: the verbalized statement says the id
    row = EvidenceRow(
        evidence_id="e1",
        source_type="kg",
        text="Belgium, head of government, Q950958, start time: 1 October 2014",
        title="Belgium",
        page_title="Belgium",
        entity_ids=["Q31", "Q950958"],
        raw_provenance={},
    )
    texts = [d.text for d in extract(row, lambda _id: None)]
    assert "Q950958" not in texts and "1 October 2014" in texts
