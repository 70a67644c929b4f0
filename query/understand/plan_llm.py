"""The LLM planner: the bundled instruct model reads a question the rules are unsure of into the plan's
words — mentions, relation phrases in order, operation, set, constraints — held to a JSON schema.

The model never gives an id. Code then holds its reading to the question and to the rules:

- every mention must occur in the question (a name from the model's memory is dropped, and a plan left
  with no mention for an operation that needs one falls back to the rules);
- the answer kind follows the operation (a comparison names, a count counts), whatever the model said;
- relation phrases are mapped to properties by ``plan.property_for`` (everyday words, then the
  property table); a phrase that maps to nothing is kept and said so;
- more than ``MAX_RELATIONS`` hops is a loop, not a chain.

Schema broken twice (``LlmOutputError``), the model unavailable or failing: the rules' plan stands and
its notes say why. The system prompt, with its worked examples (our own, not the evaluation set's),
is fixed text, so the runtime's prompt cache keeps it between questions.
"""

from __future__ import annotations

import json
import logging
import re
import time
from typing import Literal

from pydantic import BaseModel, Field

from query.llm.backends import LlmError
from query.llm.chat import Llm
from query.understand.plan import property_for
from query.understand.properties import PropertyLabels
from schemas.query import Comparator, PlanConstraints, PlanOperation, PlanSet, QuestionPlan

log = logging.getLogger(__name__)

MAX_RELATIONS = 3
MAX_TOKENS = 160


class LlmPlan(BaseModel):
    """What the model fills: words only, no ids."""

    operation: PlanOperation
    mentions: list[str] = Field(description="names exactly as written in the question")
    relations: list[str] = Field(description="relation phrases, the first hop first")
    class_noun: str | None = None
    place: str | None = None
    years: list[int] = Field(default_factory=list)
    pick: Literal["max", "min"] | None = None
    comparator: Comparator | None = None
    threshold: float | None = None


_EXAMPLES = [
    ("How many residents does the capital of Freedonia have?",
     {"operation": "lookup", "mentions": ["Freedonia"], "relations": ["capital", "population"]}),
    ("Which of Arden and Belmont is spread over more land?",
     {"operation": "compare", "mentions": ["Arden", "Belmont"], "relations": ["area"], "pick": "max"}),
    ("Who came into the world earlier, Ann Roe or Bo Lin?",
     {"operation": "compare", "mentions": ["Ann Roe", "Bo Lin"], "relations": ["date of birth"],
      "pick": "min"}),
    ("Tell me how many nations Freedonia touches.",
     {"operation": "count", "mentions": ["Freedonia"], "relations": ["shares border with"]}),
    ("Which Freedonian town sits lowest?",
     {"operation": "superlative", "mentions": [], "relations": ["elevation"], "class_noun": "town",
      "place": "Freedonian", "pick": "min"}),
    ("Were there over 2 million people in Arden back in 1990?",
     {"operation": "yes_no", "mentions": ["Arden"], "relations": ["population"], "years": [1990],
      "comparator": ">", "threshold": 2000000}),
    ("How big is the nation that Belmont is part of?",
     {"operation": "lookup", "mentions": ["Belmont"], "relations": ["country", "area"]}),
    ("What is the elevation of the town where Zorbel Ltd keeps its head office?",
     {"operation": "lookup", "mentions": ["Zorbel Ltd"],
      "relations": ["headquarters location", "elevation"]}),
    ("In 1990, how many people lived in the nation that contains the province of Kestria?",
     {"operation": "lookup", "mentions": ["Kestria"], "relations": ["country", "population"],
      "years": [1990]}),
    ("How many neighbours has the state whose capital is Verlo?",
     {"operation": "count", "mentions": ["Verlo"], "relations": ["capital of", "shares border with"]}),
    ("What is the GDP per capita of the land Ann Roe holds citizenship of?",
     {"operation": "lookup", "mentions": ["Ann Roe"],
      "relations": ["country of citizenship", "GDP per capita"]}),
    ("What do we call the people of Freedonia?",
     {"operation": "lookup", "mentions": ["Freedonia"], "relations": ["demonym"]}),
]  # fmt: skip

SYSTEM_PROMPT = (
    "You read a question about places, countries, people and organisations into a JSON plan. "
    "Do not answer the question. Fields: operation (lookup, compare, count, superlative, filter, "
    "aggregate, yes_no); mentions: the names in the question, copied exactly, never a name the question "
    "does not write; relations: Wikidata property names in the order they are followed (a chain: "
    "one per hop, the first hop first, e.g. ['capital', 'population'] for the population of X's capital; "
    "'capital of' for the place X is the capital of); class_noun and "
    "place for a superlative over a kind of thing in a place; years asked; pick max or min for a "
    "comparison or superlative; comparator and threshold for a yes/no against a number.\n\nExamples:\n"
    + "\n".join(f"Q: {q}\nA: {json.dumps(a)}" for q, a in _EXAMPLES)
)


