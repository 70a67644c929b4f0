"""What every reader is: ``run(request) -> Reading``, one method for the whole family.

A reader gets the question as the engine understood it and the final evidence, best first (with, from a
mode, a note about the first rows: "row [1] is the row SQL picked"), and returns the answer it chose, its
own name, and — from a model-backed reader — the account of its reading (what the model said and cited,
tokens, milliseconds). Readers are registered by name in ``query.read.readers.READERS``; the candidate
reader always exists, because every other reader falls back to it.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

from query.read.candidates import AnswerChoice
from query.retrieve.evidence_store import EvidenceRow
from schemas.query import Intent, LinkedMention, LlmReading


@dataclass(frozen=True)
class ReadRequest:
    """What a reader reads: the question, its intent and links, the evidence best first, a mode's note."""

    question: str
    intent: Intent
    links: list[LinkedMention]
    evidence: list[EvidenceRow]
    note: str | None = None


@dataclass
class Reading:
    """A reader's outcome: the answer choice, who read it, the model's account if a model read, timings."""

    choice: AnswerChoice
    reader: str
    reading: LlmReading | None = None
    timings: dict[str, float] = field(default_factory=dict)


class Reader(Protocol):
    """A reader; safe for concurrent ``run`` calls (a model-backed one locks around its model)."""

    name: str

    def run(self, request: ReadRequest) -> Reading: ...
