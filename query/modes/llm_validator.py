"""The graph-critic's LLM validator: does a round's top evidence state the answer to the question?

The rule validator judges a round by the reader's confidence, and with the candidate reader that number
cannot tell a right round from a wrong one (``benchmarks/results/graph_critic``: at its fitted floor it
accepted nothing). The published design asks a language model instead. Here the bundled instruct model
reads the round's top rows, numbered and windowed as the LLM reader shows them, and replies
``{"answerable": true|false}`` under a JSON schema; the probability of its ``true`` or ``false`` token
makes a score, ``P(answerable)``, that a floor turns into accept or reject. One short prompt (~3 rows,
~250 tokens) and a one-token decision: a few seconds on this machine, spent only where a round passed the
rule checks.
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
WINDOW_CHARS = 360  # as the LLM reader shows a row: centred on the question's words
_DECISION = re.compile(r'"answerable"\s*:\s*(true|false)')


class Judgement(BaseModel):
    """The model's reply."""

    model_config = ConfigDict(extra="forbid")

    answerable: bool


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


def probability(reply: Reply[Judgement]) -> float:
    """P(answerable) from the decision token's probability; without log-probabilities, the decision."""
    decided = 1.0 if reply.value.answerable else 0.0
    spans, text = reply.completion.logprobs, reply.completion.text
    match = _DECISION.search(text)
    if spans is None or match is None:
        return decided
    inside = [lp for start, end, lp in spans if start < match.end(1) and end > match.start(1)]
    if not inside:
        return decided
    sure = math.exp(inside[0])  # the first token of 'true'/'false' carries the decision
    return sure if reply.value.answerable else 1.0 - sure


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
