"""An answer read off evidence, held to what the question asks (issue 35 part 4): else "unknown".

The retrieve → read mode always answers, and a reader picks *something* from the rows it is shown: a
population for "Atlantis" read off the Azerbaijan page, "Delete" for a line of Cypher. The guard looks at
the question once before reading and at the answer once after, with the rules' question plan
(``RulePlanner``, a millisecond), and refrains — the reason in the plan's ``outcome``, which the route
shows — when:

- the text is not a question the index can answer: no question word or shape, no relation the plan
  reads, no entity it names ("MATCH (n) DETACH DELETE n"). Keyword questions ("population Belgium 2014")
  have a relation or an entity, so they pass;
- the plan's subject is a name the index knows nothing of — no entity or page carries it
  (``unknown_name``: only fuzzy look-alikes) — and neither the indexed text nor a retrieved row holds
  it; or the plan is sure and no row the answer cites writes it ("the population of Atlantis"): the
  answer is then about something else. Only the subject: a long OTT-QA question names bridge entities
  its answer row need not write, often in other words than the rows or misspelled ("Arsenal FC",
  "WW 1", "FC Dordecht"), and its plan is unsure;
- the question names one Wikidata item (by its name or alias, and no other entity or page) and no row
  the answer cites links it or writes its label ("How deep is Boss Lake?" read off the Atlantic Ocean);
- the plan is sure (``min_confidence``) it asks yes or no, a number or a date (a population, an
  inception), and the answer is not yes/no, or holds no digit nor counted word: the kind does not match.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from query.lexicon import COUNT_WORDS
from query.understand.plan import RulePlanner, plan_entity, residue_property, unknown_name
from query.understand.understanding import Understanding
from schemas.answers import StageTiming
from schemas.query import EntityCandidate, QueryResult, QuestionPlan, ScoredEvidence

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

    def __init__(
        self,
        planner: RulePlanner,
        in_text: Callable[[str], bool] | None = None,
        min_confidence: float = 0.6,
    ):
        """``in_text``: whether any indexed row holds every word of a name (``Bm25Index.occurs``)."""
        self.planner, self.in_text, self.min_confidence = planner, in_text, min_confidence

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
        plan = self.planner.run(understanding)
        plan.outcome = self._unmet(understanding, plan, result)
        return plan if plan.outcome is not None else None

    def _unmet(self, understanding: Understanding, plan: QuestionPlan, result: QueryResult) -> str | None:
        """Why the answer, read off the result's rows, does not answer the question; None when nothing
        says so."""
        answer, retrieved = result.answer, result.evidence
        cited_ids = set(result.supporting_evidence_ids)
        cited = [e for e in retrieved if e.evidence_id in cited_ids] or retrieved
        sure = plan.confidence >= self.min_confidence
        subject = plan.mentions[0] if plan.mentions else ""
        for link in understanding.links:
            name = link.mention.text
            if not unknown_name(link) or name not in subject:
                continue
            nowhere = self.in_text is not None and not self.in_text(name)
            if nowhere and not any(_writes(e.text, name) for e in retrieved):
                return f"{name!r} names no entity, page or text of the index"
            if sure and not any(_writes(e.text, name) for e in cited):
                return (
                    f"{name!r} names no entity or page of the index, and the rows the answer cites do not "
                    f"write it: {answer!r} is about something else"
                )
        only = _only_subject(understanding)
        if only is not None and cited and not any(_about(e, only) for e in cited):
            return f"the evidence the answer cites is not about {only.label} ({only.entity_id})"
        named_thing = understanding.intent.answer_type in ("person", "place", "organization", "entity")
        if plan.operation == "lookup" and not plan.relations and plan.unexplained and not named_thing:
            # no rule read the relation, but the words left name a quantity or a date ("the yearly
            # budget"): whatever answers must be one, sure plan or not
            residue = residue_property(plan.unexplained, self.planner.properties)
            if residue is not None and residue.kind in ("number", "date") and not _has_kind(answer):
                return (
                    f"{residue.phrase!r} asks for a {residue.kind} ({residue.property}); "
                    f"{answer!r} is not one"
                )
        if not sure:
            return None
        if plan.operation == "yes_no" and answer.strip().lower() not in ("yes", "no"):
            return f"the plan asks yes or no; {answer!r} is neither"
        asks = plan.operation == "lookup" and plan.relations and plan.answer_kind in ("number", "date")
        # "What town is the school established in 1787 based in?": the plan read "established", the
        # question asks for a place; only a question that asks for no named thing is held to the kind
        if asks and not named_thing and not _has_kind(answer):
            return f"the plan asks for a {plan.answer_kind}; {answer!r} is not one"
        return None


def _only_subject(understanding: Understanding) -> EntityCandidate | None:
    """The one Wikidata item the question names by its name or alias, when it names no other entity or
    page: the answer must then be read off evidence about it (a chain's second entity is kg-plan's)."""
    named = [link for link in understanding.links if any(c.match != "fuzzy" for c in link.candidates)]
    if len(named) != 1:
        return None
    cand = plan_entity(named[0])
    return cand if cand is not None and cand.match != "fuzzy" else None


def _about(evidence: ScoredEvidence, subject: EntityCandidate) -> bool:
    """A row about the subject links it, or writes its label."""
    return subject.entity_id in evidence.entity_ids or _writes(evidence.text, subject.label)


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
