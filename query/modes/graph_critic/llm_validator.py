"""The graph-critic's LLM validator: does a round's top evidence state the answer to the question?

The rule validator judges a round by the reader's confidence, and with the candidate reader that number
cannot tell a right round from a wrong one (``benchmarks/results/graph_critic``: at its fitted floor it
accepted nothing). The published design asks a language model instead. Here the bundled instruct model
reads the round's top rows, numbered and windowed as the LLM reader shows them, and replies
``{"answerable": true|false}`` under a JSON schema; the probability of its ``true`` or ``false`` token
makes a score, ``P(answerable)``, that a floor turns into accept or reject. One short prompt (~3 rows,
~250 tokens) and a one-token decision: a few seconds on this machine, spent only where a round passed the
rule checks.

The model finds "do these rows answer the question?" hard: it says yes to most rows that share the
question's words. ``check`` asks an easier question, the one a reviewer asks: given the reader's answer and
the rows it was read from, is that answer what the question asks for (``{"correct": …}``)? Measured on
the LLM reader's OTT-QA answers it is no better: beside the reader's confidence floor it adds 0.3 points
of balanced accuracy (69.1 → 69.4 %, ``benchmarks/results/graph_critic/README.md``), so it is an option.
"""

from __future__ import annotations

import math
import re
from dataclasses import dataclass

from pydantic import BaseModel, ConfigDict

from query.llm.chat import Llm, LlmCall, Reply
from query.read.llm_reader import evidence_block
from query.retrieve.evidence_store import EvidenceRow

SYSTEM_PROMPT = (
    "You check the evidence a question-answering system found. Read the numbered evidence rows and the "
    "question. If one of the rows states the answer to the question, reply "
    '{"answerable": true}. If none of them does, reply {"answerable": false}. Reply with the JSON only.'
)
CHECK_PROMPT = (
    "You check an answer that a question-answering system gave. Read the numbered evidence rows, the "
    "question and the proposed answer. If the rows show that the proposed answer is exactly what the "
    "question asks for (the right person, thing, number, date or place, for the entity the question is "
    'about), reply {"correct": true}. If the rows do not show it, or it answers a different question, '
    'reply {"correct": false}. Reply with the JSON only.'
)
WINDOW_CHARS = 360  # as the LLM reader shows a row: centred on the question's words


class Judgement(BaseModel):
    """The model's reply on the rows."""

    model_config = ConfigDict(extra="forbid")

    answerable: bool


class Check(BaseModel):
    """The model's reply on an answer."""

    model_config = ConfigDict(extra="forbid")

    correct: bool


@dataclass
class Validation:
    """One judgement: ``probability`` that the rows answer the question, and what it cost."""

    probability: float
    calls: list[LlmCall]

    @property
    def ms(self) -> float:
        return sum(c.ms for c in self.calls)


def messages(question: str, rows: list[EvidenceRow]) -> list[dict[str, str]]:
    block = evidence_block(question, rows, WINDOW_CHARS)
    user = f"Evidence:\n{block}\n\nQuestion: {' '.join(question.split())}"
    return [{"role": "system", "content": SYSTEM_PROMPT}, {"role": "user", "content": user}]


def check_messages(question: str, answer: str, rows: list[EvidenceRow]) -> list[dict[str, str]]:
    """The rows windowed around the question's words and the answer's, so the answer is in view."""
    block = evidence_block(f"{question} {answer}", rows, WINDOW_CHARS)
    user = (
        f"Evidence:\n{block}\n\nQuestion: {' '.join(question.split())}\n"
        f"Proposed answer: {' '.join(answer.split())}"
    )
    return [{"role": "system", "content": CHECK_PROMPT}, {"role": "user", "content": user}]


def probability(reply: Reply[Judgement] | Reply[Check]) -> float:
    """P(yes) from the decision token's probability; without log-probabilities, the decision."""
    key = "answerable" if isinstance(reply.value, Judgement) else "correct"
    said = getattr(reply.value, key)
    decided = 1.0 if said else 0.0
    spans, text = reply.completion.logprobs, reply.completion.text
    match = re.search(rf'"{key}"\s*:\s*(true|false)', text)
    if spans is None or match is None:
        return decided
    inside = [lp for start, end, lp in spans if start < match.end(1) and end > match.start(1)]
    if not inside:
        return decided
    sure = math.exp(inside[0])  # the first token of 'true'/'false' carries the decision
    return sure if said else 1.0 - sure


class LlmValidator:
    """Judges rows with an instruct model; safe to share between threads as ``Llm`` is."""

    def __init__(self, llm: Llm, rows: int = 3) -> None:
        self.llm = llm
        self.rows = rows

    def judge(self, question: str, rows: list[EvidenceRow]) -> Validation:
        """P(one of the first ``rows`` rows states the answer); no rows: 0 at no cost."""
        shown = rows[: self.rows]
        if not shown:
            return Validation(0.0, [])
        reply = self.llm.chat_reply(messages(question, shown), Judgement, max_tokens=12, purpose="validate")
        return Validation(probability(reply), reply.calls)

    def check(self, question: str, answer: str, rows: list[EvidenceRow]) -> Validation:
        """P(``answer`` is what ``question`` asks for, by the first ``rows`` rows: put the rows the answer
        was read from first); no answer or no rows: 0 at no cost."""
        shown = rows[: self.rows]
        if not shown or not answer.strip():
            return Validation(0.0, [])
        reply = self.llm.chat_reply(
            check_messages(question, answer, shown), Check, max_tokens=12, purpose="check"
        )
        return Validation(probability(reply), reply.calls)
