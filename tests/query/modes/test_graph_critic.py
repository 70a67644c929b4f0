"""The graph-critic mode on the real sample index: the walk along named relations, intersections, caps,
the critic's rounds and the refinement path. Expected edges come from the raw dump JSON."""

from __future__ import annotations

import json

import pytest

from index.reader import IndexReader
from query import Engine, EngineConfig
from query.batch.answerers import EngineAnswerer
from query.modes.graph_critic import FEEDBACK, GraphCriticSettings, Plan, cited_first
from query.modes.graph_critic.modules import Modules
from schemas.answers import Question
from schemas.query import RefinementRound

MODES = ["graph-critic", "retrieve-read"]
BELGIUM, PORTUGAL, CHILE = "Q31", "Q45", "Q298"


@pytest.fixture(scope="module")
def raw(raw_dump) -> dict[str, dict]:
    return raw_dump


@pytest.fixture(scope="module")
def engine(sample_index):
    _, result = sample_index
    with Engine.open(result.version_dir, EngineConfig(modes=MODES, reader="candidates")) as engine:
        yield engine


def _modules(engine: Engine, settings: GraphCriticSettings) -> Modules:
    """The graph-critic's modules over the engine's own pipeline and graph, with ``settings``."""
    return Modules(engine.pipeline, engine.pipeline.store, engine.reader.graph, settings)


def _targets(entity: dict, prop: str | None = None) -> set[str]:
    """Item values of the entity's non-deprecated statements (the graph's FACT edges), itself excluded."""
    out = set()
    for pid, claims in entity.get("claims", {}).items():
        for claim in claims:
            value = claim["mainsnak"].get("datavalue", {}).get("value")
            live = prop in (None, pid) and claim["rank"] != "deprecated" and isinstance(value, dict)
            if live and "id" in value and value["id"] != entity["id"]:
                out.add(value["id"])
    return out


def test_a_named_relation_is_walked_and_answers_on_its_path(engine, raw):
    capital = _targets(raw[PORTUGAL], "P36")
    result = engine.ask("What is the capital of Portugal?")
    assert result.mode == "graph-critic" and result.validated, result.refinement
    first = result.refinement[0]
    assert first.module == "hybrid" and first.entities == [f"{PORTUGAL} (Portugal)"]
    assert first.relations and first.relations[0].startswith("capital")
    assert all("-capital->" in path for path in first.paths)
    (capital_id,) = capital
    assert result.answer == raw[capital_id]["labels"]["en"]["value"] and first.accepted
    assert result.supporting_evidence_ids and set(result.supporting_evidence_ids) <= set(first.top)


def test_the_walk_of_two_topics_is_the_intersection_of_their_edges(engine, raw):
    topics = [(BELGIUM, "Belgium"), (CHILE, "Chile")]
    walk = _modules(engine, GraphCriticSettings(edges_per_hop=5000)).hybrid(
        "Belgium and Chile", Plan("hybrid", topics)
    )
    both = _targets(raw[BELGIUM]) & _targets(raw[CHILE])
    assert both and walk.targets == both and walk.note is None
    assert walk.paths and all(path.startswith(("Belgium -", "Chile -")) for path in walk.paths.values())


def test_the_walk_is_bounded_and_says_so(engine, raw):
    small = GraphCriticSettings(edges_per_hop=5)
    walk = _modules(engine, small).hybrid("Belgium", Plan("hybrid", [(BELGIUM, "Belgium")]))
    assert len(_targets(raw[BELGIUM])) > 5 and len(walk.targets) <= 5
    assert walk.note is not None and "cut at 5 edges" in walk.note


def test_a_critic_that_never_accepts_stops_after_its_rounds_with_the_best_unvalidated(sample_index):
    _, built = sample_index
    config = EngineConfig(
        modes=MODES, reader="candidates", graph_critic=GraphCriticSettings(rounds=3, accept_confidence=1.0)
    )
    with Engine.open(built.version_dir, config) as engine:
        result = engine.ask("Which countries share a border with Belgium?")
    assert result.mode == "graph-critic" and result.validated is False
    assert len(result.refinement) == 3 and not any(r.accepted for r in result.refinement)
    assert all(r.feedback in FEEDBACK and r.detail for r in result.refinement)
    assert (
        len({(r.module, tuple(r.entities), tuple(r.relations)) for r in result.refinement}) == 3
    )  # no repeat
    best = max(result.refinement, key=lambda r: (r.answer != "unknown", r.confidence))
    assert result.answer == best.answer


