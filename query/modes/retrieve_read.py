"""The retrieve → re-rank → read mode: the pipeline (``query.pipeline``, after QUASAR) end to end.

It always answers (with "unknown" when the evidence holds nothing), so it is the router's fallback. Its
answer is held to the question (``AnswerGuard``): a text that is no question is not read, and an answer
about something else than the question names, or of another kind than it asks, becomes "unknown" with
the reason in the route.
"""

from __future__ import annotations

from query.modes.answer_guard import AnswerGuard, not_read, refrained
from query.modes.base import Declined, Understanding
from query.pipeline import Pipeline
from schemas.query import QueryResult

NAME = "retrieve-read"
ESTIMATE = 0.5
"""Below a KG lookup that found its entity and property, above a mode that found nothing to do."""


class RetrieveReadMode:
    name = NAME

    def __init__(self, pipeline: Pipeline, guard: AnswerGuard | None = None):
        self.pipeline, self.guard = pipeline, guard

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        return ESTIMATE, "retrieves evidence for any question and reads an answer or 'unknown'"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        if self.guard is None:
            return self.pipeline.answer(understanding)
        if (plan := self.guard.before(understanding)) is not None:
            return not_read(understanding, plan, self.pipeline.index_version)
        result = self.pipeline.answer(understanding)
        if (plan := self.guard.after(understanding, result)) is not None:
            return refrained(result, plan)
        return result
