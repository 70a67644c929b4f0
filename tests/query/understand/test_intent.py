"""Structured intent (stage 1): the parts assembled into one ``Intent``, on the real sample index."""

from __future__ import annotations

import pytest

from query.understand.intent import RuleIntentExtractor
from query.understand.settings import IntentSettings
from schemas.query import Intent


def texts(intent: Intent) -> list[str]:
    return [m.text for m in intent.mentions]


def test_population_of_belgium_in_2015(extractor):
    intent = extractor.run("What was the population of Belgium in 2015?")
    assert intent.extractor == "rules"
    assert intent.answer_type == "number"
    assert intent.answer_type_phrase == "population"
    assert texts(intent) == ["Belgium"]
    assert intent.time.years == [2015] and intent.time.dates == [] and intent.time.cues == []
    assert intent.relation is not None and "population" in intent.relation
    assert intent.properties[0].property == "P1082"
    assert intent.location is None  # "of Belgium", not "in Belgium"
    assert intent.keywords == ["population", "belgium", "2015"]


@pytest.mark.parametrize(
    ("question", "prop"),
    [
        ("Who directed Apollo 11?", "P57"),
        ("When was Albert Einstein born?", "P569"),
        ("Where was Abraham Lincoln born?", "P19"),
        ("Which city is the capital of Portugal?", "P36"),
        ("How many people lived in Chicago in 2010?", "P1082"),
    ],
)
def test_relation_and_answer_type_choose_the_property(extractor, question, prop):
    intent = extractor.run(question)
    assert intent.properties[0].property == prop


def test_constructor_validates_and_serializes(reader, properties):
    with pytest.raises(ValueError, match="max_ngram"):
        IntentSettings(max_ngram=0)
    extractor = RuleIntentExtractor(reader.aliases, properties, IntentSettings(max_properties=2))
    config = extractor.to_dict()
    assert config == {"name": "rules", "max_ngram": 6, "max_properties": 2}
    assert len(extractor.run("When was Albert Einstein born?").properties) == 2
