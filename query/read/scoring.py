"""How an answer candidate is described and weighed: ``ANSWER_FEATURES`` and the ``AnswerScorer``.

Each candidate is described by a few features: the logs of the four hand-set factors (support, type
fit, keyword coverage, proximity) whose product was the first scorer, and what the product cannot say —
how specific it is (its rarest word's idf in the BM25 index: "American" is in tens of thousands of rows
and seldom the answer), whether a longer candidate contains it ("Helton" in "Clay Helton"), where the
first evidence holding it ranks, whether it is a structured value (a table cell, an infobox value, a KG
value), whether its column header is a word of the question, its kind and the source it came from. An
``AnswerScorer`` weighs them: the hand-set one (the product, confidence from its margin over the
runner-up), or one fitted on benchmark folds by logistic regression of "this candidate is the gold
answer", whose probability is the confidence.
"""

from __future__ import annotations

import math
from collections.abc import Callable, Mapping, Sequence
from typing import ClassVar

import numpy as np
from pydantic import Field

from query.lexicon import SEARCH_STOPWORDS
from query.linear import LinearModel
from query.read.extract import SENTENCE_END, Draft, body, extract
from query.retrieve.evidence_store import EvidenceRow
from query.text import search_words, tokens
from schemas.evidence import SOURCE_TYPES
from schemas.query import Intent, LinkedMention

TYPE_FIT: dict[str, dict[str, float]] = {
    "person": {"entity": 1.0, "name": 0.9, "date": 0.05, "year": 0.05, "number": 0.05},
    "place": {"entity": 1.0, "name": 0.9, "date": 0.05, "year": 0.05, "number": 0.05},
    "organization": {"entity": 1.0, "name": 0.9, "date": 0.05, "year": 0.05, "number": 0.05},
    "entity": {"entity": 1.0, "name": 0.8, "date": 0.2, "year": 0.2, "number": 0.2},
    "date": {"date": 1.0, "year": 0.8, "number": 0.1, "entity": 0.05, "name": 0.05},
    "year": {"year": 1.0, "date": 0.7, "number": 0.1, "entity": 0.05, "name": 0.05},
    "number": {"number": 1.0, "year": 0.3, "date": 0.1, "entity": 0.05, "name": 0.05},
    "other": {"entity": 0.7, "name": 0.6, "date": 0.5, "year": 0.5, "number": 0.5},
}
NEUTRAL_KIND_FIT = 0.5
"""A known kind that may or may not be the one asked for (a thing without coordinates for a place)."""


TYPED_ANSWERS = ("person", "place", "organization")
"""Answer types an entity fits by its kind. An entity of unknown kind (a linked page without a Wikidata
item, or an item without the kind statements) keeps a linked entity's fit: only a known kind that is not
the one asked for lowers it. (Lowering every untyped page to a neutral fit made capitalized words of the
prose, "Born" or "Although", outrank the linked player a table row names.)"""
KIND_FIT: dict[str, dict[str, float]] = {
    "person": {"person": 1.0, "place": 0.05, "thing": 0.05},
    "place": {"place": 1.0, "person": 0.05, "thing": NEUTRAL_KIND_FIT},
    "organization": {"thing": 1.0, "person": 0.05, "place": NEUTRAL_KIND_FIT},
}
"""A typed entity against a typed answer: its own kind fits, a person never fits a place (nor the
reverse); a thing without coordinates may still be a place (a region), so it stays neutral there."""


def _key(text: str) -> str:
    return " ".join(tokens(text))


def _contains(haystack: str, needle: str) -> bool:
    return bool(needle) and f" {needle} " in f" {haystack} "


