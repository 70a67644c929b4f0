"""The graph-critic's critic: a *validator* that accepts or rejects a round's answer, and a *commenter*
that names, from fixed feedback types (``FEEDBACK``), the one thing the router should change.

The validator accepts a round whose answer is known, confident enough (``accept_confidence``), not a
topic entity itself, and found on a reasoning path. With ``validator = "llm"`` and the engine's instruct
model, the model judges whether the round's top rows state the answer (``llm_validator``) in place of the
confidence floor; with ``validator = "answer"`` a round that passes the floor is accepted only when the
model, shown the answer and the rows it was read from, says it is what the question asks.
"""

from __future__ import annotations

from dataclasses import dataclass

from query.llm.chat import Llm
from query.modes.graph_critic.llm_validator import LlmValidator
from query.modes.graph_critic.modules import Walk
from query.modes.graph_critic.plans import Plan
from query.modes.graph_critic.settings import GraphCriticSettings
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from schemas.query import QueryResult


@dataclass
class Verdict:
    accepted: bool
    feedback: str | None = None
    detail: str | None = None


class Critic:
    """Judges rounds; safe for concurrent use (the LLM validator locks around its model)."""

    def __init__(self, store: EvidenceStore, settings: GraphCriticSettings, llm: Llm | None = None):
        self.store, self.settings = store, settings
        self.llm_validator = (
            LlmValidator(llm, settings.validator_rows)
            if llm is not None and settings.validator != "rules"
            else None
        )

    def validate(self, plan: Plan, walk: Walk, result: QueryResult) -> Verdict:
        if walk.empty == "no entity":
            return Verdict(False, "no entity", "no entity is linked in the question to walk from")
        if walk.empty == "no edges":
            kind = "incorrect relation" if plan.relations is not None else "incorrect entity"
            return Verdict(False, kind, f"no edge leaves {', '.join(walk.topics)} along the chosen relations")
        if walk.empty == "no intersection":
            return Verdict(False, "no intersection", f"{', '.join(walk.topics)} reach no common entity")
        if result.unknown:
            feedback = "incorrect relation" if plan.relations is not None else "wrong module"
            return Verdict(
                False, feedback, f"the {plan.module} module's rows hold no answer the reader trusts"
            )
        if plan.module == "hybrid" and any(
            result.answer.casefold() == label.casefold() or result.answer_entity_id == entity_id
            for entity_id, label in plan.entities
        ):
            return Verdict(
                False, "incorrect relation", f"the answer '{result.answer}' is the topic entity itself"
            )
        if plan.module == "hybrid" and len(walk.topics) > 1:
            supported = set(result.supporting_evidence_ids)
            if supported and not supported & set(walk.paths):
                return Verdict(False, "answer outside intersection", "the answer's evidence is on no path")
        # last: every other check passed
        feedback = "incorrect relation" if plan.module == "hybrid" and plan.relations else "wrong module"
        if self.llm_validator is not None and self.settings.validator == "answer":
            return self._check_answer(result, walk, feedback)
        if self.llm_validator is not None:
            rows = self._rows(walk.ranking[: self.settings.validator_rows], walk)
            judged = self.llm_validator.judge(result.question, rows)
            said = f"validator: P(the top rows state the answer) = {judged.probability:.2f}"
            if judged.probability < self.settings.accept_probability:
                return Verdict(False, feedback, f"{said} < {self.settings.accept_probability}")
            return Verdict(True, detail=said)
        if result.confidence < self.settings.accept_confidence:
            return Verdict(
                False, feedback, f"confidence {result.confidence:.2f} < {self.settings.accept_confidence}"
            )
        return Verdict(True)

    def _check_answer(self, result: QueryResult, walk: Walk, feedback: str) -> Verdict:
        """The confidence floor, then the model's check of the answer against the rows it was read from
        (then the round's top rows): a confident reader can still have read the wrong entity's row."""
        if result.confidence < self.settings.accept_confidence:
            return Verdict(
                False, feedback, f"confidence {result.confidence:.2f} < {self.settings.accept_confidence}"
            )
        assert self.llm_validator is not None
        ids = list(dict.fromkeys([*result.supporting_evidence_ids, *walk.ranking]))
        rows = self._rows(ids[: self.settings.validator_rows], walk)
        judged = self.llm_validator.check(result.question, result.answer, rows)
        said = f"validator: P('{result.answer}' is what the question asks) = {judged.probability:.2f}"
        if judged.probability < self.settings.accept_probability:
            return Verdict(False, feedback, f"{said} < {self.settings.accept_probability}")
        return Verdict(True, detail=said)

    def _rows(self, ids: list[str], walk: Walk) -> list[EvidenceRow]:
        """The rows of ``ids`` in order: the walk's own, else the store's."""
        missing = [e for e in ids if e not in walk.rows]
        stored = {row.evidence_id: row for row in self.store.get(missing)} if missing else {}
        return [row for e in ids if (row := walk.rows.get(e) or stored.get(e)) is not None]
