"""The retrieve → re-rank → read mode: the engine's pipeline (after QUASAR) behind the mode interface.

It always answers (with "unknown" when the evidence holds nothing), so it is the router's fallback.
The pipeline itself stays in ``query.engine``; this mode only calls it, through a protocol, so the
modes room does not import the engine that assembles it.
"""

from __future__ import annotations

from typing import Protocol

from query.modes.base import Declined, Understanding
from schemas.query import QueryResult

NAME = "retrieve-read"
ESTIMATE = 0.5
"""Below a KG lookup that found its entity and property, above a mode that found nothing to do."""


class RetrieveReadPipeline(Protocol):
    def retrieve_and_read(self, understanding: Understanding) -> QueryResult: ...


class RetrieveReadMode:
    name = NAME

    def __init__(self, pipeline: RetrieveReadPipeline):
        self.pipeline = pipeline

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        return ESTIMATE, "retrieves evidence for any question and reads an answer or 'unknown'"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        return self.pipeline.retrieve_and_read(understanding)
