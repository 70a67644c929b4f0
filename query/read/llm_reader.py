"""The LLM reader: an instruct model reads numbered evidence and answers with the rows it cites.

The prompt is a fixed system prompt (the same for every question, so llama.cpp reuses its evaluated
tokens from one question to the next) and one user message: the evidence rows, numbered, each as
"[n] source · title: text" with the text cut to a window around the question's words, then the
question. The reply is held to ``ReaderReply``: ``{answer, evidence: [numbers], unknown}``.

The answer must be written in the evidence (``query.read.support``): a span of a shown row or a
normalization of a value in one, returned in the row's own form. An answer no row holds gets one retry
that says so; if the retry fails too, the candidate reader's answer is returned (or "unknown"), and the
reading records which. Confidence multiplies how directly the evidence holds the answer by the model's
own probability of the answer's tokens (where the backend reports them); under ``min_confidence`` the
engine says "unknown".
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict, Field

from query.llm.backends import LlmError
from query.llm.chat import Llm, LlmCall, Reply
from query.read.base import Reader, Reading, ReadRequest
from query.read.candidates import UNKNOWN, AnswerChoice
from query.read.support import Support, find_support, trim_answer
from query.retrieve.evidence_store import EvidenceRow
from query.text import content_words, fold
from query.timing import timed
from schemas.query import LlmReading, ReadOutcome

SOURCE_NAMES = {"kg": "fact", "text": "passage", "table": "table row", "infobox": "infobox"}

SYSTEM_PROMPT = """\
You answer questions from numbered evidence rows taken from Wikipedia and Wikidata.
Rules:
- The answer is the shortest span that answers the question: a name, number, date or short phrase, \
copied exactly as one evidence row writes it. No explanation, no full sentence.
- A question may need two rows: a table row names an entity, and a passage about that entity holds the \
answer. Follow the link and answer from the second row.
- "evidence" lists the numbers of the rows the answer is copied from.
- If no row answers the question, set "unknown" to true and "answer" to "".
Reply with one JSON object: {"answer": "...", "evidence": [n, ...], "unknown": false}."""

RETRY_PROMPT = (
    'No evidence row writes "{answer}". Copy the answer exactly as a row writes it, or set unknown to true.'
)

ECHO_PROMPT = (
    '"{answer}" is part of the question. Answer what the question asks, copied from an evidence row, '
    "or set unknown to true."
)

# Outcomes where the model answered nothing it could support from the rows it was shown
NOTHING_READ = frozenset({"unknown", "unsupported", "candidates"})
SUPPORT_WEIGHT = {"span": 1.0, "normalized": 0.9}
RETRY_WEIGHT = 0.9
FALLBACK_WEIGHT = 0.5


class ReaderReply(BaseModel):
    """What the model must reply: the answer, the numbers of the rows it is copied from, unknown."""

    model_config = ConfigDict(extra="forbid")

    answer: str = Field(max_length=120)
    evidence: list[int] = Field(max_length=4)
    unknown: bool


class LlmReaderSettings(BaseModel):
    """How much evidence the model reads; the defaults were chosen on a tuning fold (README)."""

    model_config = ConfigDict(extra="forbid")

    evidence: int = Field(8, ge=1, le=30, description="top evidence rows in the prompt")
    window_chars: int = Field(
        360, ge=60, description="characters of a row kept, centred on the question's words"
    )
    max_tokens: int = Field(64, ge=8, description="reply cap: the JSON with a short answer")
    min_confidence: float = Field(
        0.3,
        ge=0.0,
        le=1.0,
        description="below this confidence the answer becomes 'unknown'; 0.3 was chosen for the 1.5B model "
        "on the tuning fold of OTT-QA dev (max F1 of answered vs right; benchmarks/results/llm_reader/)",
    )
    retry_unsupported: bool = Field(True, description="ask once more when no row holds the answer")
    fallback_to_candidates: bool = Field(
        True, description="after a failed retry, return the candidate reader's answer instead of unknown"
    )
    read_further: bool = Field(
        False,
        description="when the model finds no answer in the top rows, read the next as many once more: on "
        "OTT-QA a gold answer is in the top 30 rows for ~79 % of questions but in the top 8 for ~56 %",
    )
    further_below: float = Field(
        0.0,
        ge=0.0,
        le=1.0,
        description="with read_further, also read on when the answer's confidence is under this; the more "
        "confident of the two answers wins (0: only when the top rows gave nothing)",
    )


def window(text: str, terms: set[str], size: int) -> str:
    """``text`` cut to about ``size`` characters around where the question's words are densest.

    The row's "Page / Section:" prefix is kept: it names what the row is about.
    """
    if len(text) <= size:
        return text
    prefix, sep, body = text.partition(": ")
    if not sep or len(prefix) > size // 3:
        prefix, body = "", text
    room = max(size - len(prefix) - len(sep), 40)
    words = [(m.start(), m.end(), fold(m.group(0))) for m in re.finditer(r"\S+", body)]
    if not words:
        return text[:size]
    hits = [0]
    for _start, _end, word in words:
        hits.append(hits[-1] + _hit(word, terms))
    best, best_hits, last = 0, -1, 0
    for i, (start, _end, _word) in enumerate(words):
        last = max(last, i)
        while last + 1 < len(words) and words[last + 1][1] - start <= room:
            last += 1
        if hits[last + 1] - hits[i] > best_hits:
            best, best_hits = i, hits[last + 1] - hits[i]
    # centre the window on the matched words it holds, so they come with context on both sides
    matched = [w for w in words[best:] if w[1] - words[best][0] <= room and _hit(w[2], terms)]
    if matched:
        centre = (matched[0][0] + matched[-1][1]) // 2
        best = next(
            (i for i, w in enumerate(words) if w[0] >= centre - room // 2 and w[0] <= matched[0][0]), best
        )
    start, end = words[best][0], words[best][1]
    for _start, w_end, _word in words[best:]:
        if w_end - start > room:
            break
        end = w_end
    cut = body[start:end]
    lead = "… " if start > 0 else ""
    tail = " …" if end < len(body) else ""
    return f"{prefix}{sep}{lead}{cut}{tail}"


def _hit(word: str, terms: set[str]) -> int:
    return int(word.strip(".,;:()[]'\"") in terms)


def evidence_block(question: str, rows: list[EvidenceRow], size: int) -> str:
    terms = set(content_words(question))
    lines = []
    for n, row in enumerate(rows, start=1):
        kind = SOURCE_NAMES.get(row.source_type, row.source_type)
        lines.append(f"[{n}] {kind} · {window(' '.join(row.text.split()), terms, size)}")
    return "\n".join(lines)


def messages(
    question: str, rows: list[EvidenceRow], settings: LlmReaderSettings, note: str | None = None
) -> list[dict[str, str]]:
    """The chat: the fixed system prompt, then the numbered evidence, ``note`` (what a mode found out
    about the rows, e.g. which one its SQL picked) and the question."""
    block = evidence_block(question, rows, settings.window_chars)
    said = f"\n\nNote: {' '.join(note.split())}" if note else ""
    user = f"Evidence:\n{block}{said}\n\nQuestion: {' '.join(question.split())}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def answer_logprob(reply: Reply) -> float | None:
    """Mean log-probability of the tokens that spell the answer inside the JSON reply."""
    spans = reply.completion.logprobs
    text = reply.completion.text
    m = re.search(r'"answer"\s*:\s*"((?:[^"\\]|\\.)*)"', text)
    if spans is None or m is None or m.end(1) == m.start(1):
        return None
    inside = [lp for start, end, lp in spans if start < m.end(1) and end > m.start(1)]
    return sum(inside) / len(inside) if inside else None


@dataclass
class LlmRead:
    choice: AnswerChoice
    reading: LlmReading


class LlmReader:
    """Reads the top evidence with an instruct model; every answer is checked against the rows.

    ``fallback`` (the candidate reader) runs first on every question: its answer is what the LLM reader
    returns when the model's answer fails its check twice."""

    def __init__(self, llm: Llm, fallback: Reader, settings: LlmReaderSettings | None = None) -> None:
        self.llm = llm
        self.fallback = fallback
        self.settings = settings or LlmReaderSettings()

    @property
    def name(self) -> str:
        return f"llm:{self.llm.name}"

    def run(self, request: ReadRequest) -> Reading:
        candidates = self.fallback.run(request)
        timings = dict(candidates.timings)
        with timed(timings, "read_llm"):
            read = self.read(request.question, request.evidence, candidates.choice, note=request.note)
        return Reading(read.choice, self.name, read.reading, timings)

    def read(
        self, question: str, evidence: list[EvidenceRow], fallback: AnswerChoice, note: str | None = None
    ) -> LlmRead:
        """The answer from ``evidence`` (best first); ``fallback`` is the candidate reader's choice;
        ``note`` goes to the model between the evidence and the question. With ``read_further``, when the
        model answers nothing from the top rows (unknown, or no row holds what it said), the next rows go
        to it once, unless a note points at rows of the first window; so do they when the answer's
        confidence is under ``further_below``. The second window's answer is taken only when the model
        itself read one there, more confident than the first's."""
        size = self.settings.evidence
        first = self._read(question, evidence[:size], fallback, note)
        further = evidence[size : 2 * size]
        nothing = first.reading.outcome in NOTHING_READ
        unsure = nothing or first.choice.confidence < self.settings.further_below
        if not (self.settings.read_further and unsure and further and not note):
            return first
        second = self._read(question, further, fallback, None)
        answered = not second.choice.unknown and second.reading.outcome not in NOTHING_READ
        answered = answered and (nothing or second.choice.confidence > first.choice.confidence)
        chosen, other = (second, first) if answered else (first, second)
        reading = chosen.reading
        if answered:
            reading.cited = [n + size for n in reading.cited]
        reading.further_from = size + 1
        reading.shown = first.reading.shown + second.reading.shown
        reading.prompt_tokens += other.reading.prompt_tokens
        reading.completion_tokens += other.reading.completion_tokens
        reading.ms = round(reading.ms + other.reading.ms, 3)
        reading.calls += other.reading.calls
        return chosen

    def _read(
        self, question: str, rows: list[EvidenceRow], fallback: AnswerChoice, note: str | None
    ) -> LlmRead:
        """One reading of ``rows`` (with one retry when the answer is in none of them)."""
        texts = [row.text for row in rows]
        split = [row.source_type == "kg" for row in rows]
        history = messages(question, rows, self.settings, note)
        calls: list[LlmCall] = []
        attempts = 2 if self.settings.retry_unsupported else 1
        try:
            for attempt in range(attempts):
                purpose = "read" if attempt == 0 else "read-retry"
                reply = self.llm.chat_reply(
                    history, ReaderReply, max_tokens=self.settings.max_tokens, purpose=purpose
                )
                calls += reply.calls
                said: ReaderReply = reply.value
                if said.unknown or not trim_answer(said.answer):
                    return self._unknown(rows, fallback, said, calls)
                support = find_support(said.answer, texts, [n - 1 for n in said.evidence], split)
                last = attempt == attempts - 1
                echo = support is not None and _echoes(question, support.text)
                if support is not None and (not echo or last):
                    return self._answer(rows, fallback, said, reply, calls, support, retried=attempt > 0)
                if last:
                    return self._unsupported(rows, fallback, said, calls)
                feedback = ECHO_PROMPT if echo else RETRY_PROMPT
                history += [
                    {"role": "assistant", "content": reply.completion.text},
                    {"role": "user", "content": feedback.format(answer=trim_answer(said.answer))},
                ]
            raise AssertionError("unreachable: the last attempt always returns")
        except LlmError as exc:
            return self._failed(rows, fallback, [*calls, *exc.calls], exc)

    # -- outcomes ------------------------------------------------------------------------------------

    def _reading(
        self,
        rows: list[EvidenceRow],
        outcome: ReadOutcome,
        calls: list[LlmCall],
        raw: ReaderReply | None = None,
        error: str | None = None,
        logprob: float | None = None,
    ) -> LlmReading:
        return LlmReading(
            model=self.llm.name,
            outcome=outcome,
            raw_answer=raw.answer if raw is not None else None,
            cited=list(raw.evidence) if raw is not None else [],
            shown=len(rows),
            prompt_tokens=sum(c.prompt_tokens for c in calls),
            completion_tokens=sum(c.completion_tokens for c in calls),
            ms=round(sum(c.ms for c in calls), 3),
            calls=len(calls),
            answer_logprob=None if logprob is None else round(logprob, 4),
            error=error,
        )

    def _answer(
        self,
        rows: list[EvidenceRow],
        fallback: AnswerChoice,
        raw: ReaderReply,
        reply: Reply,
        calls: list[LlmCall],
        support: Support,
        retried: bool,
    ) -> LlmRead:
        logprob = answer_logprob(reply)
        confidence = SUPPORT_WEIGHT[support.kind] * (RETRY_WEIGHT if retried else 1.0)
        if logprob is not None:
            confidence *= math.exp(logprob)
        outcome = "retried" if retried else ("supported" if support.kind == "span" else "normalized")
        reading = self._reading(rows, outcome, calls, raw, logprob=logprob)
        reading.unit = support.unit
        if confidence < self.settings.min_confidence:
            reading.outcome = "below-threshold"
            return LlmRead(_unknown_choice(fallback), reading)
        supporting = [rows[i].evidence_id for i in support.rows]
        choice = AnswerChoice(
            support.text, None, round(confidence, 4), False, fallback.candidates, supporting
        )
        return LlmRead(choice, reading)

    def _unknown(
        self, rows: list[EvidenceRow], fallback: AnswerChoice, raw: ReaderReply, calls: list[LlmCall]
    ) -> LlmRead:
        return LlmRead(_unknown_choice(fallback), self._reading(rows, "unknown", calls, raw))

    def _unsupported(
        self, rows: list[EvidenceRow], fallback: AnswerChoice, raw: ReaderReply, calls: list[LlmCall]
    ) -> LlmRead:
        if self.settings.fallback_to_candidates and not fallback.unknown:
            choice = AnswerChoice(
                fallback.answer,
                fallback.entity_id,
                round(fallback.confidence * FALLBACK_WEIGHT, 4),
                False,
                fallback.candidates,
                fallback.supporting,
            )
            return LlmRead(choice, self._reading(rows, "candidates", calls, raw))
        return LlmRead(_unknown_choice(fallback), self._reading(rows, "unsupported", calls, raw))

    def _failed(
        self, rows: list[EvidenceRow], fallback: AnswerChoice, calls: list[LlmCall], exc: LlmError
    ) -> LlmRead:
        """The model could not be asked (server down, output broken twice): the candidate reader answers."""
        reading = self._reading(rows, "error", calls, error=str(exc)[:300])
        return LlmRead(fallback, reading)


def _echoes(question: str, answer: str) -> bool:
    """The answer only repeats words of the question ("1998" for "…the 1998 Copa Bolivia team…")."""
    needle = fold(answer).strip()
    return bool(needle) and re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", fold(question)) is not None


def _unknown_choice(fallback: AnswerChoice) -> AnswerChoice:
    return AnswerChoice(UNKNOWN, None, 0.0, True, fallback.candidates, [])
