"""Mention spotting on the real sample index: quoted, known and capitalized spans, and the location."""

from __future__ import annotations

import itertools

import pytest

from query.lexicon import WH_WORDS
from schemas.query import Intent


def texts(intent: Intent) -> list[str]:
    return [m.text for m in intent.mentions]


def test_offsets_round_trip_on_every_sample_question(extractor, sample_questions):
    assert len(sample_questions) == 139
    for question in sample_questions:
        intent = extractor.run(question)
        spans = [(m.start, m.end) for m in intent.mentions]
        assert spans == sorted(spans)
        assert all(a_end <= b_start for (_, a_end), (b_start, _) in itertools.pairwise(spans))
        for m in intent.mentions:
            assert question[m.start : m.end] == m.text, question
            assert m.text.lower() not in WH_WORDS
        first = question.split()[0]
        if first.lower() in WH_WORDS:  # the wh-word asks; a mid-sentence "What I Like About You" names
            assert all(m.start > 0 for m in intent.mentions)
        if intent.answer_type_phrase:
            assert intent.answer_type_phrase not in {m.text.lower() for m in intent.mentions}


@pytest.mark.parametrize(
    ("index", "expected"),
    [
        (0, ["Robert", "Nonso Anozie"]),
        (2, ["Kishore Kumar", "Alankar Chitra", "Shanker Mukherjee"]),
        (8, ["Vancouver Canucks", "Rob Davison", "Toronto Marlies"]),
        (9, ["Jonathan Roberts", "Dancing with the Stars"]),
        (10, ["George Augustus Vaughn Jr.", "WW 1"]),
        (15, ["Trevor Eyster", "Steve Slavkin", "Thomas Hill"]),
        (20, ["CEO", "European Organisation for the Exploitation of Meteorological Satellites"]),
        (22, ["20th Century Fox", "Walt Disney Pictures", "Singapore"]),
        (24, ["2016 USC Trojans football team"]),
        (30, ["Boss"]),
        (64, ["Aksys Games", "BlazBlue : Calamity Trigger"]),
        (89, ["Belarusian Premier League", "Kingdom of Poland"]),
        (110, ["Derek Hough", "Dancing with the Stars", "What I Like About You"]),
    ],
)
def test_ottqa_sample_mentions(extractor, sample_questions, index, expected):
    assert texts(extractor.run(sample_questions[index])) == expected


def test_known_names_inside_unknown_capitalized_spans(extractor, sample_questions):
    # a year before a known name is a time, not part of the mention
    intent = extractor.run(sample_questions[1])
    assert texts(intent) == ["Sevens Grand Prix Series"]
    # an unknown word glued to a known one keeps the whole span: "Bradford" alone would mislead
    assert texts(extractor.run(sample_questions[3])) == ["Bradford A.F.C"]


def test_quoted_spans_are_mentions(extractor):
    intent = extractor.run('Which team won the "Stanley Cup" in 1995?')
    assert texts(intent) == ["Stanley Cup"]
    assert intent.time.years == [1995]


def test_a_capitalized_first_word_is_no_name_unless_known(extractor):
    intent = extractor.run("Belgium has how many inhabitants ?")
    assert texts(intent) == ["Belgium"] and intent.answer_type == "number"
    assert (
        texts(extractor.run("During what years was Belgium part of the Kingdom of Poland ?"))[0] == "Belgium"
    )


def test_location_follows_in_at_from_and_must_be_a_place(extractor):
    assert extractor.run("How many people lived in Chicago in 2010?").location == "Chicago"
    assert extractor.run("How many academic staff are at the university in Budapest ?").location == "Budapest"
    assert extractor.run("What was the population of Belgium in 2015?").location is None
    assert extractor.run("What year was the club in Danish first division founded ?").location is None


def test_unknown_names_are_kept_and_nothing_is_invented(extractor):
    intent = extractor.run("Who founded Xqzvbnmw Plorkt?")
    assert texts(intent) == ["Xqzvbnmw Plorkt"]
    intent = extractor.run("what is the meaning of life ?")
    assert intent.mentions == [] and intent.answer_type == "other"


@pytest.mark.parametrize(
    ("question", "expected"),
    [
        ("Name Portugal's official languages.", ["Portugal"]),
        ("Tell me Chile's capital.", ["Chile"]),
    ],
)
def test_an_opening_verb_does_not_stick_to_the_name_after_it(extractor, question, expected):
    """ "Name" opens the question capitalized; the known name after it is a mention of its own (the verb
    may be one too, as any known capitalized first word is: the planner reads no entity into it)."""
    found = texts(extractor.run(question))
    assert found[-1:] == expected and not any(" " in m and expected[0] in m for m in found), found
