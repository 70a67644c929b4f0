"""The rules that read a set question's shape: which kind, which set, which quantities."""

from __future__ import annotations

import pytest

from query.understand.entity_sets import set_question, set_readings


@pytest.mark.parametrize(
    ("question", "kind", "noun", "modifiers", "fields"),
    [
        ("Is the population of the German cities normally distributed?", "distribution", "city", ("German",),
         {"measure": "population", "yes_no": True}),
        ("Does the area of the lakes follow a normal distribution?", "distribution", "lake", (),
         {"measure": "area"}),
        ("What is the correlation between the population and the area of the countries?", "correlation",
         "country", (), {"measure": "population", "measure2": "area", "yes_no": False}),
        ("Is there a relationship between elevation and population of the cities?", "correlation", "city", (),
         {"measure": "elevation", "measure2": "population", "yes_no": True}),
        ("Do the cities and the Chilean mountains differ in the variance of their elevation?",
         "variance test", "city", (), {"other": ("mountain", ("Chilean",))}),
        ("What is the standard deviation of the elevation of the mountains?", "aggregate", "mountain", (),
         {"aggregate": "stddev_samp", "measure": "elevation"}),
        ("What is the variance of the area of the cities in the index?", "aggregate", "city", (),
         {"aggregate": "var_samp", "measure": "area"}),
        ("Which country has the second most mountains in the index?", "group", "mountain", (),
         {"k": 2, "direction": "max"}),
        ("How many of the cities are in Germany?", "count", "city", ("Germany",), {"place": "Germany"}),
        ("How many of the Chilean places in the index have more than 100,000 inhabitants?", "count", "place",
         ("Chilean",), {"place": None, "threshold": 100_000.0, "operator": ">"}),
    ],
)  # fmt: skip
def test_shapes(question, kind, noun, modifiers, fields):
    asked = set_question(question)
    assert asked is not None and (asked.kind, asked.noun, asked.modifiers) == (kind, noun, modifiers)
    for name, value in fields.items():
        assert getattr(asked, name) == value, name


@pytest.mark.parametrize(
    "question",
    [
        "How many of the cities in the index are in the index?",  # no place named
        "Is the population of Berlin larger than that of Bonn?",
        "What is the relationship between Bonn and Cologne?",
    ],
)
def test_not_set_questions(question):
    assert set_question(question) is None


def test_a_class_or_a_quantity_after_which_country_has_the_most():
    readings = set_readings("Which country has the most inhabitants?")
    assert [r.kind for r in readings] == ["group", "superlative"]
    assert (readings[0].noun, readings[1].noun, readings[1].measure) == (
        "inhabitant",
        "country",
        "inhabitants",
    )
