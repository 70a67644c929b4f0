"""The support check: an answer is returned only in a form a shown row writes."""

from __future__ import annotations

import pytest

from query.read.support import find_support, trim_answer

TABLE = "1980 Summer Olympics / Medal table: Rank: 7th, Nation: Italy, Gold: 8, Total: 15"
PASSAGE = "Sunrise: The film won three awards at the ceremony of May 16, 1929 in Hollywood ."
KG = "Belgium: area: 30,528 square kilometre"


@pytest.mark.parametrize(
    ("answer", "texts", "cited", "expected"),
    [
        # a span, returned as the row writes it (case included), cited row first
        ("italy", [PASSAGE, TABLE], [1], ("Italy", None, [1], "span")),
        # the same value written otherwise: digits for a number word, a suffix, a thousands separator
        ("3", [PASSAGE], [0], ("three", None, [0], "normalized")),
        ("7", [TABLE], [0], ("7th", None, [0], "normalized")),
        ("30528", [KG], [0], ("30,528", None, [0], "normalized")),
        # a date written in another order
        ("16 May 1929", [PASSAGE], [0], ("May 16, 1929", None, [0], "normalized")),
        # a KG quantity: the amount, the unit apart
        ("30,528 square kilometre", [KG], [0], ("30,528", "square kilometre", [0], "span")),
        # an answer in an uncited row still counts, with that row as the holder
        ("Hollywood", [TABLE, PASSAGE], [0], ("Hollywood", None, [1], "span")),
    ],
)
def test_supported_forms(answer, texts, cited, expected) -> None:
    support = find_support(answer, texts, cited, split_units=[t == KG for t in texts])
    assert support is not None
    assert (support.text, support.unit, support.rows, support.kind) == expected


@pytest.mark.parametrize(
    "answer",
    [
        "France",  # in no row
        "Ital",  # part of a word is not a span
        "1990 World Cup",  # a number followed by a name is not a quantity with a unit
        "",
        "  ",
    ],
)
def test_unsupported_answers(answer: str) -> None:
    assert find_support(answer, [TABLE, PASSAGE, KG], [0]) is None


def test_the_cited_row_is_read_first_in_either_form() -> None:
    texts = ["Open: score 6-7 , 7-5", "Smith: She won seven singles titles on the ITF circuit ."]
    support = find_support("7", texts, [1])
    assert support is not None and (support.text, support.rows) == ("seven", [1])


def test_a_quantity_in_prose_keeps_its_unit_as_written() -> None:
    text = "Lake X: The lake covers 141 square kilometre of the valley ."
    support = find_support("141 square kilometre", [text], [0], split_units=[False])
    assert support is not None and support.text == "141 square kilometre" and support.unit is None


def test_every_holder_is_listed_cited_first() -> None:
    texts = ["A: Paris is big", "B: nothing here", "C: Paris again"]
    support = find_support("Paris", texts, [2])
    assert support is not None and support.rows == [2, 0]


@pytest.mark.parametrize(
    ("raw", "expected"),
    [(' "Paris". ', "Paris"), ("Washington, D.C.", "Washington, D.C."), ("“Le Monde”", "Le Monde")],
)
def test_trim_answer(raw: str, expected: str) -> None:
    assert trim_answer(raw) == expected
