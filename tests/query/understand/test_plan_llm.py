"""The LLM planner: the checks code puts around the model's plan (scripted replies, for the paths a real
model takes only by chance) and one real reading by the bundled fast model."""

from __future__ import annotations

from query.llm.chat import Llm
from query.understand.plan_llm import SYSTEM_PROMPT, LlmPlanner
from schemas.query import PlanConstraints, QuestionPlan
from tests.query.scripted_llm import Scripted

RULES = QuestionPlan(operation="lookup", mentions=["Belgium"], confidence=0.3, constraints=PlanConstraints())


def planner(replies) -> tuple[LlmPlanner, Scripted]:
    backend = Scripted(replies)
    return LlmPlanner(Llm(backend)), backend


def test_a_name_the_question_does_not_hold_is_dropped():
    p, _ = planner([{"operation": "compare", "mentions": ["Belgium", "Atlantis", "Chile"],
                     "relations": ["population"], "pick": "max"}])  # fmt: skip
    plan = p.run("Which has more folks, Belgium or Chile?", RULES)
    assert plan.source == "llm" and plan.mentions == ["Belgium", "Chile"]
    assert any("Atlantis" in note for note in plan.notes)
    assert plan.resolved["relation:population"] == "P1082"


def test_the_answer_kind_follows_the_operation():
    p, _ = planner([{"operation": "count", "mentions": ["Chile"], "relations": ["shares border with"]}])
    plan = p.run("Tell me how many nations Chile touches", RULES)
    assert plan.operation == "count" and plan.answer_kind == "number"
    assert plan.resolved["relation:shares border with"] == "P47"


def test_a_schema_broken_twice_leaves_the_rules_reading():
    p, backend = planner(["not json", "{still not"])
    plan = p.run("Which has more folks, Belgium or Chile?", RULES)
    assert plan.source == "rules" and plan.operation == "lookup"
    assert "LLM plan failed" in plan.notes[-1] and len(backend.sent) == 2


def test_a_plan_with_no_name_of_the_question_is_not_used():
    p, _ = planner([{"operation": "lookup", "mentions": ["Paris"], "relations": ["population"]}])
    plan = p.run("How many folks call Belgium home?", RULES)
    assert plan.source == "rules" and "names no entity" in plan.notes[-1]


def test_too_many_hops_is_a_loop():
    p, _ = planner([{"operation": "lookup", "mentions": ["Belgium"], "relations": ["capital"] * 5}])
    plan = p.run("What about Belgium?", RULES)
    assert plan.source == "rules" and "loop" in plan.notes[-1]


def test_the_system_prompt_is_fixed_text():
    p, backend = planner([{"operation": "lookup", "mentions": ["Belgium"], "relations": ["area"]}] * 2)
    p.run("How much ground does Belgium cover?", RULES)
    p.run("How big is Belgium?", RULES)
    assert backend.sent[0][0] == backend.sent[1][0] == {"role": "system", "content": SYSTEM_PROMPT}


def test_the_bundled_model_plans_a_comparison(small_llm):
    question = "Which covers more ground, Belgium or Chile?"
    plan = LlmPlanner(small_llm).run(question, RULES)
    assert all(m.casefold() in question.casefold() for m in plan.mentions)
    if plan.source == "llm":  # a small model may still fail the schema: the rules then stand, said so
        assert plan.answer_kind == {"compare": "entity", "count": "number", "yes_no": "boolean"}.get(
            plan.operation, plan.answer_kind
        )
        assert plan.notes[0].startswith("LLM plan (")
    else:
        assert "LLM" in plan.notes[-1]


def test_the_worked_examples_are_no_question_of_the_natural_set():
    """The examples are our own: no question of any fold (tune, report, holdout, fold3) is among them."""
    import json
    from pathlib import Path

    from query.understand.plan_llm import _EXAMPLES

    path = Path(__file__).resolve().parents[3] / "benchmarks" / "natural_questions" / "questions.jsonl"
    asked = {json.loads(line)["question"].casefold() for line in path.read_text().splitlines() if line}
    assert not asked & {q.casefold() for q, _ in _EXAMPLES}
    assert any(len(a["relations"]) == 2 for _, a in _EXAMPLES)  # chains have examples of their own


def test_a_relation_phrase_that_is_a_property_name_maps_to_that_property(properties):
    """The code maps the model's phrases: a whole label or alias ("GDP per capita", "capital of") is that
    property, before an everyday word inside it ("GDP" → nominal GDP, "capital" → P36)."""
    p, _ = planner(
        [{"operation": "lookup", "mentions": ["Chile"], "relations": ["capital of", "GDP per capita"]}]
    )
    p.properties = properties
    plan = p.run("What is the GDP per capita of the country whose capital is Chile?", RULES)
    assert plan.resolved["relation:GDP per capita"] == "P2132"
    assert plan.resolved["relation:capital of"] == "P1376"


def test_the_bundled_model_reads_a_chain_into_hops(small_llm, properties):
    question = "How many people live in the city that is the seat of government of Saarland?"
    rules = QuestionPlan(operation="lookup", mentions=["Saarland"], confidence=0.3)
    plan = LlmPlanner(small_llm, properties).run(question, rules)
    assert all(m.casefold() in question.casefold() for m in plan.mentions)
    if plan.source == "llm":  # the fast model may still read one hop only: then the rules' words show it
        assert 1 <= len(plan.relations) <= 3
        assert plan.notes[0].startswith("LLM plan (")
    else:
        assert "LLM" in plan.notes[-1]
