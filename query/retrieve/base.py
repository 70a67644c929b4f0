"""What every retriever is: ``run(query) -> Ranked``, one signature for the whole family (as Haystack's
retriever protocol has it), so the pipeline loops over the configured retrievers instead of branching on
their names.

A retriever reads what it needs of one ``RetrievalQuery``: the question and its intent, the linked
entities the engine trusts, the question's vector, and — for a retriever that runs after the first
fusion (the hop) — the head of that fusion as seeds. Retrievers are registered by name in
``query.retrieve.registry.RETRIEVERS`` with a factory over ``RetrieverContext`` (the opened index parts
and the retrieval settings).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Protocol

import numpy as np

from query.retrieve.evidence_store import EvidenceRow
from schemas.query import Intent

RETRIEVER_NAMES = ("kg", "bm25", "dense", "hop")
"""The built-in retrievers, in the order they run and are fused (stage one has a rank feature for each)."""


@dataclass
class Ranked:
    """One retriever's output: ids best first with their scores."""

    name: str
    ids: list[str] = field(default_factory=list)
    scores: list[float] = field(default_factory=list)


@dataclass(frozen=True)
class RetrievalQuery:
    """Everything a retriever may read about the question; each takes what it needs."""

    question: str
    intent: Intent
    entity_ids: list[str] = field(default_factory=list)
    vector: np.ndarray | None = None
    seeds: list[EvidenceRow] = field(default_factory=list)
    exclude: frozenset[str] = frozenset()


class Retriever(Protocol):
    """A retriever. ``after_fusion``: it reads the first fusion's head (``query.seeds``) and joins a second
    fusion (the hop); otherwise it reads the question and joins the first. Safe for concurrent ``run``."""

    name: str
    after_fusion: bool

    def run(self, query: RetrievalQuery) -> Ranked: ...
