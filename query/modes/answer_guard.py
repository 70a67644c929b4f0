"""An answer read off evidence, held to what the question asks (issue 35 part 4): else "unknown".

The retrieve → read mode always answers, and a reader picks *something* from the rows it is shown: a
population for "Atlantis" read off the Azerbaijan page, "Delete" for a line of Cypher. The guard looks at
the question once before reading and at the answer once after, with the rules' question plan
(``RulePlanner``, a millisecond), and refrains — the reason in the plan's ``outcome``, which the route
shows — when:

- the text is not a question the index can answer: no question word or shape, no relation the plan
  reads, no entity it names ("MATCH (n) DETACH DELETE n"). Keyword questions ("population Belgium 2014")
  have a relation or an entity, so they pass;
- the question names something the index knows nothing of — no entity or page carries the name
  (``unknown_name``: only fuzzy look-alikes) — and no cited row writes it: the answer is then about
  something else. A name an OTT-QA passage or table cell writes is kept when the cited rows hold it;
- the plan reads a number or a date (a population, an inception) and the answer holds no digit nor a
  counted word: the answer kind does not match.

Only the plan's sure readings decide (``min_confidence``); an unsure plan never refuses an answer.
"""

from __future__ import annotations

import re

from query.lexicon import COUNT_WORDS
from query.understand.plan import RulePlanner, plan_entity, unknown_name
from query.understand.understanding import Understanding
from schemas.answers import StageTiming
from schemas.query import QueryResult, QuestionPlan

GUARD = "answer-guard"

QUESTION_WORD = re.compile(r"\b(?:who|whom|whose|what|which|when|where|why|how)\b", re.I)
QUESTION_START = re.compile(
    r"^\s*(?:is|are|was|were|does|do|did|has|have|had|can|could|will|would|should|name|list|tell|give|"
    r"show|find|in|on|at|from)\b",
    re.I,
)
"""A yes/no question's auxiliary or a request's verb opening the text ("Name the …", "In 1960, …")."""
_DIGIT = re.compile(r"\d")
_COUNTED = re.compile(r"\b(?:" + "|".join(COUNT_WORDS) + r")\b", re.I)
NOT_A_QUESTION = "not a question the index can answer: no question word, no relation and no entity it names"


class AnswerGuard:
    """Checks a question before reading and a read answer after; holds no mutable state."""

    def __init__(self, planner: RulePlanner, min_confidence: float = 0.6):
        self.planner, self.min_confidence = planner, min_confidence

    def before(self, understanding: Understanding) -> QuestionPlan | None:
        """The plan with the reason to refrain in its ``outcome``, or None when the question may be read."""
        question = understanding.question
        if (
            QUESTION_WORD.search(question)
            or QUESTION_START.match(question)
            or question.rstrip().endswith("?")
        ):
            return None
        plan = self.planner.run(understanding)
        named = any(
            plan_entity(link) is not None or any(c.match != "fuzzy" for c in link.candidates)
            for link in understanding.links
        )
        if plan.relations or named:
            return None
        plan.outcome = NOT_A_QUESTION
        return plan

    def after(self, understanding: Understanding, result: QueryResult) -> QuestionPlan | None:
        """The plan with the reason the answer does not meet it, or None when it does (or is unknown)."""
        if result.unknown:
            return None
        cited = set(result.supporting_evidence_ids)
        texts = [e.text for e in result.evidence if not cited or e.evidence_id in cited]
        unknown = [
            link.mention.text
            for link in understanding.links
            if unknown_name(link) and not any(_writes(text, link.mention.text) for text in texts)
        ]
        plan = self.planner.run(understanding)
        if unknown:
            plan.outcome = (
                f"{unknown[0]!r} names no entity or page of the index, and the evidence the answer "
                f"cites does not mention it: {result.answer!r} is about something else"
            )
            return plan
        sure = plan.confidence >= self.min_confidence and plan.operation == "lookup" and plan.relations
        if sure and plan.answer_kind in ("number", "date") and not _has_kind(result.answer):
            plan.outcome = f"the plan asks for a {plan.answer_kind}; {result.answer!r} is not one"
            return plan
        return None


def _writes(text: str, name: str) -> bool:
    """Whether ``text`` writes ``name`` as words (case ignored): "Atlantis" is not in "Atlantic"."""
    return re.search(rf"(?<!\w){re.escape(name)}(?!\w)", text, re.I) is not None


def _has_kind(answer: str) -> bool:
    """A number or a date answer writes a digit ("11,150,516", "4 October 1830") or counts in words."""
    return bool(_DIGIT.search(answer) or _COUNTED.search(answer))


def refrained(result: QueryResult, plan: QuestionPlan) -> QueryResult:
    """``result`` turned into a refusal that keeps its evidence and says why (the plan's outcome); as
    sure of it as kg-plan is of its refusals (a sure plan refuses less surely than an unsure one)."""
    return result.model_copy(
        update={
            "answer": "unknown",
            "answer_entity_id": None,
            "unknown": True,
            "confidence": round(1.0 - plan.confidence / 2, 4),
            "supporting_evidence_ids": [],
            "plan": plan,
        }
    )


def not_read(understanding: Understanding, plan: QuestionPlan, index_version: str) -> QueryResult:
    """The refusal of a text that is not a question: nothing was retrieved nor read."""
    return QueryResult(
        question=understanding.question,
        answer="unknown",
        unknown=True,
        confidence=round(1.0 - plan.confidence / 2, 4),
        evidence=[],
        intent=understanding.intent,
        links=understanding.links,
        timings=[StageTiming(stage=k, ms=round(v, 3)) for k, v in understanding.timings.items()],
        reader=GUARD,
        index_version=index_version,
        plan=plan,
    )
