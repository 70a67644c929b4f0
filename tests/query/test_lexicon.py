"""The lexicon's date words read every way a month is written, and its lists keep what they are for."""

from __future__ import annotations

import re

import pytest

from query import lexicon
from query.lexicon import (
    MAXSIM_STOPWORDS,
    MONTH_ALTERNATION,
    MONTH_GROUP,
    NUMBER_WORDS,
    SEARCH_STOPWORDS,
    TYPE_NOUNS,
    spoken_number,
)
from schemas.calendar import MONTH_NUMBERS


@pytest.mark.parametrize(
    ("written", "number"),
    [("September", 9), ("Sept.", 9), ("sep", 9), ("MAY", 5), ("Feb.", 2), ("december", 12)],
)
def test_month_group_reads_every_written_form(written, number):
    match = re.fullmatch(MONTH_GROUP, written, re.I)
    assert match is not None
    assert MONTH_NUMBERS[match["month"].lower().rstrip(".")] == number


def test_month_group_prefers_the_whole_name():
    match = re.match(MONTH_GROUP, "September 2017", re.I)
    assert match is not None and match["month"] == "September"


def test_month_alternation_is_case_as_printed():
    assert re.fullmatch(MONTH_ALTERNATION, "March") and not re.fullmatch(MONTH_ALTERNATION, "march")


def test_late_interaction_keeps_the_words_that_name_the_answer_type():
    assert not MAXSIM_STOPWORDS & {"who", "when", "where", "how", "many"}
    assert {"who", "when", "where", "how", "many"} <= SEARCH_STOPWORDS  # a search drops them


def test_no_noun_names_two_answer_types():
    """The type lists are merged into one dict, so a noun written in two would silently take one type."""
    lists = [lexicon._ENTITY, lexicon._OTHER, lexicon._NUMBER, lexicon._ORGANIZATION, lexicon._PLACE]
    words = [w for text in [*lists, lexicon._PERSON] for w in text.split()]
    assert len(words) == len(set(words))
    assert TYPE_NOUNS["capital"] == "place" and TYPE_NOUNS["president"] == "person"
    assert TYPE_NOUNS["year"] == "year" and TYPE_NOUNS["birthday"] == "date"


def test_number_words_are_indexed_by_their_value():
    assert NUMBER_WORDS.index("zero") == 0 and NUMBER_WORDS.index("twelve") == 12
    assert len(NUMBER_WORDS) == 21


@pytest.mark.parametrize(
    ("said", "value"), [("six", 6), ("nineteen", 19), ("sixty-five", 65), ("sixty five", 65), ("oh five", 5)]
)
def test_a_number_said_in_words(said: str, value: int) -> None:
    assert spoken_number(said) == value


def test_a_word_that_is_no_number_is_none() -> None:
    assert spoken_number("sixty apples") is None and spoken_number("") is None
