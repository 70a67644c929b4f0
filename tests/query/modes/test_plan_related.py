"""A superlative over a named entity's related items ("Which of Laos's neighbours is the most
populous?"), read by the rules and executed by the plan mode.

On the sample index every related set reaches outside the dumps, so the engine must refrain and name the
members it lacks. The answering path runs on a second, tiny index built here from real dump lines: Laos
with its borders cut to the neighbours the dumps hold (China and Thailand), and those two entities as the
dumps have them — a complete set. Expected values are read from the raw JSON, as in ``test_plan_mode``.
"""

from __future__ import annotations

import bz2
import json
import re
from decimal import Decimal
from pathlib import Path

import pytest

from ingest.pipeline import IngestInputs, run_ingest
from ingest.shard_plan import IngestOptions
from query import Engine, EngineConfig
from query.understand.plan import RulePlanner
from tests.query.modes.test_plan_mode import SQ_KM, amount, best, current, dump, label, step

__all__ = ["dump"]  # the raw dump fixture, shared with the plan mode's tests

LAOS, BORDERS = "Q819", "P47"


@pytest.fixture(scope="module")
def engine(sample_index):
    _, result = sample_index
    with Engine.open(result.version_dir, EngineConfig(reader="candidates")) as engine:
        yield engine


def neighbours(entity: dict) -> list[str]:
    """Best-rank neighbours without an end time, as the dump states them."""
    return [
        c["mainsnak"]["datavalue"]["value"]["id"]
        for c in best(entity, BORDERS)
        if "P582" not in c.get("qualifiers", {})
    ]


@pytest.mark.parametrize(
    ("question", "relation", "ranked", "then"),
    [
        ("Which of Belgium's neighbours has the most inhabitants?", "P47", "P1082", None),
        ("Which of Chile's neighbours is the largest?", "P47", "P2046", None),
        ("the most populous of Chile's neighbours", "P47", "P1082", None),
        ("Which country bordering Germany has the smallest population?", "P47", "P1082", None),
        ("Of the countries that border Brazil, which is the biggest by area?", "P47", "P2046", None),
        ("Which of Mannheim's twin towns has the most people?", "P190", "P1082", None),
        ("What is the population of Belgium's largest neighbour?", "P47", "P2046", "P1082"),
        ("What is the capital of Belgium's most populous neighbour?", "P47", "P1082", "P36"),
    ],
)
def test_the_rules_read_the_set_the_ranking_and_what_follows(engine, question, relation, ranked, then):
    plan = RulePlanner(engine.properties).run(engine.understand(question))
    assert plan.operation == "superlative" and plan.set is not None and plan.set.owner
    assert plan.resolved[f"set:{plan.set.relation}"].split(",")[0] == relation
    props = [plan.resolved[f"relation:{r}"].split(",")[0] for r in plan.relations]
    assert props == [ranked] + ([then] if then else [])
    assert plan.confidence >= 0.8 and not plan.unexplained


@pytest.mark.parametrize(
    "question",
    [
        "Who are Belgium's neighbours?",
        "What is the largest city in Germany?",
        "How many countries border Chile?",
    ],
)
def test_no_related_set_without_a_ranking_of_a_named_entity_s_items(engine, question):
    plan = RulePlanner(engine.properties).run(engine.understand(question))
    assert plan.set is None or plan.set.owner is None


def test_a_set_reaching_outside_the_index_is_refused_naming_what_it_lacks(engine, dump):
    result = engine.ask("Which of Laos's neighbours is the most populous?")
    members = neighbours(dump[LAOS])
    outside = [m for m in members if m not in dump]
    held = {m: amount(current(dump[m], "P1082")) for m in members if m in dump}
    assert outside and len(held) >= 2  # the data this test is about
    assert result.mode == "kg-plan" and result.unknown, result.route
    reason = step(result).reason
    assert f"{len(outside)} of Laos's P47 values ({len(members)}) are not in the index" in reason
    assert set(re.findall(r"Q\d+", reason.split("not in the index")[1].split(")")[0])) == set(outside)
    assert f"{label(dump, max(held, key=held.__getitem__))} would come first" in reason


def test_a_ranking_over_another_entity_s_neighbours_is_refused_not_read_from_text(engine, dump):
    """Before, this fell through to retrieve → read, which answered with names from loose evidence."""
    result = engine.ask("Which country bordering Germany has the smallest population?")
    assert [m for m in neighbours(dump["Q183"]) if m not in dump]
    assert result.mode == "kg-plan" and result.unknown and "not in the index" in step(result).reason


# -- a complete set: a tiny index of real dump lines --------------------------------------------------


@pytest.fixture(scope="module")
def complete(tmp_path_factory: pytest.TempPathFactory, dump, settings):
    """An index of Laos (its borders cut to the neighbours the dumps hold) and those neighbours."""
    from index.build import build_index

    laos = json.loads(json.dumps(dump[LAOS]))
    laos["claims"][BORDERS] = [
        c
        for c in laos["claims"][BORDERS]
        if c["mainsnak"].get("datavalue", {}).get("value", {}).get("id") in dump
    ]
    held = neighbours(laos)
    assert len(held) >= 2
    work = tmp_path_factory.mktemp("laos")
    path = work / "wikidata-laos.json.bz2"
    with bz2.open(path, "wt") as f:
        f.write("[\n" + ",\n".join(json.dumps(e) for e in (laos, *(dump[m] for m in held))) + "\n]\n")
    local = settings.model_copy(update={"state_dir": work / "state", "workers": 1})
    report = run_ingest(
        IngestInputs([path], [], None),
        work / "ingest",
        property_table=local.property_table,
        options=IngestOptions.from_settings(local),
    )
    result = build_index(local, ingest_dir=report.out_dir)
    with Engine.open(Path(result.version_dir), EngineConfig(reader="candidates")) as engine:
        yield engine, held


def test_a_complete_set_is_ranked_and_both_values_shown(complete, dump):
    engine, held = complete
    result = engine.ask("Which of Laos's neighbours is the most populous?")
    people = {m: amount(current(dump[m], "P1082")) for m in held}
    assert result.mode == "kg-plan" and result.answer == label(dump, max(people, key=people.__getitem__))
    assert {f.subject for f in result.facts} == set(held)
    assert f"over Laos's P47 values ({len(held)})" in step(result).reason


def test_a_complete_set_ranked_by_area_in_converted_units(complete, dump):
    engine, held = complete
    result = engine.ask("Which of Laos's neighbours is the smallest?")
    areas = {m: amount(current(dump[m], "P2046"), SQ_KM) for m in held}
    assert result.answer == label(dump, min(areas, key=areas.__getitem__)), result.route


def test_a_lookup_follows_on_the_one_ranked_first_in_the_year_asked(complete, dump):
    engine, held = complete
    people = {m: amount(current(dump[m], "P1082")) for m in held}
    smallest = min(people, key=people.__getitem__)
    by_year: dict[str, set[Decimal]] = {}
    for claim in dump[smallest]["claims"]["P1082"]:
        for when in claim.get("qualifiers", {}).get("P585", []) if claim["rank"] != "deprecated" else []:
            by_year.setdefault(when["datavalue"]["value"]["time"][1:5], set()).add(amount(claim))
    year = max(y for y, values in by_year.items() if len(values) == 1)  # a year the dump gives one value
    result = engine.ask(f"What was the population in {year} of the least populous of Laos's neighbours?")
    assert result.mode == "kg-plan", result.route
    assert Decimal(result.answer.replace(",", "")) == next(iter(by_year[year]))
    assert f"then {label(dump, smallest)}" in step(result).reason