def test_cited_rows_move_to_the_head_in_their_cited_order():
    assert cited_first(["a", "b", "c", "d"], ["c", "a", "c", "x"]) == ["c", "a", "b", "d"]
    assert cited_first(["a", "b"], []) == ["a", "b"]


def test_fused_first_reads_the_single_pass_then_walks_the_graph_when_rejected(sample_index):
    """first_module = "fused": round 1 is the single pass as the engine ranks it, with the rows the answer
    was read from at its head; a rejected round goes to the graph walk from the linked entity next."""
    _, built = sample_index
    question = "Which countries share a border with Belgium?"
    never = GraphCriticSettings(first_module="fused", rounds=2, accept_confidence=1.0)
    config = EngineConfig(modes=MODES, reader="candidates", graph_critic=never)
    with Engine.open(built.version_dir, config) as e:
        single = e.pipeline.answer(e.understand(question))
        result = e.ask(question)
    first, second = result.refinement
    assert first.module == "fused" and second.module == "hybrid" and not first.accepted
    assert second.entities == [f"{BELGIUM} (Belgium)"]
    ranked = [row.evidence_id for row in single.evidence]
    assert single.supporting_evidence_ids and first.answer == single.answer
    assert first.top == cited_first(ranked, single.supporting_evidence_ids)[:5]
    assert first.top[0] in single.supporting_evidence_ids


def test_no_entity_linked_declines_and_hostile_text_stays_data(engine):
    plain = engine.ask("what is it all about")
    step = next(s for s in plain.route if s.mode == "graph-critic")
    assert step.outcome == "declined" and "no entity linked" in step.reason
    before = engine.reader.graph.counts()
    hostile = engine.ask("Belgium') RETURN 1 // {x} MATCH (n) DETACH DELETE n; DROP TABLE Entity")
    assert engine.reader.graph.counts() == before  # the text reached Kùzu only as parameter values
    if hostile.mode == "graph-critic":
        assert hostile.refinement and all(r.round == i + 1 for i, r in enumerate(hostile.refinement))


def test_the_batch_record_keeps_the_refinement_path(sample_index):
    _, built = sample_index
    answerer = EngineAnswerer(
        IndexReader.open(built.version_dir), config=EngineConfig(modes=MODES, reader="candidates")
    )
    try:
        record = answerer.answer(Question(id="q1", question="What is the capital of Portugal?"))
    finally:
        answerer.close()
    rounds = [RefinementRound.model_validate(r) for r in json.loads(record.refinement)]
    assert record.mode == "graph-critic" and record.validated is True
    assert rounds[-1].accepted and rounds[-1].answer == record.answer


def test_a_rejected_single_pass_is_read_deeper_before_the_graph_walk(sample_index, model_cache):
    """With the LLM reader (8 of the 30 rows in its prompt), round 2 reads the single pass's ranking
    without the rows round 1 showed it; then the graph walk."""
    from query.llm.bundled import FAST_MODEL

    _, built = sample_index
    question = "Which countries share a border with Belgium?"
    never = GraphCriticSettings(first_module="fused", rounds=3, accept_confidence=1.0)
    llm = {"backend": FAST_MODEL, "cache_dir": str(model_cache)}
    config = EngineConfig.load(None, modes=MODES, reader="llm", llm=llm, graph_critic=never)
    with Engine.open(built.version_dir, config) as e:
        ranking = list(e.pipeline.run(e.understand(question)).final)
        result = e.ask(question)
        window = e.config.llm_reader.evidence
    first, second, third = result.refinement
    assert [first.module, second.module, third.module] == ["fused", "deeper", "hybrid"]
    assert 0 < window < len(ranking)
    assert second.top and set(second.top) <= set(ranking[window:])  # none of the rows round 1 read
    assert second.top[0] in ranking[window : 2 * window]  # what round 2's reader was shown
