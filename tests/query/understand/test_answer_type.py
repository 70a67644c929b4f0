"""The answer type read from the wh-phrase: "who" a person, "which *city*" a place, "how many" a number."""

from __future__ import annotations

import pytest

from query.understand.answer_type import type_noun, wh_phrase
from query.understand.tokens import tokenize
from schemas.query import Intent


def texts(intent: Intent) -> list[str]:
    return [m.text for m in intent.mentions]


@pytest.mark.parametrize(
    ("question", "answer_type", "phrase"),
    [
        ("Who directed Apollo 11?", "person", None),
        ("Whose play was the film based on?", "person", None),
        ("When was Albert Einstein born?", "date", None),
        ("What year was Aristotle born?", "year", "year"),
        ("In which year did Apollo 11 land?", "year", "year"),
        ("How many people lived in Chicago in 2010?", "number", "people"),
        ("How much did the film cost?", "number", "how much"),
        ("Where was Abraham Lincoln born?", "place", None),
        ("Which city is the capital of Portugal?", "place", "city"),
        ("Which team won the 1995 Tooheys 1000?", "organization", "team"),
        ("What Colombian cyclist won the 2019 Tour de France?", "person", "cyclist"),
        ("Which television show starring Trevor Eyster was based on a book?", "entity", "television show"),
        ("What is the birth date of Albert Einstein?", "date", "birth date"),
        ("What is the capital city of Portugal?", "place", "capital city"),
        ("What is the full name of Andre Agassi?", "other", "name"),
        ("What did Andre Agassi win?", "other", None),
        ("The 1995 Tooheys 1000 driver who was second-to-last was born where ?", "place", None),
        (
            "Of the games published by Aksys Games , the developer made a game with narration by whom ?",
            "person",
            None,
        ),
        ("Is 20th Century Fox or Walt Disney Pictures the studio behind the film ?", "entity", None),
    ],
)
def test_answer_type_from_the_wh_phrase(question, answer_type, phrase):
    wh = wh_phrase(tokenize(question))
    assert (wh.answer_type, wh.phrase) == (answer_type, phrase)


def test_wh_phrase_and_type_noun_are_no_mentions(extractor):
    intent = extractor.run("Which city is the capital of Portugal?")
    assert texts(intent) == ["Portugal"]
    assert intent.relation == "capital"  # "which city" is the wh-phrase, not the relation
    intent = extractor.run("What Kishore Kumar song was in a movie directed by Ramesh Sippy ?")
    assert intent.answer_type_phrase == "song"
    assert texts(intent) == ["Kishore Kumar", "Ramesh Sippy"]


def test_type_nouns_are_found_in_the_plural_too():
    assert type_noun("cities") == type_noun("city") == "place"
    assert type_noun("players") == "person"
    assert type_noun("happened") is None