def proximity(text_key: str, candidate_key: str, keywords: set[str], window: int = 8) -> float:
    """1 when a question keyword sits right beside the candidate in the text, falling to 0 at ``window``.

    Separates 'His father, Nicomachus, died' from 'born in Stagira' when the question asks for the
    father: both are in the same passage, only one is next to the word the question uses.
    """
    words = text_key.split()
    size = len(candidate_key.split())
    starts = [i for i in range(len(words) - size + 1) if " ".join(words[i : i + size]) == candidate_key]
    marks = [i for i, w in enumerate(words) if w in keywords]
    if not starts or not marks:
        return 0.0
    gap = min(max(0, m - (s + size - 1), s - m) for s in starts for m in marks)
    return max(0.0, 1.0 - gap / window)


ANSWER_FEATURES: tuple[str, ...] = (
    "log_support",
    "log_type",
    "log_coverage",
    "log_near",
    "sentence_coverage",
    "adjacent",
    "first_rank",
    "structured",
    "header_match",
    "entity",
    *(f"kind_{k}" for k in ("entity", "name", "date", "year", "number")),
    *(f"src_{s}" for s in SOURCE_TYPES),
    "log_tokens",
    "log_specific",
    "contained",
)
"""What the answer scorer knows of a candidate (see the module docstring)."""

HAND_WEIGHTS: dict[str, float] = {
    "log_support": 0.5,
    "log_type": 1.0,
    "log_coverage": 1.0,
    "log_near": 1.0,
    "log_specific": 2.0,
    "contained": -1.0,
}
"""Summing these logs ranks as the product of √support, type fit, coverage term, proximity term and the
squared specificity term; a candidate that is part of a longer one ("Helton" in "Clay Helton") counts
e⁻¹. Support at full weight favoured words that recur in every row ("American", "Football Club"). Chosen
on the first 600 OTT-QA dev questions (EM 1.3 % → 4.0 %); on the other 1,614, EM 3.7 % → 4.6 % and the
best candidate right 5.0 % → 6.6 % (benchmarks/results/ottqa)."""

SPECIFIC_ENOUGH = 0.5
"""Specificity (``Bm25Index.specificity``) from which a candidate counts as fully specific: a word in
fewer than ~700 of 478k OTT-QA rows. Below it the specificity term falls linearly to 0.1."""


class AnswerScorer(LinearModel):
    """A linear score over ``ANSWER_FEATURES``; fitted ones turn it into a probability of being right."""

    FEATURES: ClassVar[tuple[str, ...]] = ANSWER_FEATURES
    KIND: ClassVar[str] = "answer"

    weights: dict[str, float] = Field(default_factory=lambda: dict(HAND_WEIGHTS))

    def confidence(self, scores: np.ndarray) -> float:
        """How sure the best candidate is right: the fitted probability, or for the hand-set product
        its value scaled by its margin over the runner-up."""
        best = float(scores[0])
        if self.trained_on is not None:
            return 1.0 / (1.0 + math.exp(-best))
        product, runner_up = math.exp(best), (math.exp(float(scores[1])) if len(scores) > 1 else 0.0)
        margin = product / (product + runner_up) if product + runner_up > 0 else 0.0
        return min(1.0, product * (0.5 + margin))


