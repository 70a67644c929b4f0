"""Answer and retrieval metrics: SQuAD exact match and F1, answer presence in the evidence pool, gold-table
rank, and the per-configuration summary a report is made of.

Answer presence AP@k: the share of questions whose first k evidence texts contain a gold answer as a
whole-token sequence. Gold-table Hit@k and MRR: where the gold table first appears among the distinct
tables of the evidence, in evidence order. A question that failed with an error counts as a miss in
every figure (no presence, no gold table, not answered, EM and F1 of 0) and is also counted in ``errors``.
"""

from __future__ import annotations

import functools
import math
import re
import string
import sys
import unicodedata
from collections import Counter
from collections.abc import Callable, Iterable, Sequence
from typing import Any

from pydantic import BaseModel, Field

from query.evaluation.loaders import BenchmarkQuestion

AP_KS: tuple[int, ...] = (1, 5, 10, 30, 100, 1000)
HIT_KS: tuple[int, ...] = (1, 5, 10, 30, 100)
CURVE_KS: tuple[int, ...] = (1, 2, 3, 5, 7, 10, 15, 20, 30, 50, 70, 100, 150, 200, 300, 500, 700, 1000)
TOTAL_STAGE = "total"
"""The stage name of a question's end-to-end time; the sum of its stages when the harness gives none."""

_PUNCTUATION = frozenset(string.punctuation)
_DROP_PUNCTUATION = str.maketrans("", "", string.punctuation)
_SPACE_PUNCTUATION = str.maketrans(string.punctuation, " " * len(string.punctuation))
_ARTICLES = re.compile(r"\b(a|an|the)\b")


# --- answer metrics (SQuAD v1.1 definitions) ------------------------------------------------------------


def normalize_answer(s: str) -> str:
    """SQuAD normalization: lowercase, drop ASCII punctuation and the articles a/an/the, collapse spaces."""
    s = s.lower().translate(_DROP_PUNCTUATION)
    return " ".join(_ARTICLES.sub(" ", s).split())


def exact_match(pred: str, golds: str | Sequence[str]) -> float:
    """1.0 when the normalized prediction equals any normalized gold answer, else 0.0."""
    norm = normalize_answer(pred)
    return float(any(norm == normalize_answer(g) for g in _as_list(golds)))


def token_f1(pred: str, golds: str | Sequence[str]) -> float:
    """SQuAD token F1 of the prediction against the best-matching gold answer (0.0 without golds)."""
    pred_tokens = normalize_answer(pred).split()
    return max((_f1(pred_tokens, normalize_answer(g).split()) for g in _as_list(golds)), default=0.0)


def _f1(pred: list[str], gold: list[str]) -> float:
    if not pred or not gold:
        return float(pred == gold)  # both empty (e.g. gold "the"): a match; one empty: none
    common = sum((Counter(pred) & Counter(gold)).values())
    if common == 0:
        return 0.0
    precision, recall = common / len(pred), common / len(gold)
    return 2 * precision * recall / (precision + recall)


def _as_list(golds: str | Sequence[str]) -> list[str]:
    return [golds] if isinstance(golds, str) else list(golds)


# --- retrieval metrics -----------------------------------------------------------------------------


@functools.cache
def _unicode_punctuation() -> dict[int, str]:
    """Every code point a non-ASCII text drops as punctuation (Unicode P* and ASCII punctuation) -> a space.

    Built once, on the first non-ASCII text: one ``str.translate`` then replaces a per-character test.
    """
    marks = {ord(ch): " " for ch in string.punctuation}
    for code in range(128, sys.maxunicode + 1):
        if unicodedata.category(chr(code)).startswith("P"):
            marks[code] = " "
    return marks


@functools.lru_cache(maxsize=1 << 16)
def _presence_forms(s: str) -> tuple[str, str]:
    """Two token forms of a text: SQuAD-normalized, and the same with punctuation turned into spaces.

    The second form lets evidence tokenized as released ("1 , 000", "Aristotle 's") match answers
    written plainly ("1,000"), which dropping punctuation alone ("1 000" vs "1000") would miss; the
    first keeps "U.S." matching "US". Both are padded with spaces so matches fall on token boundaries.
    Cached: an evaluation puts the same evidence texts through this once per configuration and question.
    """
    lowered = s.lower()
    table = _SPACE_PUNCTUATION if lowered.isascii() else _unicode_punctuation()
    spaced = lowered.translate(table)
    return f" {normalize_answer(s)} ", f" {' '.join(_ARTICLES.sub(' ', spaced).split())} "


