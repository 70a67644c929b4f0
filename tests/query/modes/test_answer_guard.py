"""Answers held to what the question asks (issue 35 part 4), through the engine on the real sample index.

What a name is, or is not, is read here from the raw dumps (every label and alias of both Wikidata
samples, every page title and the text of the Wikipedia sample), not through the index under test.
"""

from __future__ import annotations

import bz2
import gzip
import json
import re

import pytest

from query import Engine, EngineConfig
from query.modes.answer_guard import NOT_A_QUESTION
from tests.conftest import ENWIKI_SAMPLE, OTTQA, WIKIDATA_API, WIKIDATA_ITEMS, raw_entities


@pytest.fixture(scope="module")
def engine(sample_index):
    _, result = sample_index
    with Engine.open(result.version_dir, EngineConfig(reader="candidates")) as engine:
        yield engine


@pytest.fixture(scope="module")
def wiki_text() -> str:
    with bz2.open(ENWIKI_SAMPLE, "rt", encoding="utf-8") as f:
        return f.read()


def names() -> set[str]:
    """Every label and alias, in any language, of both sample dumps, lower-cased."""
    out = set()
    for path in (WIKIDATA_ITEMS, WIKIDATA_API):
        for entity in raw_entities(path).values():
            out |= {v["value"].lower() for v in entity.get("labels", {}).values()}
            out |= {a["value"].lower() for v in entity.get("aliases", {}).values() for a in v}
    return out


def step(result, mode: str):
    return next(s for s in result.route if s.mode == mode)


def test_a_name_no_entity_or_page_carries_gets_unknown_with_the_reason(engine, wiki_text) -> None:
    # Atlantis is no entity and no page; the Wikipedia sample writes it once, inside a Greek phrase
    # on the Atlantic Ocean page ("Atlantis thalassa"), which holds no population of it
    assert "atlantis" not in names()
    assert not re.search(r"<title>Atlantis</title>", wiki_text)
    assert "Atlantis thalassa" in wiki_text
    result = engine.ask("Tell me the population of Atlantis")
    assert result.unknown and result.answer == "unknown"
    assert result.mode == "retrieve-read" and "refrained" in step(result, "retrieve-read").reason


def test_an_answer_citing_rows_that_never_write_the_name_is_refused(engine) -> None:
    # the LLM reader's reading seen on this index: the 2011 population of Azerbaijan, cited for Atlantis
    question = "Tell me the population of Atlantis"
    understanding = engine.understand(question)
    row = next(
        r
        for r in engine.pipeline.store.get(_ids(engine, "Azerbaijan total population urban 2011"))
        if "9,165,000" in r.text
    )
    assert "atlantis" not in row.text.lower()
    read = engine.ask(question).model_copy(
        update={
            "answer": "9,165,000",
            "unknown": False,
            "confidence": 0.95,
            "evidence": [row.scored(1.0)],
            "supporting_evidence_ids": [row.evidence_id],
        }
    )
    guard = next(m for m in engine.router.modes if m.name == "retrieve-read").guard
    plan = guard.after(understanding, read)
    assert plan is not None and "'Atlantis' names no entity or page" in plan.outcome


def test_an_answer_read_off_rows_about_another_entity_is_refused(engine) -> None:
    # Boss Lake is an item of the API sample with no depth (P4511) and no page: no row is about it
    lake = next(
        e
        for e in raw_entities(WIKIDATA_API).values()
        if e["labels"].get("en", {}).get("value") == "Boss Lake"
    )
    assert "P4511" not in lake["claims"]
    result = engine.ask("How deep is Boss Lake?")
    assert result.unknown and result.answer == "unknown"
    assert f"not about Boss Lake ({lake['id']})" in step(result, "retrieve-read").reason


def test_a_misspelled_bridge_name_of_an_ottqa_question_does_not_refuse_it(engine) -> None:
    # "FC Dordecht" (for Dordrecht) is in no dump, passage or table, but it is not what the question
    # asks about: the answer row need not write it, so the guard leaves the answer alone
    question = next(
        q["question"] for q in json.loads((OTTQA / "dev.json").read_text()) if "FC Dordecht" in q["question"]
    )
    for path in [ENWIKI_SAMPLE, *sorted((OTTQA).glob("*.json.gz"))]:
        opener = bz2.open if path.suffix == ".bz2" else gzip.open
        with opener(path, "rt", encoding="utf-8") as f:
            assert "Dordecht" not in f.read()
    result = engine.ask(question)
    assert "refrained" not in step(result, "retrieve-read").reason


