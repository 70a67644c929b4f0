"""Stage 5 without an LLM: pick the answer among the entities and literals the top evidence holds.

Candidates come from the structure the evidence already has — a KG statement's value and qualifier
values, a table row's or infobox's cell values and linked entities — and from literals in prose
(dates, years, numbers, capitalized names). A candidate's support is the rank-weighted mass of the top
evidence that contains it; its type is checked against the intent's answer type; anything the question
itself names is excluded (the answer to "who directed Alien?" is not "Alien"). When the best
candidate's confidence is below a threshold calibrated on a benchmark, the answer is "unknown".

Each candidate is described by a few features (``ANSWER_FEATURES``): the logs of the four hand-set
factors (support, type fit, keyword coverage, proximity) whose product was the first scorer, and what
the product cannot say — how specific it is (its rarest word's idf in the BM25 index: "American"
is in tens of thousands of rows and seldom the answer), whether a longer candidate contains it
("Helton" in "Clay Helton"), where the first evidence holding it ranks, whether it is a structured value
(a table cell, an infobox value, a KG value), whether its column header is a word of the question, its
kind and the source it came from. An ``AnswerScorer`` weighs them: the hand-set one (the product,
confidence from its margin over the runner-up), or one fitted on benchmark folds by logistic regression
of "this candidate is the gold answer", whose probability is the confidence.
"""

from __future__ import annotations

import math
import re
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import ClassVar

import numpy as np
from pydantic import BaseModel, Field

from query.linear import LinearModel
from query.retrieve.evidence_store import EvidenceRow
from query.text import STOPWORDS, content_words, tokens
from schemas.evidence import SOURCE_TYPES
from schemas.query import AnswerCandidate, Intent, LinkedMention

UNKNOWN = "unknown"

_MONTHS = "January|February|March|April|May|June|July|August|September|October|November|December"
# full dates, also as released text writes them ("November 15 , 1962"), and partial ones ("11 May",
# "September 1998")
_DATE = re.compile(
    rf"\b(?:\d{{1,2}} (?:{_MONTHS})(?: \d{{4}})?|(?:{_MONTHS}) \d{{1,2}}(?: ?, ?\d{{4}})?"
    rf"|(?:{_MONTHS}) \d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})\b"
)
_SCALE = r"(?: (?:million|billion|trillion|thousand|hundred))?"
_QUANTITY = re.compile(
    rf"\b\d+(?:st|nd|rd|th)(?: [a-z]+\b)?|(?:\$ ?)?(?<![\w.])\d[\d,.]*{_SCALE}(?: ?%| [a-z]+\b)?"
)
"""A number with what it counts: '$ 130 million', '20%', '52 years', '10th place' (the word is kept
as a second candidate beside the bare number, the scorer decides)."""
_NUMBER_WORD = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|thirteen|fourteen|fifteen|sixteen"
    r"|seventeen|eighteen|nineteen|twenty|once|twice)\b",
    re.IGNORECASE,
)
_PLACE = re.compile(r"\b[A-Z][\w'.-]+(?: [A-Z][\w'.-]+)* ?, [A-Z][\w'.-]+(?: [A-Z][\w'.-]+)*")
"""'Roanoke , Virginia': a place and the region it is in."""
_YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'.-]*(?:(?<![a-z][a-z]\.)\s+(?:of|the|de|von|van|and|&)?\s*[A-Z][\w'.-]*)*")
"""Capitalized words in a row; a word that ends a sentence ("Thessaloniki. His") ends the name, while
initials and short abbreviations ("Vaughn Jr. Smith", "St. Louis") do not."""
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CELL = re.compile(r"(?:^|, )([^:,]{1,60}): ")
_PAREN = re.compile(r"\s*\([^)]*\)$")

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
class _Draft:
    text: str
    kind: str
    entity_id: str | None = None
    header: str | None = None  # the column header or infobox key of a structured value
    structured: bool = False  # a cell, infobox or KG value rather than a span found in prose


_BARE_ID = re.compile(r"[QPL][1-9]\d*")


