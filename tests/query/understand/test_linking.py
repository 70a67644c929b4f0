"""Entity linking (stage 2) on the real sample index: ranked candidates per mention, never a guess."""

from __future__ import annotations

import json
from concurrent.futures import ThreadPoolExecutor

import pytest

from query.understand.intent import RuleIntentExtractor
from query.understand.linking import EntityLinker, EntityTable
from query.understand.properties import PropertyLabels
from query.understand.settings import LinkingSettings
from schemas.query import LinkedMention, Mention
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def entities(reader) -> EntityTable:
    return EntityTable.from_reader(reader)


@pytest.fixture(scope="module")
def linker(reader, entities) -> EntityLinker:
    return EntityLinker(reader.aliases, entities)


@pytest.fixture(scope="module")
def extractor(reader, entities, settings) -> RuleIntentExtractor:
    return RuleIntentExtractor(
        reader.aliases, PropertyLabels.load(settings.property_table), entities=entities
    )


def mention(question: str, text: str) -> Mention:
    start = question.index(text)
    return Mention(text=text, start=start, end=start + len(text))


def best_ids(links: list[LinkedMention]) -> list[str | None]:
    return [link.best.entity_id if link.best else None for link in links]


def test_entity_table_reads_labels_descriptions_and_titles(entities, reader):
    assert len(entities) == reader.entity_count()
    belgium = entities.get("Q31")
    assert belgium is not None and belgium.label == "Belgium" and belgium.page_title == "Belgium"
    assert "Europe" in (entities.description("Q31") or "")
    assert entities.get("no such entity") is None and "no such entity" not in entities


def test_belgium_links_to_q31_first(linker):
    question = "What was the population of Belgium in 2015?"
    [link] = linker.run(question, [mention(question, "Belgium")])
    best = link.best
    assert best is not None
    assert (best.entity_id, best.label, best.match, best.page_title) == ("Q31", "Belgium", "exact", "Belgium")
    assert best.description and "monarchy" in best.description
    scores = [c.score for c in link.candidates]
    assert scores == sorted(scores, reverse=True) and len(scores) <= 5
    assert all(0.0 <= c.score <= 1.0 and 0.0 <= c.context <= 1.0 for c in link.candidates)


def test_a_nonsense_mention_is_kept_with_no_candidates(linker):
    question = "Who founded Xqzvbnmw Plorkt?"
    links = linker.run(question, [mention(question, "Xqzvbnmw Plorkt")])
    assert len(links) == 1 and links[0].candidates == [] and links[0].best is None
    assert links[0].mention.text == "Xqzvbnmw Plorkt"
    assert linker.run(question, []) == []


def test_k_per_call_overrides_the_default(linker):
    question = "Which city is the capital of Portugal?"
    [link] = linker.run(question, [mention(question, "Portugal")], k=1)
    assert [c.entity_id for c in link.candidates] == ["Q45"]
    with pytest.raises(ValueError, match="k must be"):
        linker.run(question, [], k=0)


def test_context_scores_the_question_against_the_description(linker):
    # Lisbon's description ("capital city of Portugal") shares "capital" and "city" with the question,
    # but the name still decides: "Portugal" is Portugal
    question = "Which city is the capital of Portugal?"
    [link] = linker.run(question, [mention(question, "Portugal")], k=10)
    by_id = {c.entity_id: c for c in link.candidates}
    assert link.best is not None and link.best.entity_id == "Q45"
    assert by_id["Q597"].context == 1.0 and by_id["Q45"].context == 0.0
    assert by_id["Q597"].match == "fuzzy"


def test_weights_are_validated_and_serialized(reader, entities):
    with pytest.raises(ValueError, match="alias_weight"):
        LinkingSettings(alias_weight=-1.0)
    with pytest.raises(ValueError, match="weights"):
        LinkingSettings(alias_weight=0, popularity_weight=0, context_weight=0)
    config = EntityLinker(reader.aliases, entities, LinkingSettings(k=3, context_weight=0.5)).to_dict()
    assert config.pop("name") == "aliases"
    again = EntityLinker(reader.aliases, entities, LinkingSettings(**config))
    assert again.to_dict()["context_weight"] == 0.5 and again.settings.k == 3


def test_without_an_entity_table_candidates_lack_descriptions(reader):
    question = "What was the population of Belgium in 2015?"
    [link] = EntityLinker(reader.aliases).run(question, [mention(question, "Belgium")])
    assert link.best is not None and link.best.entity_id == "Q31" and link.best.description is None


def test_intent_then_linking_on_ottqa_sample_questions(extractor, linker):
    lines = (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()]
    expected = {
        0: {"Nonso Anozie": "Nonso Anozie"},
        2: {"Kishore Kumar": "Kishore Kumar", "Alankar Chitra": None},
        10: {"George Augustus Vaughn Jr.": "George Augustus Vaughn Jr."},
        24: {"2016 USC Trojans football team": "2016 USC Trojans football team"},
        64: {"Aksys Games": "Aksys Games", "BlazBlue : Calamity Trigger": "BlazBlue: Calamity Trigger"},
    }
    for index, links in expected.items():
        question = questions[index]
        linked = linker.run(question, extractor.run(question).mentions)
        got = {link.mention.text: link.best.entity_id if link.best else None for link in linked}
        assert {text: got[text] for text in links} == links, question


def test_concurrent_runs_agree_with_sequential_ones(extractor, linker):
    lines = (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    questions = [json.loads(line)["question"] for line in lines if line.strip()][:40]

    def both(question: str) -> tuple[list[str], list[str | None]]:
        intent = extractor.run(question)
        return [m.text for m in intent.mentions], best_ids(linker.run(question, intent.mentions))

    sequential = [both(q) for q in questions]
    with ThreadPoolExecutor(max_workers=4) as pool:
        assert list(pool.map(both, questions)) == sequential
