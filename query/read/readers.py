"""The readers by name (``EngineConfig.reader``): the candidate reader, and the LLM reader over it.

The candidate reader is always built: it is the fast path, the answer a mode states itself is dressed
with it, and every model-backed reader falls back to it. The LLM reader needs the engine's instruct
model; when that model could not be loaded, ``"llm"`` gives the candidate reader marked unavailable, so
every result says why no model read it.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from query.llm.chat import Llm
from query.read.base import Reader, Reading, ReadRequest
from query.read.candidates import CandidateAnswerer
from query.read.llm_reader import LlmReader, LlmReaderSettings
from query.registry import Registry
from query.timing import timed
from schemas.query import LlmReading

CANDIDATES = "candidates"
LLM = "llm"


class CandidateReader:
    """The candidate reader behind the ``Reader`` protocol: scored candidates from the top evidence."""

    name = CANDIDATES

    def __init__(self, answerer: CandidateAnswerer, label_of: Callable[[str], str | None]):
        self.answerer, self.label_of = answerer, label_of

    def run(self, request: ReadRequest) -> Reading:
        timings: dict[str, float] = {}
        with timed(timings, "answer"):
            choice = self.answerer.run(request.intent, request.links, request.evidence, self.label_of)
        return Reading(choice, self.name, None, timings)


class UnavailableReader:
    """The configured model could not be loaded: the candidate reader answers, and says why."""

    def __init__(self, fallback: Reader, model: str, error: str):
        self.fallback, self.model, self.error = fallback, model, error
        self.name = fallback.name

    def run(self, request: ReadRequest) -> Reading:
        read = self.fallback.run(request)
        read.reading = LlmReading(model=self.model, outcome="unavailable", error=self.error)
        return read


@dataclass(frozen=True)
class ReaderContext:
    """What a reader may be built from: the candidate reader (every reader's fallback), the engine's
    instruct model when it loaded (else why not), and the LLM reader's settings."""

    candidates: CandidateReader
    llm: Llm | None
    llm_backend: str
    llm_error: str | None
    llm_reader: LlmReaderSettings


def _llm_reader(context: ReaderContext) -> Reader:
    if context.llm is None:
        error = context.llm_error or "no instruct model is configured"
        return UnavailableReader(context.candidates, context.llm_backend, error)
    return LlmReader(context.llm, context.candidates, context.llm_reader)


READERS: Registry[ReaderContext, Reader] = Registry(
    "reader", {CANDIDATES: lambda c: c.candidates, LLM: _llm_reader}
)
"""Readers by the name ``EngineConfig.reader`` gives; a new reader registers here."""