def candidate_features(
    intent: Intent,
    links: list[LinkedMention],
    top: list[EvidenceRow],
    label_of: Callable[[str], str | None],
    specificity: Callable[[str], float] | None = None,
    kinds: Callable[[Sequence[str]], Mapping[str, str]] | None = None,
) -> tuple[list[Draft], np.ndarray, list[list[int]]]:
    """The candidates ``top`` offers (the question's own names and linked entities left out), their
    ``ANSWER_FEATURES`` matrix, and the rows of ``top`` holding each.

    ``specificity``: how rare a candidate's rarest word is in the corpus, 0..1
    (``Bm25Index.specificity``); without it every candidate counts as specific. ``kinds``: the known
    kinds of entity ids (``EntityKinds``); without it every entity's kind is unknown.
    """
    question_key = _key(intent.question)
    excluded_entities = {c.entity_id for link in links for c in link.candidates[:1]}
    weights = [1.0 / (1.0 + rank) for rank in range(len(top))]
    total = sum(weights) or 1.0
    # support is counted in the evidence body: a table row's page title in its context prefix
    # names where the row sits, not what it says
    keys = [_key(body(row)) for row in top]
    sentences = [[_key(x) for x in SENTENCE_END.split(body(row))] for row in top]
    keywords = set(intent.keywords) or set(search_words(intent.question))
    coverage = [len(keywords & set(_key(row.text).split())) / max(len(keywords), 1) for row in top]
    found: dict[str, Draft] = {}
    for row in top:
        for draft in extract(row, label_of):
            key = _key(draft.text)
            if not key or key in SEARCH_STOPWORDS or _contains(question_key, key):
                continue
            if draft.entity_id in excluded_entities:
                continue
            kept = found.setdefault(key, draft)
            if draft.kind == "entity" and kept.kind != "entity":
                kept.kind, kept.entity_id = "entity", draft.entity_id
            if draft.structured and not kept.structured:
                kept.structured, kept.header = True, draft.header
    fit = TYPE_FIT.get(intent.answer_type, TYPE_FIT["other"])
    typed = intent.answer_type in TYPED_ANSWERS
    entity_ids = [d.entity_id for d in found.values() if d.kind == "entity" and d.entity_id]
    known = dict(kinds(entity_ids)) if typed and kinds is not None and entity_ids else {}
    col = {name: i for i, name in enumerate(ANSWER_FEATURES)}
    padded = [f" {key} " for key in found]
    drafts, rows, holdings = [], [], []
    for key, draft in found.items():
        holding = [i for i, k in enumerate(keys) if _contains(k, key)]
        if not holding:
            continue
        x = np.zeros(len(ANSWER_FEATURES))
        x[col["log_support"]] = math.log(sum(weights[i] for i in holding) / total)
        x[col["log_type"]] = math.log(
            _fit(fit, draft, intent.answer_type, known) if typed else fit.get(draft.kind, 0.3)
        )
        x[col["log_coverage"]] = math.log(0.25 + 0.75 * max(coverage[i] for i in holding))
        x[col["log_near"]] = math.log(0.5 + 0.5 * max(proximity(keys[i], key, keywords) for i in holding))
        x[col["sentence_coverage"]] = (
            max(
                len(keywords & set(sentence.split())) / max(len(keywords), 1)
                for i in holding
                for sentence in sentences[i]
                if _contains(sentence, key)
            )
            if any(_contains(sentence, key) for i in holding for sentence in sentences[i])
            else 0.0
        )
        x[col["first_rank"]] = 1.0 / (1.0 + holding[0])
        x[col["adjacent"]] = max(proximity(keys[i], key, keywords, window=2) for i in holding)
        x[col["structured"]] = float(draft.structured)
        header_words = set(search_words(draft.header or ""))
        x[col["header_match"]] = len(header_words & keywords) / len(header_words) if header_words else 0.0
        x[col["entity"]] = float(draft.entity_id is not None)
        x[col[f"kind_{draft.kind}"]] = 1.0
        x[col[f"src_{top[holding[0]].source_type}"]] = 1.0
        x[col["log_tokens"]] = math.log(1 + len(key.split()))
        specific = specificity(draft.text) if specificity is not None else 1.0
        x[col["log_specific"]] = math.log(0.1 + 0.9 * min(1.0, specific / SPECIFIC_ENOUGH))
        mine = f" {key} "
        x[col["contained"]] = float(any(mine in other and other != mine for other in padded))
        drafts.append(draft)
        rows.append(x)
        holdings.append(holding)
    matrix = np.array(rows) if rows else np.zeros((0, len(ANSWER_FEATURES)))
    return drafts, matrix, holdings


def _fit(fit: dict[str, float], draft: Draft, answer_type: str, known: Mapping[str, str]) -> float:
    """A typed answer's fit: an entity by its known kind, or as any linked entity when it is unknown."""
    if draft.kind != "entity" or not draft.entity_id:
        return fit.get(draft.kind, 0.3)
    kind = known.get(draft.entity_id)
    return fit["entity"] if kind is None else KIND_FIT[answer_type].get(kind, NEUTRAL_KIND_FIT)
