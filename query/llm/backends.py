"""LLM backends: a local GGUF model through llama.cpp, or any OpenAI-compatible server, behind one protocol.

A backend does one request and reports what it cost (tokens, milliseconds) and, where it can, the
log-probability of each generated token; validation, repair and bookkeeping sit above it in
``query.llm.chat.Llm``. Decoding is greedy everywhere, so a prompt gives the same text on every run.
Where someone listens (``query.events``), the generated text is emitted as ``token`` events: llama.cpp's
token by token as it is generated, a server's as one piece when its reply arrives.

Backends are keyed by name in ``LLM_BACKENDS``: each bundled model by its name, ``gguf`` for any GGUF
file, ``openai-compatible`` for a server (vLLM, llama.cpp server, Ollama) at a configured URL.
"""

from __future__ import annotations

import json
import logging
import os
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any, ClassVar, Protocol

import httpx

from query.events import emit, listening
from query.llm.bundled import BUNDLED_MODELS, ModelInstallError, model_path
from query.llm.settings import GGUF, OPENAI_COMPATIBLE, LlmSettings
from query.llm.tokens import LogprobRecorder, TokenTeller
from query.registry import Registry

log = logging.getLogger(__name__)

INSTALL_HINT = "run `make setup`, which builds llama-cpp-python with the flags this CPU needs (Makefile)"
ERROR_BODY_CHARS = 200
"""Characters of a failing response body quoted in an error: enough to show a server's message."""


class LlmError(RuntimeError):
    """A backend failed: runtime or model missing, server unreachable or erring, prompt too long."""

    calls: tuple[Any, ...] = ()
    """The requests the failed ``Llm.chat`` made (``LlmCall``s, set by ``Llm``): what the failure cost."""


class LlmUnavailable(LlmError):
    """The configured model cannot be opened at all (not installed, damaged, no runtime)."""


Message = dict[str, str]
"""A chat message: {"role": "system" | "user" | "assistant", "content": ...}."""


@dataclass
class Completion:
    """One request's output and cost. ``logprobs``: (start, end, logprob) per generated token, as
    character offsets into ``text``, when the backend gives them."""

    text: str
    prompt_tokens: int
    completion_tokens: int
    ms: float
    logprobs: list[tuple[int, int, float]] | None = None
    finish_reason: str | None = None


class LlmBackend(Protocol):
    name: str
    model: str
    location: str
    """Where the model runs, for error messages: the GGUF file, or the server's base URL."""
    chat_capable: bool

    def chat(self, messages: list[Message], *, json_schema: dict | None, max_tokens: int) -> Completion: ...

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> Completion: ...

    def close(self) -> None: ...


