"""One question's trip through the pipeline, every intermediate ranking kept (``StagedRun``).

A run is a value: a stage or a mode that changes the final rows (table-sql putting the row its SQL picked
first, graph-critic a walk of the graph) makes a new run with ``focused`` and leaves the one it was given
as it was, so one retrieval can be re-read, re-ranked or measured any number of times.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field, replace

import numpy as np

from query.retrieve.base import Ranked
from query.retrieve.evidence_store import EvidenceRow
from query.retrieve.retrievers import FusedPool
from schemas.query import Intent, LinkedMention

FINAL = "final"


@dataclass(frozen=True)
class StagedRun:
    """Everything one question went through; each ranking is a list of evidence ids, best first.

    ``rankings`` holds "fused", "rerank1", "rerank2" (when stage two ran) and "final"; ``rows`` every row
    a ranking names; ``added_by`` the rows a mode brought in past the pool (and which mode);
    ``reader_note`` what a mode tells a model reader about the first rows."""

    question: str
    intent: Intent
    links: list[LinkedMention]
    retrieved: dict[str, Ranked]
    pool: FusedPool
    rows: dict[str, EvidenceRow]
    features: np.ndarray  # one row per pool id, in pool order
    rankings: dict[str, list[str]] = field(default_factory=dict)
    final_scores: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    added_by: dict[str, str] = field(default_factory=dict)
    reader_note: str | None = None

    @property
    def final(self) -> list[str]:
        return self.rankings[FINAL]

    def final_rows(self) -> list[EvidenceRow]:
        return [self.rows[e] for e in self.final]

    def focused(
        self,
        final: list[str],
        *,
        rows: Mapping[str, EvidenceRow] | None = None,
        by: str | None = None,
        scores: Mapping[str, float] | None = None,
        note: str | None = None,
    ) -> StagedRun:
        """A new run whose final ranking is ``final``: ``rows`` it names that the pool had not (added by the
        mode ``by``), its ``scores`` when they replace the final ones, and a ``note`` for the reader."""
        rows = rows or {}
        return replace(
            self,
            rows={**self.rows, **rows},
            added_by={**self.added_by, **dict.fromkeys(rows, by or "mode")},
            rankings={**self.rankings, FINAL: list(final)},
            final_scores=dict(scores) if scores is not None else dict(self.final_scores),
            timings=dict(self.timings),
            reader_note=note if note is not None else self.reader_note,
        )

    def with_rows(self, rows: Mapping[str, EvidenceRow]) -> StagedRun:
        """The same run holding ``rows`` (the evaluation drops rows between passes to save memory)."""
        return replace(self, rows=dict(rows))