class LlmPlanner:
    """Asks the model for a plan and holds it to the question; safe to share (``Llm`` locks)."""

    name = "llm"

    def __init__(self, llm: Llm, properties: PropertyLabels | None = None, max_tokens: int = MAX_TOKENS):
        self.llm, self.properties, self.max_tokens = llm, properties, max_tokens

    def run(self, question: str, rules: QuestionPlan) -> QuestionPlan:
        """The model's plan, checked; or ``rules`` with the reason the model's was not used."""
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": f"Q: {question}"},
        ]
        started = time.perf_counter()
        try:
            reply = self.llm.chat_reply(messages, LlmPlan, max_tokens=self.max_tokens, purpose="plan")
        except LlmError as exc:
            return _fallback(rules, f"the LLM plan failed ({type(exc).__name__}: {exc}); the rules' reading")
        tokens = sum(c.prompt_tokens + c.completion_tokens for c in reply.calls)
        cost = f"{(time.perf_counter() - started) * 1000:.0f} ms, {tokens} tokens, {len(reply.calls)} call(s)"
        return self.checked(question, reply.value, rules, cost)

    def checked(self, question: str, raw: LlmPlan, rules: QuestionPlan, cost: str) -> QuestionPlan:
        lowered = question.casefold()
        kept = [m for m in raw.mentions if m.strip() and m.casefold() in lowered]
        dropped = [m for m in raw.mentions if m not in kept]
        notes = [f"LLM plan ({cost})"]
        if dropped:
            notes.append(f"dropped mentions the question does not contain: {dropped}")
        if len(raw.relations) > MAX_RELATIONS:
            return _fallback(
                rules, f"the LLM plan has {len(raw.relations)} relations (a loop?); the rules' reading"
            )
        needs_names = raw.operation in ("lookup", "compare", "count", "yes_no")
        if needs_names and not kept:
            return _fallback(rules, "the LLM plan names no entity of the question; the rules' reading")
        plan = QuestionPlan(
            mentions=kept,
            operation=raw.operation,
            source="llm",
            constraints=PlanConstraints(
                years=[y for y in raw.years if str(y) in question] or rules.constraints.years,
                pick=raw.pick,
                comparator=raw.comparator,
                threshold=raw.threshold if raw.threshold is not None and _number_in(question) else None,
                threshold_unit=rules.constraints.threshold_unit,
                value=rules.constraints.value,
            ),
        )
        if raw.operation == "compare":
            plan.set = PlanSet(entities=kept)
        if raw.operation == "superlative":
            place = raw.place if raw.place and raw.place.casefold() in lowered else None
            plan.set = PlanSet(class_phrase=(raw.class_noun or "").lower() or None, place=place)
        mapped = 0
        for phrase in raw.relations:
            reading = _hop_or_property(phrase, self.properties)
            plan.relations.append(phrase)
            if reading:
                plan.resolved[f"relation:{phrase}"] = reading
                mapped += 1
            else:
                notes.append(f"relation {phrase!r} maps to no property")
        plan.answer_kind = _kind(raw.operation, rules)
        plan.confidence = round(0.85 if mapped == len(raw.relations) and raw.relations else 0.4, 3)
        plan.notes = [*notes, f"the rules read {rules.operation} at {rules.confidence:.2f}"]
        return plan


def _hop_or_property(phrase: str, properties: PropertyLabels | None) -> str | None:
    lowered = phrase.lower().strip()
    if lowered in ("capital", "capital city"):
        return "P36"
    if lowered in ("country", "nation", "sovereign state"):
        return "P17,P27,P131"
    if properties is not None and (named := properties.named(phrase)):
        return named  # a property's whole label or alias ("GDP per capita", "capital of"): that property
    reading = property_for(phrase, properties)
    return ",".join((reading.property, *reading.fallbacks)) if reading else None


def _kind(operation: str, rules: QuestionPlan) -> str:
    """The answer kind follows the operation, not the model."""
    return {"compare": "entity", "superlative": "entity", "count": "number", "yes_no": "boolean"}.get(
        operation, rules.answer_kind
    )


def _number_in(question: str) -> bool:
    return bool(re.search(r"\d|half a|million|thousand", question, re.I))


def _fallback(rules: QuestionPlan, why: str) -> QuestionPlan:
    log.info("LLM planner: %s", why)
    return rules.model_copy(update={"notes": [*rules.notes, why]})
