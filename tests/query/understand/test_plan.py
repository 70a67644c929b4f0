"""The rule planner on the real sample index: operations, chains, sets and constraints read from
questions worded unlike the engine's templates, and the plan's own account of what it left unread."""

from __future__ import annotations

import time

import pytest

from query.understand.linking import EntityLinker, EntityTable
from query.understand.plan import RulePlanner, property_for
from query.understand.understanding import Understander

BELGIUM, CHILE, SAARLAND = "Q31", "Q298", "Q1201"


@pytest.fixture(scope="module")
def understander(reader, extractor) -> Understander:
    return Understander(extractor, EntityLinker(reader.aliases, EntityTable.from_reader(reader)), 5)


@pytest.fixture(scope="module")
def planner(properties) -> RulePlanner:
    return RulePlanner(properties)


def plan(understander, planner, question: str):
    return planner.run(understander.run(question))


@pytest.mark.parametrize(
    ("phrase", "prop"),
    [
        ("how many folks call it home", "P1082"),
        ("what is its headcount", "P1082"),
        ("how much ground does it cover", "P2046"),
        ("at what altitude does it sit", "P2044"),
        ("when did it come into being", "P571"),
        ("how many countries border it", "P47"),
        ("how many official languages", "P37"),
        ("what is its zip code", "P281"),
        ("what is its head count", "P1082"),
        ("how many human beings dwell there", "P1082"),
        ("does it touch its neighbour", "P47"),
        ("which takes up less space", "P2046"),
        ("when did he pass away", "P570"),
        ("where on the web can I read about it", "P856"),
        ("how many metres up does it lie", "P2044"),
        ("which languages have official status there", "P37"),
        ("when did it become a country", "P571"),
        ("how many boroughs has it got", "P150"),
        ("who is younger", "P571"),
        ("what is its gdp per head", "P2132"),
        ("where is output per person lower", "P2132"),
        ("which year does it go back to", "P571"),
        ("how many kids are out of school there", "P2573"),
        ("how many children does a woman there have", "P4841"),
        ("which does best on the human development index", "P1081"),
        # fold9's trace: a country's economy and laws, said as people say them
        ("how fast are prices going up there", "P1279"),
        ("what share of the workforce is jobless", "P1198"),
        ("by how much did its economy grow in real terms", "P2219"),
        ("how big is its gdp at purchasing power parity", "P4010"),
        ("what is the ppp output per head", "P2299"),
        ("at what age do you come of age there", "P2997"),
        ("how old must a bride be to get married", "P3000"),
        ("where does the gene start", "P644"),
        ("what is the paper's doi", "P356"),
        ("which pages of the journal", "P304"),
    ],
)
def test_everyday_words_map_to_properties(phrase: str, prop: str):
    reading = property_for(phrase)
    assert reading is not None and reading.property == prop, (phrase, reading)


def test_a_comparison_answers_a_name_whatever_the_property(understander, planner):
    p = plan(understander, planner, "Which has more inhabitants, Chile or Belgium?")
    assert p.operation == "compare" and p.answer_kind == "entity"
    assert p.set is not None and p.set.entities == ["Chile", "Belgium"]
    assert p.constraints.pick == "max"
    assert p.resolved[f"relation:{p.relations[-1]}"].split(",")[0] == "P1082"
    assert p.confidence >= 0.8 and p.source == "rules"


def test_a_date_comparison_wants_the_earliest_for_older(understander, planner):
    p = plan(understander, planner, "Which is older, Belgium or Chile?")
    assert p.operation == "compare" and p.constraints.pick == "min"
    assert p.resolved[f"relation:{p.relations[-1]}"].startswith("P571")


def test_a_chain_keeps_its_relations_in_order(understander, planner):
    p = plan(understander, planner, "What is the area of the capital of Saarland?")
    assert p.operation == "lookup"
    assert p.mentions[0] == "Saarland"
    assert [p.resolved[f"relation:{r}"].split(",")[0] for r in p.relations] == ["P36", "P2046"]


def test_a_backward_hop_is_marked(understander, planner):
    p = plan(understander, planner, "What is the population of the state whose capital is Saarbrücken?")
    assert p.relations[0] == "^capital" and p.mentions[0] == "Saarbrücken"
    assert p.resolved["relation:^capital"].startswith("^P36")


def test_a_count_counts_a_property_of_one_subject(understander, planner):
    p = plan(understander, planner, "Belgium shares borders with how many countries?")
    assert p.operation == "count" and p.answer_kind == "number" and p.mentions == ["Belgium"]
    assert p.resolved[f"relation:{p.relations[-1]}"] == "P47"


def test_population_is_not_a_count(understander, planner):
    p = plan(understander, planner, "How many people live in Chile?")
    assert p.operation == "lookup" and p.answer_kind == "number"


def test_a_superlative_names_a_class_and_a_place(understander, planner):
    p = plan(understander, planner, "Which Chilean mountain is the tallest?")
    assert p.operation == "superlative" and p.answer_kind == "entity"
    assert p.set is not None and (p.set.class_phrase, p.set.place) == ("mountain", "Chilean")
    assert p.constraints.pick == "max"


