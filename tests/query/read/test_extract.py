"""Candidate extraction: what passages, table rows, infoboxes and statements offer as answers."""

from __future__ import annotations

from query.read.extract import cell_values, extract, prose_candidates
from query.retrieve.evidence_store import EvidenceRow
from tests.query.read.conftest import row, texts


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
