"""The one LLM interface every part of the engine uses: ``Llm.chat(messages, schema=None, max_tokens=…)``.

Without a schema it returns the model's text. With a pydantic model as schema the output is held to the
model's JSON schema while it is generated (a llama.cpp grammar locally, ``response_format`` on a
server), then parsed and validated; output that still fails (a server that ignores the schema, a reply
cut by ``max_tokens``) gets one repair request quoting the error, then ``LlmOutputError``.

Every request is recorded (purpose, tokens in and out, milliseconds, outcome): each reply carries its
own calls, so a caller can put what a question cost beside its answer, and ``Llm.calls`` keeps the
latest ``CALL_HISTORY`` of them for a benchmark to sum.
"""

from __future__ import annotations

import json
import threading
import time
from collections import deque
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Generic, TypeVar, overload

from pydantic import BaseModel, Field, ValidationError

from query.events import emit
from query.llm.backends import Completion, LlmBackend, LlmError, Message, open_backend
from query.llm.settings import LlmSettings

T = TypeVar("T", bound=BaseModel)

REPAIR_PROMPT = (
    "That reply is not valid: {error}. Reply again with only one JSON object that matches the schema."
)
ERROR_CHARS = 300
CALL_HISTORY = 10_000
"""Calls kept in ``Llm.calls``: enough for any one batch chunk, bounded for a long-lived engine."""


class LlmOutputError(LlmError):
    """The model's output broke the schema twice (the first reply and its one repair)."""


class LlmCall(BaseModel):
    """What one request cost and how it ended."""

    purpose: str
    backend: str
    prompt_tokens: int = Field(ge=0)
    completion_tokens: int = Field(ge=0)
    ms: float = Field(ge=0)
    ok: bool
    repair: bool = Field(False, description="the repair request after an invalid first reply")
    error: str | None = None


@dataclass
class Reply(Generic[T]):
    """A chat call's result: the value (text or validated model), the completion it was read from (the
    last one: the repair's when there was one), and every request made for it."""

    value: Any
    completion: Completion
    calls: list[LlmCall]

    @property
    def ms(self) -> float:
        return sum(c.ms for c in self.calls)


