"""The retrieve → re-rank → read mode: the pipeline (``query.pipeline``, after QUASAR) end to end.

It always answers (with "unknown" when the evidence holds nothing), so it is the router's fallback.
"""

from __future__ import annotations

from query.modes.base import Declined, Understanding
from query.pipeline import Pipeline
from schemas.query import QueryResult

NAME = "retrieve-read"
ESTIMATE = 0.5
"""Below a KG lookup that found its entity and property, above a mode that found nothing to do."""


class RetrieveReadMode:
    name = NAME

    def __init__(self, pipeline: Pipeline):
        self.pipeline = pipeline

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        return ESTIMATE, "retrieves evidence for any question and reads an answer or 'unknown'"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        return self.pipeline.answer(understanding)