def answer_presence(answers: Sequence[str]) -> Callable[[str], bool]:
    """A test of whether a text holds one of the gold answers as a whole-token sequence.

    The answers' forms are computed once, for all the texts of a question. Answers that normalize to
    nothing are ignored; with none left, no text holds an answer.
    """
    needles = [
        forms for forms in (_presence_forms(a) for a in answers) if forms[0].strip() or forms[1].strip()
    ]

    def holds(text: str) -> bool:
        if not needles:
            return False
        squad, spaced = _presence_forms(text)
        return any(
            (needle_squad.strip() and needle_squad in squad)
            or (needle_spaced.strip() and needle_spaced in spaced)
            for needle_squad, needle_spaced in needles
        )

    return holds


def first_presence_rank(texts: Sequence[str], answers: Sequence[str]) -> int | None:
    """1-based rank of the first text holding a gold answer as a whole-token sequence; None if none does.

    "1995" does not match "19950"; "the Beatles" matches "Beatles" (articles are dropped). Answers that
    normalize to nothing are ignored.
    """
    holds = answer_presence(answers)
    return next((rank for rank, text in enumerate(texts, start=1) if holds(text)), None)


def gold_table_rank(table_ids: Iterable[str | None], gold_table_id: str | None) -> int | None:
    """1-based rank of the gold table among the distinct tables of the evidence (``None`` ids skipped)."""
    if gold_table_id is None:
        return None
    seen: set[str] = set()
    for table_id in table_ids:
        if table_id is None or table_id in seen:
            continue
        seen.add(table_id)
        if table_id == gold_table_id:
            return len(seen)
    return None


# --- per question ----------------------------------------------------------------------------------


class QuestionEval(BaseModel):
    """What one configuration did on one question."""

    question_id: str
    config: str
    presence_rank: int | None = Field(None, ge=1, description="first evidence rank holding a gold answer")
    pool_size: int = Field(0, ge=0, description="evidence texts the presence rank was looked for in")
    gold_table_rank: int | None = Field(None, ge=1, description="rank among distinct tables in the evidence")
    has_gold_table: bool = Field(True, description="False when the benchmark names no gold table (KGQA)")
    prediction: str = ""
    answered: bool = Field(False, description="False when the engine said 'unknown'")
    em: float = Field(0.0, ge=0.0, le=1.0)
    f1: float = Field(0.0, ge=0.0, le=1.0)
    timings_ms: dict[str, float] = Field(default_factory=dict, description="stage -> milliseconds")
    error: str | None = None
    confidence: float | None = Field(None, description="the best candidate's confidence, when read")
    candidate_em: float = Field(0.0, ge=0.0, le=1.0, description="EM of the best candidate, any confidence")
    mode: str | None = Field(None, description="the reasoning mode that answered, for end-to-end rows")
    prompt_tokens: int = Field(0, ge=0, description="LLM prompt tokens spent on the question")
    completion_tokens: int = Field(0, ge=0, description="LLM completion tokens spent on the question")
    read_outcome: str | None = Field(None, description="the LLM reader's outcome (LlmReading.outcome)")
    cites_answer: bool | None = Field(
        None, description="an answered question's supporting evidence holds its answer (None: not read)"
    )

    @classmethod
    def failed(
        cls, question_id: str, config: str, error: str, timings_ms: dict[str, float] | None = None
    ) -> QuestionEval:
        """A question the engine raised on: a miss everywhere, with the reason kept."""
        return cls(question_id=question_id, config=config, error=error, timings_ms=timings_ms or {})