class Llm:
    """A backend with validation, one repair retry and a ledger of calls; safe to share between threads."""

    def __init__(self, backend: LlmBackend, settings: LlmSettings | None = None) -> None:
        self.backend = backend
        self.settings = settings or LlmSettings()
        self.calls: deque[LlmCall] = deque(maxlen=CALL_HISTORY)
        self._lock = threading.Lock()

    @classmethod
    def open(cls, settings: LlmSettings) -> Llm:
        return cls(open_backend(settings), settings)

    @property
    def name(self) -> str:
        return self.backend.name

    @overload
    def chat(self, messages: Sequence[Message], schema: None = None, **kw: Any) -> str: ...

    @overload
    def chat(self, messages: Sequence[Message], schema: type[T], **kw: Any) -> T: ...

    def chat(
        self,
        messages: Sequence[Message],
        schema: type[T] | None = None,
        *,
        max_tokens: int | None = None,
        purpose: str = "chat",
    ) -> str | T:
        """The reply's text, or an instance of ``schema`` validated from it."""
        return self.chat_reply(messages, schema, max_tokens=max_tokens, purpose=purpose).value

    def chat_reply(
        self,
        messages: Sequence[Message],
        schema: type[T] | None = None,
        *,
        max_tokens: int | None = None,
        purpose: str = "chat",
    ) -> Reply[T]:
        """``chat`` with the completion (token log-probabilities) and the calls it took."""
        calls: list[LlmCall] = []
        try:
            return self._chat(messages, schema, max_tokens or self.settings.max_tokens, purpose, calls)
        except LlmError as exc:
            exc.calls = tuple(calls)  # a caller accounts for the failure's cost too (a timeout's seconds)
            raise
        finally:
            with self._lock:
                self.calls.extend(calls)

    def _chat(
        self,
        messages: Sequence[Message],
        schema: type[T] | None,
        limit: int,
        purpose: str,
        calls: list[LlmCall],
    ) -> Reply[T]:
        json_schema = schema.model_json_schema() if schema is not None else None
        history = [dict(m) for m in messages]
        completion = self._request(history, json_schema, limit, purpose, calls, repair=False)
        if schema is None:
            return Reply(completion.text, completion, calls)
        try:
            return Reply(_validate(schema, completion.text), completion, calls)
        except ValueError as first:
            error = _short(first)
            calls[-1] = calls[-1].model_copy(update={"ok": False, "error": error})
        history += [
            {"role": "assistant", "content": completion.text},
            {"role": "user", "content": REPAIR_PROMPT.format(error=error)},
        ]
        completion = self._request(history, json_schema, limit, purpose, calls, repair=True)
        try:
            return Reply(_validate(schema, completion.text), completion, calls)
        except ValueError as second:
            calls[-1] = calls[-1].model_copy(update={"ok": False, "error": _short(second)})
            raise LlmOutputError(
                f"{self.name} at {self.backend.location} broke the {schema.__name__} schema twice "
                f"({_output_hint(completion, limit)}): {_short(second)}"
            ) from second

    def complete(self, prompt: str, *, max_tokens: int | None = None, stop: list[str] | None = None) -> str:
        """A plain completion, for base models without a chat template."""
        calls: list[LlmCall] = []
        try:
            return self._request(
                prompt,
                None,
                max_tokens or self.settings.max_tokens,
                "complete",
                calls,
                repair=False,
                stop=stop or [],
            ).text
        finally:
            with self._lock:
                self.calls.extend(calls)

    def _request(
        self,
        history: list[Message] | str,
        json_schema: dict | None,
        limit: int,
        purpose: str,
        calls: list[LlmCall],
        repair: bool,
        stop: list[str] | None = None,
    ) -> Completion:
        # a listener hears which request the tokens that follow belong to
        emit("llm", {"purpose": purpose, "backend": self.name, "repair": repair})
        started = time.perf_counter()
        try:
            if isinstance(history, str):
                completion = self.backend.complete(history, max_tokens=limit, stop=stop or [])
            else:
                completion = self.backend.chat(history, json_schema=json_schema, max_tokens=limit)
        except LlmError as exc:
            calls.append(
                LlmCall(
                    purpose=purpose,
                    backend=self.name,
                    prompt_tokens=0,
                    completion_tokens=0,
                    ms=round((time.perf_counter() - started) * 1000, 3),  # a timeout costs its wait
                    ok=False,
                    repair=repair,
                    error=_short(exc),
                )
            )
            raise
        calls.append(_call(purpose, self.name, completion, repair))
        return completion

    def close(self) -> None:
        self.backend.close()


def _call(purpose: str, backend: str, completion: Completion, repair: bool) -> LlmCall:
    return LlmCall(
        purpose=purpose,
        backend=backend,
        prompt_tokens=completion.prompt_tokens,
        completion_tokens=completion.completion_tokens,
        ms=round(completion.ms, 3),
        ok=True,
        repair=repair,
    )


def _output_hint(completion: Completion, limit: int) -> str:
    """What to do about output that broke the schema: a reply cut short needs room, any other one a
    backend that holds its output to the schema."""
    if completion.finish_reason == "length":
        return f"the reply was cut at max_tokens={limit}: raise it"
    return "check that the backend enforces response_format json_schema, as llama.cpp server and vLLM do"


def _validate(schema: type[T], text: str) -> T:
    try:
        return schema.model_validate_json(text)
    except ValidationError as exc:
        try:
            json.loads(text)
        except ValueError:
            raise ValueError(f"not JSON ({text[:80]!r})") from exc
        raise ValueError(str(exc).replace("\n", "; ")) from exc


def _short(exc: BaseException) -> str:
    return str(exc)[:ERROR_CHARS]