def test_a_yes_no_threshold_keeps_number_and_unit(understander, planner):
    p = plan(understander, planner, "Is Belgium larger than 25,000 square kilometres?")
    assert p.operation == "yes_no" and p.answer_kind == "boolean"
    c = p.constraints
    assert (c.comparator, c.threshold) == (">", 25000.0) and c.threshold_unit.startswith("square kilomet")


def test_a_year_asked_is_a_constraint(understander, planner):
    p = plan(understander, planner, "In 1975, how many residents did Chile count?")
    assert p.constraints.years == [1975]


def test_an_unread_question_says_so(understander, planner):
    p = plan(understander, planner, "What flavour of ice cream does Belgium prefer?")
    assert p.confidence < 0.6
    assert {"flavour", "ice", "cream"} & set(p.unexplained)


def test_planning_takes_milliseconds(understander, planner):
    understanding = understander.run("Which of Chile and Belgium covers more ground?")
    started = time.perf_counter()
    for _ in range(20):
        planner.run(understanding)
    assert (time.perf_counter() - started) / 20 < 0.05  # a loose bound: rules, no model, no index read


def test_a_comparison_without_or_is_still_a_comparison(understander, planner):
    p = plan(understander, planner, "Chile versus Belgium: which one is home to more people?")
    assert p.operation == "compare" and p.answer_kind == "entity" and p.constraints.pick == "max"
    p = plan(understander, planner, "Chile against Belgium: which nation has more residents?")
    assert p.operation == "compare" and p.answer_kind == "entity"
    p = plan(understander, planner, "Of Chile and Belgium, which takes up less space?")
    assert p.operation == "compare" and p.constraints.pick == "min"
    assert p.resolved[f"relation:{p.relations[-1]}"].startswith("P2046")


def test_a_yes_no_question_may_open_with_a_time(understander, planner):
    p = plan(understander, planner, "In 1990, did Chile have more inhabitants than Belgium?")
    assert p.operation == "yes_no" and p.answer_kind == "boolean"
    assert (p.constraints.comparator, p.constraints.years) == (">", [1990])


@pytest.mark.parametrize(
    ("question", "threshold"),
    [
        ("Is Chile a country of over a million people?", 1e6),
        ("Do women in Chile have more than two children on average?", 2.0),
        ("Does Belgium have more than eleven million inhabitants?", 11e6),
    ],
)
def test_a_threshold_may_be_said_in_words(understander, planner, question, threshold):
    p = plan(understander, planner, question)
    assert p.operation == "yes_no" and (p.constraints.comparator, p.constraints.threshold) == (">", threshold)


def test_a_year_said_in_words_is_read_and_explained(understander, planner):
    p = plan(understander, planner, "How many people lived in Chile in nineteen seventy?")
    assert p.constraints.years == [1970] and p.unexplained == [] and p.confidence >= 0.8


@pytest.mark.parametrize(
    ("question", "relation", "entity"),
    [
        ("How large is Saarbrücken's country?", "country", "Saarbrücken"),
        ("What is the population of the state governed from Saarbrücken?", "^capital", "Saarbrücken"),
        ("How big is the country that Saarbrücken is a city of?", "country", "Saarbrücken"),
        ("What is the area of the country where Saarbrücken lies?", "country", "Saarbrücken"),
        ("When was the state that Saarbrücken belongs to founded?", "country", "Saarbrücken"),
        ("How high is the city where Hegel was born?", "birthplace", "Hegel"),
    ],
)
def test_chains_in_other_words(understander, planner, question, relation, entity):
    p = plan(understander, planner, question)
    assert p.relations[0] == relation and p.mentions[0] == entity, p


def test_doing_best_is_a_superlative_cue(understander, planner):
    p = plan(understander, planner, "Which European country does best on human development?")
    assert p.operation == "superlative" and p.constraints.pick == "max", p
    p = plan(understander, planner, "Which Asian country fares worst on human development?")
    assert p.operation == "superlative" and p.constraints.pick == "min", p


def test_an_average_number_is_not_a_count(understander, planner):
    p = plan(understander, planner, "What is the average number of births per woman in Chile?")
    assert p.operation == "lookup" and p.resolved[f"relation:{p.relations[-1]}"] == "P4841"


def test_a_word_that_only_says_which_end_yields_to_the_property_named(understander, planner):
    """ "lower" reads as elevation only when nothing else names a property: here the property table's
    label "life expectancy" (no everyday phrase of it) is what is compared."""
    p = plan(understander, planner, "Whose life expectancy is lower, Chile's or Belgium's?")
    assert p.operation == "compare" and p.constraints.pick == "min"
    assert p.resolved[f"relation:{p.relations[-1]}"] == "P2250", (p.relations, p.resolved, p.notes)


def test_the_worst_of_a_property_that_is_bad_when_high_is_its_highest(understander, planner):
    p = plan(understander, planner, "Which European country does worst on inflation?")
    assert p.operation == "superlative" and p.constraints.pick == "max", p


def test_a_year_that_names_the_subject_is_no_time_constraint(understander, planner):
    p = plan(understander, planner, 'How many pages long is the 1884 article "Address in Medicine"?')
    assert p.constraints.years == [], p.constraints
    p = plan(understander, planner, "How many people lived in Chile in 1990?")
    assert p.constraints.years == [1990], p.constraints