def evaluate_question(
    question: BenchmarkQuestion,
    config: str,
    *,
    evidence_texts: Sequence[str],
    evidence_table_ids: Sequence[str | None] = (),
    prediction: str,
    answered: bool,
    timings_ms: dict[str, float] | None = None,
) -> QuestionEval:
    """Score one engine result: presence of a gold answer in the evidence texts (best first), the gold
    table's rank among the evidence tables, and EM/F1 of the prediction (0 when the engine refrained)."""
    golds = question.answer_texts()
    return QuestionEval(
        question_id=question.id,
        config=config,
        presence_rank=first_presence_rank(evidence_texts, golds),
        pool_size=len(evidence_texts),
        gold_table_rank=gold_table_rank(evidence_table_ids, question.gold_table_id),
        has_gold_table=question.gold_table_id is not None,
        prediction=prediction,
        answered=answered,
        em=exact_match(prediction, golds) if answered else 0.0,
        f1=token_f1(prediction, golds) if answered else 0.0,
        timings_ms=timings_ms or {},
    )


# --- answer threshold ----------------------------------------------------------------------------


class ThresholdPoint(BaseModel):
    """What answering only above one confidence threshold gives, over all questions."""

    threshold: float
    answered: float = Field(description="share of questions answered")
    precision: float = Field(description="EM over the answered ones")
    em: float = Field(description="EM over all questions (a refusal scores 0)")
    f1: float = Field(description="harmonic mean of precision and the share of right candidates kept")


class ThresholdCalibration(BaseModel):
    """The sweep of the answer threshold and the value it recommends.

    The recommended threshold maximizes the F1 between "answered" and "the best candidate is right": it
    keeps as many right answers as it can while refusing wrong ones. Maximizing right minus wrong instead
    would refuse nearly everything whenever precision stays under one half at every threshold.
    """

    chosen: float
    rule: str = "max F1 of answered vs right"
    points: list[ThresholdPoint]


THRESHOLD_GRID: tuple[float, ...] = (0.0, 0.02, 0.05, 0.08, 0.1, 0.12, 0.15, 0.2, 0.25, 0.3, 0.4, 0.5)


def calibrate_threshold(
    evals: Sequence[QuestionEval], grid: Sequence[float] = THRESHOLD_GRID
) -> ThresholdCalibration:
    """Sweep the answer threshold over the questions' best-candidate confidences (no error, read)."""
    read = [e for e in evals if e.confidence is not None]
    right_total = sum(e.candidate_em for e in read)
    points = []
    for t in grid:
        kept = [e for e in read if e.confidence is not None and e.confidence >= t]
        right = sum(e.candidate_em for e in kept)
        precision = right / len(kept) if kept else 0.0
        recall = right / right_total if right_total else 0.0
        points.append(
            ThresholdPoint(
                threshold=t,
                answered=len(kept) / len(read) if read else 0.0,
                precision=precision,
                em=right / len(read) if read else 0.0,
                f1=2 * precision * recall / (precision + recall) if precision + recall else 0.0,
            )
        )
    best = max(points, key=lambda p: (p.f1, -p.threshold))
    return ThresholdCalibration(chosen=best.threshold, points=points)


# --- per configuration -----------------------------------------------------------------------------


class ConfigSummary(BaseModel):
    """The figures of one configuration over a benchmark run; rates are shares in [0, 1]."""

    config: str
    description: str
    questions: int
    errors: int
    ap: dict[int, float] = Field(description="answer presence in the first k evidence texts, k in AP_KS")
    ap_curve: dict[int, float] = Field(default_factory=dict, description="AP@k at CURVE_KS, for plots")
    hit: dict[int, float] = Field(description="gold table among the first k evidence tables, k in HIT_KS")
    mrr: float = Field(description="mean reciprocal rank of the gold table")
    gold_table_questions: int = Field(description="questions with a gold table (the base of hit and mrr)")
    em: float
    f1: float
    answered: int = Field(description="questions answered (not 'unknown', no error)")
    refrain_rate: float = Field(description="share of questions not answered ('unknown' or error)")
    precision_answered: float = Field(description="mean EM over answered questions; 0 when none was")
    mean_pool_size: float
    latency_ms: dict[str, dict[str, float]] = Field(description="stage -> {p50, p95, mean}")
    settings: dict[str, Any] = Field(default_factory=dict)
    threshold: ThresholdCalibration | None = Field(None, description="answer threshold sweep, when read")
    modes: dict[str, int] = Field(default_factory=dict, description="questions each mode answered (router)")
    bare_id_answers: int = Field(0, description="answers that were a bare entity id (Q42), never right")
    tokens: dict[str, float] = Field(
        default_factory=dict, description="mean LLM prompt and completion tokens per question, when read"
    )
    read_outcomes: dict[str, int] = Field(default_factory=dict, description="LLM reader outcomes, counted")
    cites_answer: float | None = Field(
        None, description="share of answered questions whose supporting evidence holds the answer"
    )


