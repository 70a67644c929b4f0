"""Stage 5 without an LLM: pick the answer among the entities and literals the top evidence holds.

Candidates come from the structure the evidence already has — a KG statement's value and qualifier
values, a table row's or infobox's cell values and linked entities — and from literals in prose
(dates, years, numbers, capitalized names): ``query.read.extract``. A candidate's support is the
rank-weighted mass of the top evidence that contains it; its type is checked against the intent's answer
type; anything the question itself names is excluded (the answer to "who directed Alien?" is not
"Alien"). ``query.read.scoring`` describes each candidate by features and weighs them. When the best
candidate's confidence is below a threshold calibrated on a benchmark, the answer is "unknown".
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np
from pydantic import BaseModel, Field

from query.read.extract import Draft
from query.read.scoring import ANSWER_FEATURES, HAND_WEIGHTS, AnswerScorer, candidate_features
from query.retrieve.evidence_store import EvidenceRow
from schemas.query import AnswerCandidate, Intent, LinkedMention

UNKNOWN = "unknown"


class AnswerSettings(BaseModel):
    top_evidence: int = Field(10, ge=1, description="evidence the candidates are drawn from")
    threshold: float = Field(0.15, ge=0.0, le=1.0, description="below this confidence: 'unknown'")
    max_candidates: int = Field(10, ge=1, description="candidates kept in the result")
    scorer: Path | None = Field(
        None,
        description="fitted answer scorer (JSON, as `hqa eval` writes it); None = hand-set. One fitted "
        "on OTT-QA reads its multi-hop table questions better, single-hop questions worse (README)",
    )


@dataclass
class AnswerChoice:
    answer: str
    entity_id: str | None
    confidence: float
    unknown: bool
    candidates: list[AnswerCandidate]
    supporting: list[str]
    features: np.ndarray | None = None  # one row per candidate kept, in ``candidates`` order


class CandidateAnswerer:
    """Scores candidates with an ``AnswerScorer``; 'unknown' under the threshold."""

    name = "candidates"

    def __init__(
        self,
        settings: AnswerSettings | None = None,
        scorer: AnswerScorer | None = None,
        specificity: Callable[[str], float] | None = None,
        kinds: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
    ):
        """``specificity``: how rare a candidate's rarest word is in the corpus, 0..1
        (``Bm25Index.specificity``); without it every candidate counts as specific. ``kinds``: the known
        kinds of entity ids (``EntityKinds``); without it no entity's kind is known."""
        self.settings = settings or AnswerSettings()
        if scorer is None:
            scorer = AnswerScorer.load(self.settings.scorer) if self.settings.scorer else AnswerScorer()
        self.scorer = scorer
        self.specificity, self.kinds = specificity, kinds

    def run(
        self,
        intent: Intent,
        links: list[LinkedMention],
        evidence: list[EvidenceRow],
        label_of: Callable[[str], str | None],
        scorer: AnswerScorer | None = None,
    ) -> AnswerChoice:
        """The answer from the top evidence; ``scorer`` overrides the configured one (the harness's folds)."""
        scorer = scorer or self.scorer
        texts, drafts, matrix, holding = self.candidates(intent, links, evidence, label_of)
        if not drafts:
            return AnswerChoice(UNKNOWN, None, 0.0, True, [], [], np.zeros((0, len(ANSWER_FEATURES))))
        scores = scorer.score(matrix)
        order = np.argsort(-scores, kind="stable")[: self.settings.max_candidates]
        col = {name: i for i, name in enumerate(ANSWER_FEATURES)}
        kept = [
            AnswerCandidate(
                text=drafts[i].text,
                entity_id=drafts[i].entity_id,
                kind=drafts[i].kind,  # type: ignore[arg-type]
                support=round(math.exp(matrix[i, col["log_support"]]), 4),
                type_match=round(math.exp(matrix[i, col["log_type"]]), 4),
                score=round(float(scores[i]), 4),
                evidence_ids=[texts[j].evidence_id for j in holding[i]],
            )
            for i in order
        ]
        confidence = round(scorer.confidence(scores[order]), 4)
        best = kept[0]
        unknown = confidence < self.settings.threshold
        return AnswerChoice(
            UNKNOWN if unknown else best.text,
            None if unknown else best.entity_id,
            confidence,
            unknown,
            kept,
            [] if unknown else best.evidence_ids,
            matrix[order],
        )

    def candidates(
        self,
        intent: Intent,
        links: list[LinkedMention],
        evidence: list[EvidenceRow],
        label_of: Callable[[str], str | None],
    ) -> tuple[list[EvidenceRow], list[Draft], np.ndarray, list[list[int]]]:
        """(top evidence, candidates, their feature matrix, the top evidence rows holding each)."""
        top = evidence[: self.settings.top_evidence]
        drafts, matrix, holdings = candidate_features(
            intent, links, top, label_of, self.specificity, self.kinds
        )
        return top, drafts, matrix, holdings


__all__ = [
    "ANSWER_FEATURES",
    # moved: query.read.scoring.HAND_WEIGHTS; kept for benchmarks/reader_weights.py until the lead's
    # refactor lands (ANSWER_FEATURES and AnswerScorer stay importable here as well: this module uses them)
    "HAND_WEIGHTS",
    "UNKNOWN",
    "AnswerChoice",
    "AnswerScorer",
    "AnswerSettings",
    "CandidateAnswerer",
]
