"""Structured intent (stage 1) and relation -> property matching, on the real sample index."""

from __future__ import annotations

import itertools
import json

import pytest

from query.understand.intent import WH_WORDS, RuleIntentExtractor, tokenize
from query.understand.linking import EntityTable
from query.understand.properties import PropertyLabels, stem
from schemas.query import Intent
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def properties(settings) -> PropertyLabels:
    return PropertyLabels.load(settings.property_table)


@pytest.fixture(scope="module")
def extractor(reader, properties) -> RuleIntentExtractor:
    return RuleIntentExtractor(reader.aliases, properties, entities=EntityTable.from_reader(reader))


@pytest.fixture(scope="module")
def sample_questions() -> list[str]:
    lines = (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]


def texts(intent: Intent) -> list[str]:
    return [m.text for m in intent.mentions]


# -- properties -----------------------------------------------------------------------------------


def test_property_table_loads_every_row(properties):
    assert len(properties) > 12_000
    assert properties.label("P1082") == "population"
    assert properties.datatype("P1082") == "quantity"


@pytest.mark.parametrize(
    ("phrase", "answer_type", "expected"),
    [
        ("population", None, "P1082"),
        ("place of birth", None, "P19"),
        ("born", "date", "P569"),
        ("born", "place", "P19"),
        ("died", "date", "P570"),
        ("directed", "person", "P57"),
        ("wrote", "person", "P50"),
        ("founded", "year", "P571"),
        ("capital", "place", "P36"),
        ("people lived", "number", "P1082"),
    ],
)
def test_relation_phrases_match_their_property_first(properties, phrase, answer_type, expected):
    matches = properties.match(phrase, 5, answer_type=answer_type)
    assert matches[0].property == expected
    assert all(0.0 <= m.score <= 1.0 for m in matches)
    assert [m.score for m in matches] == sorted((m.score for m in matches), reverse=True)


def test_an_exact_label_scores_one_and_external_ids_rank_below_items(properties):
    best = properties.match("population", 3)[0]
    assert (best.property, best.matched, best.score) == ("P1082", "population", 1.0)
    matches = properties.match("imdb", 10)  # only external ids carry this word
    assert matches and all(m.score <= 0.5 for m in matches)


def test_phrases_without_content_words_match_nothing(properties):
    assert properties.match("of the", 5) == []
    assert properties.match("xqzvbnmw", 5) == []
    assert properties.match("population", 0) == []


def test_stemming_joins_verb_forms():
    assert stem("directed") == stem("directing") == stem("direct")
    assert stem("players") == stem("player")
    assert stem("cities") == "city"
    assert stem("starring") == stem("star")


# -- the worked example ---------------------------------------------------------------------------


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


# -- answer types ---------------------------------------------------------------------------------


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
def test_answer_type_from_the_wh_phrase(extractor, question, answer_type, phrase):
    intent = extractor.run(question)
    assert (intent.answer_type, intent.answer_type_phrase) == (answer_type, phrase)


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


def test_wh_phrase_and_type_noun_are_no_mentions(extractor):
    intent = extractor.run("Which city is the capital of Portugal?")
    assert texts(intent) == ["Portugal"]
    assert intent.relation == "capital"  # "which city" is the wh-phrase, not the relation
    intent = extractor.run("What Kishore Kumar song was in a movie directed by Ramesh Sippy ?")
    assert intent.answer_type_phrase == "song"
    assert texts(intent) == ["Kishore Kumar", "Ramesh Sippy"]


# -- time -----------------------------------------------------------------------------------------


def test_time_cues_in_order(extractor):
    intent = extractor.run("Who was the first president of Algeria before 1990?")
    assert intent.time.cues == ["first", "before"]
    assert intent.time.years == [1990]
    assert texts(intent) == ["Algeria"]
    assert extractor.run("When was the most recent Segunda Liga player of the month born ?").time.cues == [
        "last"
    ]
    assert extractor.run("What was the latest album of Aristotle since 2001?").time.cues == ["last", "since"]


def test_first_name_is_no_time_cue(extractor):
    intent = extractor.run(
        "What was the first name of the protected area in the Philippines located in La Union ?"
    )
    assert intent.time.cues == []


@pytest.mark.parametrize(
    "question",
    [
        "What happened in Belgium on 1 January 2015?",
        "What happened in Belgium on January 1, 2015?",
        "What happened in Belgium on 2015-01-01?",
        "What happened in Belgium on January 1 , 2015 ?",
    ],
)
def test_full_dates_become_iso(extractor, question):
    intent = extractor.run(question)
    assert intent.time.dates == ["2015-01-01"]
    assert intent.time.years == [2015]
    assert texts(intent) == ["Belgium"]  # the month is no mention


def test_impossible_dates_are_dropped_but_keep_their_year(extractor):
    intent = extractor.run("What happened in Belgium on 31 February 2015?")
    assert intent.time.dates == [] and intent.time.years == [2015]


def test_years_in_names_counts_and_ranges(extractor):
    intent = extractor.run("Where is the 2018 Reno 1868 FC season transfer participant being sent ?")
    assert intent.time.years == [2018]  # 1868 belongs to the club's name
    intent = extractor.run("This Kishore Kumar song had a lyricist that penned over 1500 songs ?")
    assert intent.time.years == []
    intent = extractor.run("What position does 2009\u201310 season Canucks player Rob Davison hold ?")
    assert intent.time.years == [2009, 2010]
    intent = extractor.run("Which player retired in Sept 2017 ?")
    assert intent.time.years == [2017] and texts(intent) == []


# -- mentions -------------------------------------------------------------------------------------


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


def test_tokens_keep_inner_punctuation():
    words = [t.text for t in tokenize("Bradford A.F.C , Jin Chao-chun , 9,566 fans ; 2009\u201310 ; O'Brien")]
    assert words == ["Bradford", "A.F.C", "Jin", "Chao-chun", "9,566", "fans", "2009\u201310", "O'Brien"]


def test_constructor_validates_and_serializes(reader, properties):
    with pytest.raises(ValueError, match="max_ngram"):
        RuleIntentExtractor(reader.aliases, properties, max_ngram=0)
    extractor = RuleIntentExtractor(reader.aliases, properties, max_properties=2)
    config = extractor.to_dict()
    assert config == {"name": "rules", "max_ngram": 6, "max_properties": 2}
    assert len(extractor.run("When was Albert Einstein born?").properties) == 2