def body(row: EvidenceRow) -> str:
    """The evidence text without its 'Page / Section: ' context prefix."""
    prefix, sep, rest = row.text.partition(": ")
    return rest if sep and (prefix == row.title or prefix.startswith(row.title + " /")) else row.text


def literal_kind(value: str) -> str:
    if _DATE.fullmatch(value):
        return "date"
    if _YEAR.fullmatch(value):
        return "year"
    if _NUMBER.fullmatch(value):
        return "number"
    return "name"


def kg_values(row: EvidenceRow) -> list[str]:
    """'Belgium, population, 11,150,516, point in time: 1 January 2014' → value and qualifier values."""
    parts = row.text.split(", ")
    if len(parts) < 3:
        return []
    rest = ", ".join(parts[2:])
    value, *qualifiers = re.split(r", (?=[a-z][\w ()-]*: )", rest)
    return [value] + [q.split(": ", 1)[1] for q in qualifiers if ": " in q]


def cell_values(text: str) -> list[tuple[str, str]]:
    """(header, value) pairs: 'Year: 1995 (68th), Film: Heat' → [('Year', '1995 (68th)'), …]."""
    heads = list(_CELL.finditer(text))
    values = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        value = text[head.end() : end].strip()
        if value:
            values.append((head.group(1).strip(), value))
    return values


def extract(row: EvidenceRow, label_of: Callable[[str], str | None]) -> list[_Draft]:
    """Every answer candidate one evidence row offers."""
    drafts: list[_Draft] = []
    text = body(row)
    values: list[tuple[str | None, str]] = []
    if row.source_type == "kg":
        values = [(None, v) for v in kg_values(row)]
    elif row.source_type == "table":
        values = list(cell_values(text))
    elif row.source_type == "infobox":
        key, sep, value = text.partition(": ")
        values = [(key, value) if sep else (None, text)]
    for header, value in values:
        drafts.append(
            _Draft(_PAREN.sub("", value).strip(), literal_kind(value), header=header, structured=True)
        )
        drafts += [_Draft(m.group(0), "date", header=header) for m in _DATE.finditer(value)]
        drafts += [_Draft(m.group(0), "year", header=header) for m in _YEAR.finditer(value)]
    for entity_id in row.entity_ids:
        label = label_of(entity_id) or (None if re.fullmatch(r"Q\d+", entity_id) else entity_id)
        if label:
            drafts.append(_Draft(_PAREN.sub("", label).strip(), "entity", entity_id))
    if row.source_type == "text":
        drafts += prose_candidates(text)
    for draft in drafts:
        draft.text = draft.text.strip(" .,;:")
    # a statement whose item has no label in the slice says its bare id: that is never an answer
    return [d for d in drafts if d.text and len(d.text) <= 80 and not _BARE_ID.fullmatch(d.text)]