def test_text_that_is_not_a_question_is_not_read(engine) -> None:
    result = engine.ask("MATCH (n) DETACH DELETE n")
    assert result.unknown and result.answer == "unknown" and result.evidence == []
    assert NOT_A_QUESTION in step(result, "retrieve-read").reason


def test_a_keyword_question_is_still_answered(engine) -> None:
    claims = raw_entities(WIKIDATA_ITEMS)["Q31"]["claims"]["P1082"]
    in_2014 = [
        c["mainsnak"]["datavalue"]["value"]["amount"].lstrip("+")
        for c in claims
        if any(
            q["datavalue"]["value"]["time"].startswith("+2014")
            for q in c.get("qualifiers", {}).get("P585", [])
        )
    ]
    result = engine.ask("population Belgium 2014")
    assert not result.unknown and result.answer.replace(",", "") in in_2014


def test_an_entity_of_unknown_kind_keeps_a_linked_entitys_fit(engine) -> None:
    """Thessaloniki is linked from the Aristotle page but is no item of the dumps: its kind is unknown, so
    it fits a person answer as any linked entity does (1.0). Lowering unknown kinds (0.5) had made a
    table row's linked player lose to the prose word "Born" (tests/query/modes/test_table_sql.py, gold
    from the raw tables); only a known kind that is not the one asked for lowers an entity (the test
    below). The candidate reader's answer to this question is wrong either way."""
    assert "thessaloniki" not in names()
    result = engine.ask("Who was Aristotle's father?")
    untyped = [c for c in result.candidates if c.kind == "entity" and c.entity_id == "Thessaloniki"]
    assert untyped and all(c.type_match == 1.0 for c in untyped), result.candidates


def test_a_human_item_fits_a_person_answer_and_a_place_does_not(engine) -> None:
    api = raw_entities(WIKIDATA_API)
    human = next(
        e
        for e in api.values()
        if any(
            c["mainsnak"].get("datavalue", {}).get("value", {}).get("id") == "Q5"
            for c in e["claims"].get("P31", [])
        )
    )
    place = next(
        e
        for e in api.values()
        if "P625" in e["claims"]
        and "P31" in e["claims"]
        and "P569" not in e["claims"]
        and not any(
            c["mainsnak"].get("datavalue", {}).get("value", {}).get("id") == "Q5" for c in e["claims"]["P31"]
        )
    )
    kinds = engine.pipeline.candidates.answerer.kinds
    assert kinds([human["id"], place["id"], "Thessaloniki"]) == {human["id"]: "person", place["id"]: "place"}


@pytest.mark.parametrize("reader", ["candidates", "llm"])
def test_a_year_without_a_value_is_refused_with_the_nearest_value(sample_index, model_cache, reader) -> None:
    from query.llm.bundled import FAST_MODEL

    years = {
        q["datavalue"]["value"]["time"][1:5]
        for c in raw_entities(WIKIDATA_ITEMS)["Q31"]["claims"]["P1082"]
        for q in c.get("qualifiers", {}).get("P585", [])
    }
    assert "2015" not in years and "2014" in years
    config = EngineConfig(reader=reader, llm={"backend": FAST_MODEL, "cache_dir": model_cache})
    _, built = sample_index
    with Engine.open(built.version_dir, config) as engine:
        assert (engine.llm is not None) == (reader == "llm")
        result = engine.ask("Belgium's population in 2015")
        assert result.unknown and result.answer == "unknown"
        assert re.search(r"no 2015 value .*in 2014", step(result, result.mode).reason)
        not_a_question = engine.ask("MATCH (n) DETACH DELETE n")
        assert not_a_question.unknown and not_a_question.evidence == []


def _ids(engine, text: str) -> list[str]:
    return [hit.evidence_id for hit in engine.reader.bm25.search(text, k=20)]
