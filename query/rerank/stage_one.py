"""Stage 4: re-ranking 1000 → 100 → 30, cheap stage first.

Stage one re-orders the head of the fused pool (its first ``stage1_keep``, 100 by default) from signals
that are already there or cost a dictionary lookup: the fused score, each retriever's score and rank,
the dense cosine of the stored vector, keyword and title coverage, overlap with the linked entities
and their pages, the answer type and time fit, the matched KG property and the source type. A linear
model combines them: weights learned pairwise on a benchmark (``LinearRanker.load``), or hand-set ones.
It only re-orders the fused head: scoring all 1000 and keeping the best 100 by features pushed out
answer rows the fusion had kept (OTT-QA dev, first 600: answer presence at 100 fell from 0.90 to 0.81),
while re-ordering the head raised presence at 30 from 0.71 to 0.77.

Stage two runs a pair scorer (late interaction over MiniLM token vectors, or a cross-encoder) on the
survivors of stage one and mixes its standardized score with stage one's.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass
from typing import ClassVar

import numpy as np
from pydantic import Field

from query.linear import LinearModel
from query.retrieve.base import RETRIEVER_NAMES
from query.retrieve.evidence_store import EvidenceRow
from query.retrieve.retrievers import FusedPool
from query.text import search_words
from schemas.evidence import SOURCE_TYPES
from schemas.query import Intent, LinkedMention

FEATURES: tuple[str, ...] = (
    "rrf",
    "bm25",
    "dense",
    "kg",
    "hop",
    "coverage",
    "title_coverage",
    "entity_overlap",
    "linked_page",
    "type_match",
    "time_match",
    "property_match",
    *(f"src_{s}" for s in SOURCE_TYPES),
    *(f"rank_{r}" for r in RETRIEVER_NAMES),
)
"""``rank_<retriever>``: 1 / log2(1 + rank) in that retriever's list, 0 when it did not return the row."""

DEFAULT_WEIGHTS: dict[str, float] = {
    "rrf": 20.0,
    "bm25": 1.0,
    "dense": 1.0,
    "kg": 0.3,
    "hop": 0.3,
    "coverage": 2.0,
    "title_coverage": 0.5,
    "entity_overlap": 0.5,
    "linked_page": 0.3,
    "type_match": 0.3,
    "time_match": 0.5,
    "property_match": 1.0,
}
"""Hand-set before any benchmark was run: each signal's weight reflects its scale (rrf ~ 1/60)."""

_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(r"\b\d[\d,.]*\b")
_CAPITALIZED = re.compile(r"\b[A-Z][a-z]+(?: [A-Z][a-z]+)+\b")


def answer_type_fit(answer_type: str, text: str) -> float:
    """How plausibly the text can hold an answer of the type (a cheap surface test, 0..1)."""
    if answer_type in ("date", "year"):
        return 1.0 if _YEAR.search(text) else 0.0
    if answer_type == "number":
        return 1.0 if _NUMBER.search(text) else 0.0
    if answer_type in ("person", "organization", "place"):
        return 1.0 if _CAPITALIZED.search(text) else 0.3
    return 0.5


@dataclass
class FeatureContext:
    """What stage one knows about the question, computed once per question."""

    intent: Intent
    keywords: set[str]
    entity_scores: dict[str, float]
    linked_pages: set[str]
    properties: dict[str, float]
    years: set[str]

    @classmethod
    def of(cls, intent: Intent, links: list[LinkedMention]) -> FeatureContext:
        entity_scores: dict[str, float] = {}
        pages: set[str] = set()
        for link in links:
            for cand in link.candidates:
                entity_scores[cand.entity_id] = max(entity_scores.get(cand.entity_id, 0.0), cand.score)
                pages.add(cand.page_title or cand.entity_id)
        return cls(
            intent=intent,
            keywords=set(intent.keywords) or set(search_words(intent.question)),
            entity_scores=entity_scores,
            linked_pages=pages,
            properties={p.property: p.score for p in intent.properties},
            years={str(y) for y in intent.time.years},
        )


def features(rows: list[EvidenceRow], pool: FusedPool, dense: np.ndarray, ctx: FeatureContext) -> np.ndarray:
    """One row of ``FEATURES`` per evidence row (same order as ``rows``)."""
    out = np.zeros((len(rows), len(FEATURES)), dtype=np.float32)
    col = {name: i for i, name in enumerate(FEATURES)}
    bm25_max = max((pool.scores[r.evidence_id].get("bm25", 0.0) for r in rows), default=0.0) or 1.0
    kg_max = max((pool.scores[r.evidence_id].get("kg", 0.0) for r in rows), default=0.0) or 1.0
    hop_max = max((pool.scores[r.evidence_id].get("hop", 0.0) for r in rows), default=0.0) or 1.0
    n_keywords = max(len(ctx.keywords), 1)
    for i, row in enumerate(rows):
        scores = pool.scores[row.evidence_id]
        words = set(search_words(row.text))
        title_words = set(search_words(row.title))
        out[i, col["rrf"]] = pool.fused[row.evidence_id]
        out[i, col["bm25"]] = scores.get("bm25", 0.0) / bm25_max
        out[i, col["dense"]] = dense[i]
        out[i, col["kg"]] = scores.get("kg", 0.0) / kg_max
        out[i, col["hop"]] = scores.get("hop", 0.0) / hop_max
        out[i, col["coverage"]] = len(ctx.keywords & words) / n_keywords
        out[i, col["title_coverage"]] = len(ctx.keywords & title_words) / n_keywords
        out[i, col["entity_overlap"]] = min(1.0, sum(ctx.entity_scores.get(e, 0.0) for e in row.entity_ids))
        page = row.page_title or row.title
        out[i, col["linked_page"]] = 1.0 if page in ctx.linked_pages else 0.0
        out[i, col["type_match"]] = answer_type_fit(ctx.intent.answer_type, row.text)
        out[i, col["time_match"]] = 1.0 if ctx.years and ctx.years & set(_YEAR.findall(row.text)) else 0.0
        out[i, col["property_match"]] = ctx.properties.get(row.raw_provenance.get("property") or "", 0.0)
        out[i, col[f"src_{row.source_type}"]] = 1.0
        for name, rank in pool.ranks[row.evidence_id].items():
            out[i, col[f"rank_{name}"]] = 1.0 / math.log2(1 + rank)
    return out


class LinearRanker(LinearModel):
    """Stage one's scorer: a weighted sum of the features (unknown names weigh 0)."""

    FEATURES: ClassVar[tuple[str, ...]] = FEATURES
    KIND: ClassVar[str] = "ranker"

    weights: dict[str, float] = Field(default_factory=lambda: dict(DEFAULT_WEIGHTS))


def stage_one(
    ranker: LinearRanker, matrix: np.ndarray, ids: list[str], head: int
) -> tuple[list[str], np.ndarray]:
    """Re-order the first ``head`` ids (fused order; ``matrix`` rows follow ``ids``) by the ranker's score.

    Returns every id (the head re-ordered, the tail as it was) and the head's scores in the new order.
    """
    n = min(head, len(ids))
    scores = ranker.score(matrix[:n])
    order = np.argsort(-scores, kind="stable")
    return [ids[i] for i in order] + ids[n:], scores[order]


def standardize(values: np.ndarray) -> np.ndarray:
    """Zero mean, unit spread: puts two stages' scores on one scale before they are mixed."""
    if values.size == 0:
        return values
    spread = float(values.std())
    return (values - values.mean()) / (spread if spread > 1e-9 else 1.0)