def ap_curve(evals: Sequence[QuestionEval], ks: Iterable[int]) -> dict[int, float]:
    """AP@k for each k: the share of questions with a gold answer in the first k texts (errors miss)."""
    ranks = [e.presence_rank if e.error is None else None for e in evals]
    return {k: _share(r is not None and r <= k for r in ranks) for k in ks}


def summarize(
    config: str, description: str, evals: Sequence[QuestionEval], settings: dict[str, Any] | None = None
) -> ConfigSummary:
    """The summary of one configuration's evals (one per question)."""
    others = sorted({e.config for e in evals} - {config})
    if others:
        raise ValueError(f"summarize({config!r}) got evals of other configs: {', '.join(others)}")
    ok = [e for e in evals if e.error is None]
    answered = [e for e in ok if e.answered]
    with_table = [e for e in evals if e.has_gold_table]
    table_ranks = [e.gold_table_rank if e.error is None else None for e in with_table]
    return ConfigSummary(
        config=config,
        description=description,
        questions=len(evals),
        errors=len(evals) - len(ok),
        ap=ap_curve(evals, AP_KS),
        ap_curve=ap_curve(evals, CURVE_KS),
        hit={k: _share(r is not None and r <= k for r in table_ranks) for k in HIT_KS},
        mrr=_mean(1.0 / r if r else 0.0 for r in table_ranks),
        gold_table_questions=len(with_table),
        em=_mean(e.em if e.error is None else 0.0 for e in evals),
        f1=_mean(e.f1 if e.error is None else 0.0 for e in evals),
        answered=len(answered),
        refrain_rate=1.0 - len(answered) / len(evals) if evals else 0.0,
        precision_answered=_mean(e.em for e in answered),
        mean_pool_size=_mean(e.pool_size for e in ok),
        latency_ms=latency_stats(ok),
        settings=settings or {},
        threshold=calibrate_threshold(ok) if any(e.confidence is not None for e in ok) else None,
    )


def latency_stats(evals: Sequence[QuestionEval]) -> dict[str, dict[str, float]]:
    """Stage -> p50, p95 and mean milliseconds over the evals that timed that stage; ``total`` last."""
    per_stage: dict[str, list[float]] = {}
    totals: list[float] = []
    for e in evals:
        if not e.timings_ms:
            continue
        for stage, ms in e.timings_ms.items():
            if stage != TOTAL_STAGE:
                per_stage.setdefault(stage, []).append(ms)
        totals.append(e.timings_ms.get(TOTAL_STAGE, sum(e.timings_ms.values())))
    if totals:
        per_stage[TOTAL_STAGE] = totals
    return {
        stage: {"p50": percentile(v, 50), "p95": percentile(v, 95), "mean": sum(v) / len(v)}
        for stage, v in per_stage.items()
    }


def percentile(values: Sequence[float], q: float) -> float:
    """The q-th percentile with linear interpolation between closest ranks (NumPy's default)."""
    if not values:
        raise ValueError("percentile of no values")
    if not 0 <= q <= 100:
        raise ValueError(f"percentile q must be in [0, 100], got {q}")
    ordered = sorted(values)
    pos = (len(ordered) - 1) * q / 100
    lo, hi = math.floor(pos), math.ceil(pos)
    return ordered[lo] + (ordered[hi] - ordered[lo]) * (pos - lo)


def _share(flags: Iterable[bool]) -> float:
    return _mean(float(f) for f in flags)


def _mean(values: Iterable[float]) -> float:
    items = list(values)
    return sum(items) / len(items) if items else 0.0