def prose_candidates(text: str) -> list[_Draft]:
    """Dates, years, numbers with what they count, and names found in a passage.

    A name is also offered without its first word ("CEO Penelope Endersby" → "Penelope Endersby") and
    with a year before it ("2016 Summer Olympics"); a single capitalized word counts too ("Somme").
    """
    drafts = [_Draft(m.group(0), "date") for m in _DATE.finditer(text)]
    drafts += [_Draft(m.group(0), "year") for m in _YEAR.finditer(text)]
    for m in _NUMBER.finditer(text):
        if not _YEAR.fullmatch(m.group(0)):
            drafts.append(_Draft(m.group(0), "number"))
    for m in _QUANTITY.finditer(text):
        words = m.group(0).split()
        if words[-1] in STOPWORDS:
            words = words[:-1]
        if words and not _NUMBER.fullmatch(" ".join(words)):
            drafts.append(_Draft(" ".join(words), "number"))
    drafts += [_Draft(m.group(0), "number") for m in _NUMBER_WORD.finditer(text)]
    drafts += [_Draft(m.group(0), "name") for m in _PLACE.finditer(text)]
    for m in _NAME.finditer(text):
        name = m.group(0).strip()
        words = name.split()
        if words[0].lower() in STOPWORDS and len(words) > 1:
            words = words[1:]  # a sentence-initial "The", "In", "His"
        if len(words) == 1 and words[0].lower() in STOPWORDS:
            continue
        drafts.append(_Draft(" ".join(words), "name"))
        if len(words) >= 3:
            drafts.append(_Draft(" ".join(words[1:]), "name"))
        year = re.search(r"\b(?:1[0-9]{3}|20[0-9]{2}) $", text[max(0, m.start() - 5) : m.start()])
        if year:
            drafts.append(_Draft(year.group(0) + name, "name"))
    return drafts


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
    ):
        """``specificity``: how rare a candidate's rarest word is in the corpus, 0..1
        (``Bm25Index.specificity``); without it every candidate counts as specific."""
        self.settings = settings or AnswerSettings()
        if scorer is None:
            scorer = AnswerScorer.load(self.settings.scorer) if self.settings.scorer else AnswerScorer()
        self.scorer = scorer
        self.specificity = specificity

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
    ) -> tuple[list[EvidenceRow], list[_Draft], np.ndarray, list[list[int]]]:
        """(top evidence, candidates, their feature matrix, the top evidence rows holding each)."""
        top = evidence[: self.settings.top_evidence]
        question_key = _key(intent.question)
        excluded_entities = {c.entity_id for link in links for c in link.candidates[:1]}
        weights = [1.0 / (1.0 + rank) for rank in range(len(top))]
        total = sum(weights) or 1.0
        # support is counted in the evidence body: a table row's page title in its context prefix
        # names where the row sits, not what it says
        keys = [_key(body(row)) for row in top]
        sentences = [[_key(x) for x in SENTENCE_END.split(body(row))] for row in top]
        keywords = set(intent.keywords) or set(content_words(intent.question))
        coverage = [len(keywords & set(_key(row.text).split())) / max(len(keywords), 1) for row in top]
        found: dict[str, _Draft] = {}
        for row in top:
            for draft in extract(row, label_of):
                key = _key(draft.text)
                if not key or key in STOPWORDS or _contains(question_key, key):
                    continue
                if draft.entity_id in excluded_entities:
                    continue
                kept = found.setdefault(key, draft)
                if draft.kind == "entity" and kept.kind != "entity":
                    kept.kind, kept.entity_id = "entity", draft.entity_id
                if draft.structured and not kept.structured:
                    kept.structured, kept.header = True, draft.header
        fit = TYPE_FIT.get(intent.answer_type, TYPE_FIT["other"])
        col = {name: i for i, name in enumerate(ANSWER_FEATURES)}
        padded = [f" {key} " for key in found]
        drafts, rows, holdings = [], [], []
        for key, draft in found.items():
            holding = [i for i, k in enumerate(keys) if _contains(k, key)]
            if not holding:
                continue
            x = np.zeros(len(ANSWER_FEATURES))
            x[col["log_support"]] = math.log(sum(weights[i] for i in holding) / total)
            x[col["log_type"]] = math.log(fit.get(draft.kind, 0.3))
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
            header_words = set(content_words(draft.header or ""))
            x[col["header_match"]] = len(header_words & keywords) / len(header_words) if header_words else 0.0
            x[col["entity"]] = float(draft.entity_id is not None)
            x[col[f"kind_{draft.kind}"]] = 1.0
            x[col[f"src_{top[holding[0]].source_type}"]] = 1.0
            x[col["log_tokens"]] = math.log(1 + len(key.split()))
            specific = self.specificity(draft.text) if self.specificity is not None else 1.0
            x[col["log_specific"]] = math.log(0.1 + 0.9 * min(1.0, specific / SPECIFIC_ENOUGH))
            mine = f" {key} "
            x[col["contained"]] = float(any(mine in other and other != mine for other in padded))
            drafts.append(draft)
            rows.append(x)
            holdings.append(holding)
        matrix = np.array(rows) if rows else np.zeros((0, len(ANSWER_FEATURES)))
        return top, drafts, matrix, holdings
