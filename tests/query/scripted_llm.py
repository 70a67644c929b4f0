"""A scripted LLM backend for the paths a real model takes only by chance (repairs, retries, failures)."""

from __future__ import annotations

import json

from query.llm.backends import Completion

TOKEN_LOGPROB = -0.1


class Scripted:
    """Replies from a list (text, a dict sent as JSON, or an exception to raise), recording what it was
    sent; each character is one token with log-probability ``TOKEN_LOGPROB``."""

    name = "scripted"
    model = "scripted"
    location = "a list of scripted replies"
    chat_capable = True

    def __init__(self, replies: list[str | dict | Exception]) -> None:
        self.replies = list(replies)
        self.sent: list[list[dict]] = []

    def chat(self, messages, *, json_schema, max_tokens) -> Completion:
        self.sent.append([dict(m) for m in messages])
        reply = self.replies.pop(0)
        if isinstance(reply, Exception):
            raise reply
        text = reply if isinstance(reply, str) else json.dumps(reply)
        spans = [(i, i + 1, TOKEN_LOGPROB) for i in range(len(text))]
        return Completion(text=text, prompt_tokens=10, completion_tokens=len(text), ms=1.0, logprobs=spans)

    def complete(self, prompt, *, max_tokens, stop) -> Completion:
        return self.chat([{"role": "user", "content": prompt}], json_schema=None, max_tokens=max_tokens)

    def close(self) -> None:
        pass