class LlamaCppBackend:
    """A GGUF model in-process through llama-cpp-python; one request at a time (a context isn't
    thread-safe). llama.cpp keeps the evaluated tokens of the last prompt, so a prompt that starts like
    the previous one (the fixed system prompt) only evaluates the part that differs."""

    def __init__(self, settings: LlmSettings, path: Path, model: str, chat_capable: bool) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise LlmUnavailable(
                f"the llama.cpp runtime (llama-cpp-python) is not installed; {INSTALL_HINT}"
            ) from exc
        if not Path(path).is_file():
            raise LlmUnavailable(f"model file {path} does not exist; point model_path at a GGUF file")
        self.name = model
        self.model = model
        self.chat_capable = chat_capable
        self.path = Path(path)
        self.location = str(self.path)
        self.settings = settings
        threads = settings.n_threads or os.cpu_count() or 1
        started = time.perf_counter()
        try:
            self._llama: Any = llama_cpp.Llama(
                model_path=str(self.path),
                n_ctx=settings.n_ctx,
                n_batch=settings.n_batch,
                n_threads=threads,
                n_threads_batch=threads,
                seed=0,
                verbose=False,
            )
        except (ValueError, RuntimeError) as exc:
            raise LlmUnavailable(f"llama.cpp could not load {self.path}: {exc}") from exc
        self.load_ms = (time.perf_counter() - started) * 1000
        self._grammars: dict[str, Any] = {}
        self._lock = threading.Lock()
        log.info("loaded %s in %.0f ms", self.path.name, self.load_ms)

    def _grammar(self, json_schema: dict) -> Any:
        from llama_cpp.llama_grammar import LlamaGrammar

        key = json.dumps(json_schema, sort_keys=True)
        if key not in self._grammars:
            self._grammars[key] = LlamaGrammar.from_json_schema(json.dumps(json_schema), verbose=False)
        return self._grammars[key]

    def _offsets(self, picked: list[tuple[int, float]], text: str) -> list[tuple[int, int, float]] | None:
        """Character spans of the picked tokens in ``text``; None if they do not spell it."""
        out, raw, start = [], b"", 0
        for token, logprob in picked:
            raw += self._llama.detokenize([token])
            end = len(raw.decode("utf-8", errors="ignore"))
            out.append((start, end, logprob))
            start = end
        spelled = raw.decode("utf-8", errors="ignore")
        return out if spelled.strip() == text.strip() or text.startswith(spelled) else None

    def _greedy(
        self, call: str, *, json_schema: dict | None = None, logprobs: bool = False, **request: Any
    ) -> tuple[dict, float, LogprobRecorder | None, TokenTeller | None]:
        """One greedy generation under the lock (llama.cpp's ``call``): its output and milliseconds, the
        recorder of picked tokens (when ``logprobs`` or a listener wants them) and the teller, if any."""
        with self._lock:
            if self._llama is None:
                raise LlmError(f"the {self.name} backend is closed")
            teller = TokenTeller(self._llama.detokenize) if listening() else None
            recorder = LogprobRecorder(on_token=teller) if logprobs or teller is not None else None
            if json_schema is not None:
                request["grammar"] = self._grammar(json_schema)
            started = time.perf_counter()
            try:
                out = getattr(self._llama, call)(
                    temperature=0.0,
                    top_k=1,
                    seed=0,
                    logits_processor=[recorder] if recorder is not None else None,
                    **request,
                )
            except ValueError as exc:  # "Requested tokens (…) exceed context window of …"
                raise LlmError(f"{exc}; shorten the prompt or raise n_ctx ({self.settings.n_ctx})") from exc
            return out, (time.perf_counter() - started) * 1000, recorder, teller

    def chat(self, messages: list[Message], *, json_schema: dict | None, max_tokens: int) -> Completion:
        if not self.chat_capable:
            raise LlmError(f"{self.name} is a base model without a chat template; use complete()")
        out, ms, recorder, teller = self._greedy(
            "create_chat_completion",
            json_schema=json_schema,
            logprobs=True,
            messages=messages,
            max_tokens=max_tokens,
        )
        choice = out["choices"][0]
        text = choice["message"]["content"] or ""
        if teller is not None:
            teller.finish(text)
        usage = out.get("usage") or {}
        return Completion(
            text=text,
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            ms=ms,
            logprobs=self._offsets(recorder.picked, text) if recorder is not None else None,
            finish_reason=choice.get("finish_reason"),
        )

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> Completion:
        out, ms, _, teller = self._greedy(
            "create_completion", prompt=prompt, max_tokens=max_tokens, stop=stop
        )
        choice = out["choices"][0]
        if teller is not None:
            teller.finish(choice["text"])
        usage = out.get("usage") or {}
        return Completion(
            text=choice["text"],
            prompt_tokens=int(usage.get("prompt_tokens", 0)),
            completion_tokens=int(usage.get("completion_tokens", 0)),
            ms=ms,
            finish_reason=choice.get("finish_reason"),
        )

    def close(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


class OpenAICompatibleBackend:
    """Any server speaking the OpenAI chat-completions API; a schema goes as ``response_format``."""

    name: ClassVar[str] = OPENAI_COMPATIBLE
    chat_capable: ClassVar[bool] = True

    def __init__(self, settings: LlmSettings) -> None:
        if settings.base_url is None:
            raise ValueError("backend 'openai-compatible' needs base_url, e.g. http://127.0.0.1:8080/v1")
        self.settings = settings
        self.model = settings.model or "default"
        headers = {"Content-Type": "application/json"}
        if settings.api_key_env is not None:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise LlmUnavailable(
                    f"api_key_env names {settings.api_key_env}, which is unset; export it or drop api_key_env"
                )
            headers["Authorization"] = f"Bearer {key}"
        self.base_url = self.location = settings.base_url
        self._client = httpx.Client(headers=headers, timeout=settings.timeout_s)

    def _post(self, endpoint: str, body: dict[str, Any]) -> dict[str, Any]:
        url = f"{self.base_url}/{endpoint}"
        if self.settings.model is not None:
            body["model"] = self.settings.model
        # each message names the URL and the next step before quoting anything long: a reading keeps
        # only the first 300 characters of an error
        try:
            response = self._client.post(url, json=body)
        except httpx.TimeoutException as exc:
            raise LlmError(
                f"POST {url} timed out after {self.settings.timeout_s} s: is the server overloaded? "
                "raise llm.timeout_s or check the server"
            ) from exc
        except httpx.HTTPError as exc:
            raise LlmError(f"POST {url} failed: start the server or fix llm.base_url ({exc!r})") from exc
        if response.status_code >= 400:
            raise LlmError(
                f"POST {url} returned HTTP {response.status_code} (see the server's log; check llm.model "
                f"and llm.base_url): {response.text[:ERROR_BODY_CHARS]!r}"
            )
        try:
            payload = response.json()
            payload["choices"][0]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LlmError(
                f"POST {url} returned no choice (is llm.base_url an OpenAI-compatible /v1 endpoint?): "
                f"{response.text[:ERROR_BODY_CHARS]!r}"
            ) from exc
        return payload

    def chat(self, messages: list[Message], *, json_schema: dict | None, max_tokens: int) -> Completion:
        body: dict[str, Any] = {"messages": messages, "max_tokens": max_tokens, "temperature": 0, "seed": 0}
        if json_schema is not None:
            body["response_format"] = {
                "type": "json_schema",
                "json_schema": {"name": json_schema.get("title", "answer"), "schema": json_schema},
            }
        if self.settings.server_logprobs:
            body["logprobs"] = True
        started = time.perf_counter()
        payload = self._post("chat/completions", body)
        ms = (time.perf_counter() - started) * 1000
        choice = payload["choices"][0]
        text = (choice.get("message") or {}).get("content") or ""
        emit("token", {"text": text})
        return Completion(
            text=text,
            prompt_tokens=int((payload.get("usage") or {}).get("prompt_tokens", 0)),
            completion_tokens=int((payload.get("usage") or {}).get("completion_tokens", 0)),
            ms=ms,
            logprobs=_server_offsets(choice.get("logprobs")),
            finish_reason=choice.get("finish_reason"),
        )

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> Completion:
        body = {"prompt": prompt, "max_tokens": max_tokens, "stop": stop, "temperature": 0}
        started = time.perf_counter()
        payload = self._post("completions", body)
        ms = (time.perf_counter() - started) * 1000
        choice = payload["choices"][0]
        emit("token", {"text": choice.get("text") or ""})
        return Completion(
            text=choice.get("text") or "",
            prompt_tokens=int((payload.get("usage") or {}).get("prompt_tokens", 0)),
            completion_tokens=int((payload.get("usage") or {}).get("completion_tokens", 0)),
            ms=ms,
            finish_reason=choice.get("finish_reason"),
        )

    def close(self) -> None:
        self._client.close()


def _server_offsets(logprobs: Any) -> list[tuple[int, int, float]] | None:
    """(start, end, logprob) per token from an OpenAI ``logprobs.content`` list."""
    content = logprobs.get("content") if isinstance(logprobs, dict) else None
    if not isinstance(content, list):
        return None
    out, start = [], 0
    for item in content:
        if not isinstance(item, dict) or not isinstance(item.get("token"), str):
            return None
        end = start + len(item["token"])
        out.append((start, end, float(item.get("logprob", 0.0))))
        start = end
    return out


def _bundled(name: str) -> Callable[[LlmSettings], LlmBackend]:
    def open_bundled(settings: LlmSettings) -> LlmBackend:
        try:
            path = model_path(name, settings.cache_dir)
        except ModelInstallError as exc:
            raise LlmUnavailable(str(exc)) from exc
        return LlamaCppBackend(settings, path, name, BUNDLED_MODELS[name].chat)

    return open_bundled


def _gguf(settings: LlmSettings) -> LlmBackend:
    assert settings.model_path is not None  # the settings validator requires it
    return LlamaCppBackend(settings, settings.model_path, settings.model_path.stem, chat_capable=True)


LLM_BACKENDS: Registry[LlmSettings, LlmBackend] = Registry(
    "llm backend",
    {
        **{name: _bundled(name) for name in BUNDLED_MODELS},
        GGUF: _gguf,
        OPENAI_COMPATIBLE: OpenAICompatibleBackend,
    },
)
"""Backends by the name ``llm.backend`` gives (every name of ``query.llm.settings.BACKEND_NAMES``)."""


def open_backend(settings: LlmSettings) -> LlmBackend:
    """The configured backend, loaded; ``LlmUnavailable`` says why it cannot be."""
    return LLM_BACKENDS.create(settings.backend, settings)
