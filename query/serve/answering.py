"""One question from request to ``ServedResult``: checks, the lane, the fallback, the deadline.

The engine is a ``LiveEngine`` (one per process): it follows ``current`` between questions, and each
answer names the one version it was read from. Questions for the configured LLM reader go through the
``llm`` lane; those that ask for the candidate reader, or fall back to it, through the ``fast`` lane.
"""

from __future__ import annotations

import time
from dataclasses import dataclass

from query.events import Listener, listened
from query.live import LiveEngine
from query.serve.admission import DeadlineExceeded, Lane, QueueFull
from query.serve.errors import ApiError
from query.serve.metrics import Metrics
from query.serve.models import Served, ServedResult
from query.serve.settings import ServeSettings
from schemas.answers import question_text
from schemas.query import QueryResult

CANDIDATES = "candidates"


@dataclass(frozen=True)
class Ticket:
    """An admitted question: its checked text, its lane, and whether that lane is the fallback."""

    question: str
    lane: Lane
    fallback: bool
    why: str | None


class Answering:
    def __init__(self, engine: LiveEngine, reader: str, settings: ServeSettings, metrics: Metrics):
        """``reader``: the engine's configured reader (``"llm"`` or ``"candidates"``)."""
        self.engine, self.reader, self.settings, self.metrics = engine, reader, settings, metrics
        self.llm = Lane("llm", settings.llm_slots, settings.llm_queue, first_guess_s=5.0)
        self.fast = Lane("fast", settings.fast_slots, settings.fast_queue, first_guess_s=0.5)
        metrics.watch([self.llm, self.fast])

    def deadline(self, asked_s: float | None) -> float:
        """The request's deadline as a ``time.monotonic()`` instant: its own, capped by the server's."""
        seconds = min(asked_s or self.settings.deadline_s, self.settings.max_deadline_s)
        return time.monotonic() + seconds

    def checked(self, question: str) -> str:
        """The question, or the reason it is refused, before it takes a place in any queue."""
        if len(question) > self.settings.max_question_chars:
            raise ApiError(
                413,
                "question_too_long",
                f"the question has {len(question)} characters; this server takes at most "
                f"{self.settings.max_question_chars}",
            )
        try:
            return question_text(question)
        except ValueError as exc:
            raise ApiError(422, "question_refused", str(exc)) from None

    def lane_for(self, reader: str, fallback: bool) -> tuple[Lane, bool, str | None]:
        """The lane a question goes to now, whether that is the fallback, and why. Raises 429 when the
        LLM lane is full and the request does not allow the fallback (or the fast lane is full too)."""
        if self.reader != "llm" or reader == CANDIDATES:
            return self._open(self.fast), False, None
        if not self.llm.full():
            return self.llm, False, None
        if not fallback:
            self._full(self.llm)
        why = f"the LLM queue was full ({self.llm.slots} answering, {self.llm.waiting} waiting)"
        return self._open(self.fast), True, why

    def _open(self, lane: Lane) -> Lane:
        if lane.full():
            self._full(lane)
        return lane

    def _full(self, lane: Lane) -> None:
        self.metrics.rejected.labels(lane.name).inc()
        retry = lane.retry_after_s()
        message = f"the {lane.name} queue is full; retry after {retry:.0f} s"
        if lane is self.llm:
            message += ', or send "fallback": true to accept the candidate reader\'s answer'
        raise ApiError(429, "queue_full", message, retry_after_s=retry)

    def admit(self, question: str, reader: str, fallback: bool) -> Ticket:
        """The checked question and its lane, or the refusal (413, 422, 429), before any wait."""
        question = self.checked(question)
        lane, fell_back, why = self.lane_for(reader, fallback)
        return Ticket(question, lane, fell_back, why)

    async def run(self, ticket: Ticket, deadline: float, listener: Listener | None = None) -> ServedResult:
        """The admitted question answered on its lane, tagged with how it was served; ``listener`` hears
        the answer's events (``query.events``) on the lane's thread while it is answered."""
        lane = ticket.lane
        asked = CANDIDATES if lane is self.fast else None

        def answer() -> QueryResult:
            if listener is None:
                return self.engine.ask(ticket.question, reader=asked)
            with listened(listener):  # set on the lane's thread: the engine emits there
                return self.engine.ask(ticket.question, reader=asked)

        try:
            result, timing = await lane.run(answer, deadline)
        except QueueFull:  # filled between the admission and the run: rare, said the same way
            self._full(lane)
            raise
        except DeadlineExceeded as exc:
            self.metrics.deadlines.labels(lane.name).inc()
            raise ApiError(504, "deadline_exceeded", f"{exc}; ask again with a longer deadline_s") from None
        served = Served(
            lane=lane.name,
            fallback=ticket.fallback,
            fallback_reason=ticket.why,
            queued_ms=timing.queued_ms,
            answer_ms=timing.answer_ms,
        )
        answer = ServedResult.model_construct(**dict(result), served=served)
        self.metrics.answered(answer)
        return answer

    async def ask(self, question: str, reader: str, fallback: bool, deadline: float) -> ServedResult:
        return await self.run(self.admit(question, reader, fallback), deadline)

    def close(self) -> None:
        self.llm.close()
        self.fast.close()
