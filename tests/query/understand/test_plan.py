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
