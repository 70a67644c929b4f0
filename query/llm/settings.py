"""Which language model the engine talks to, and its limits: one settings model for every backend."""

from __future__ import annotations

import re
from pathlib import Path

from pydantic import BaseModel, ConfigDict, Field, field_validator, model_validator

from query.llm.bundled import DEFAULT_MODEL

_ENV_NAME = re.compile(r"[A-Za-z_][A-Za-z0-9_]*")

GGUF = "gguf"
OPENAI_COMPATIBLE = "openai-compatible"


class LlmSettings(BaseModel):
    """The model behind ``Llm.chat``; the defaults fit the bundled 1.5B model on 2 cores."""

    model_config = ConfigDict(extra="forbid")

    backend: str = Field(
        DEFAULT_MODEL,
        description="a bundled model by name (qwen2.5-coder-1.5b-instruct, qwen2.5-coder-0.5b-instruct, "
        "gemma-3-270m), 'gguf' (any GGUF file at model_path) or 'openai-compatible' (a server at base_url)",
    )
    model_path: Path | None = Field(None, description="the GGUF file of backend 'gguf'")
    cache_dir: Path = Field(
        Path(".state/models"),
        description="where bundled models are assembled once; relative = inside the state folder",
    )
    n_ctx: int = Field(4096, ge=256, description="context window in tokens: the prompt plus max_tokens")
    n_threads: int | None = Field(None, ge=1, description="llama.cpp threads; None = every core")
    n_batch: int = Field(512, ge=32, description="prompt tokens evaluated per llama.cpp batch")
    max_tokens: int = Field(96, ge=1, description="default completion cap of a call")
    base_url: str | None = Field(
        None, description="OpenAI-compatible API root, e.g. http://127.0.0.1:8080/v1"
    )
    model: str | None = Field(None, description="model name sent to the server (vLLM and Ollama need it)")
    api_key_env: str | None = Field(
        None, description="NAME of the environment variable holding the API key, so no key sits in a config"
    )
    timeout_s: float = Field(60, gt=0, description="per-request timeout; a slow server fails, not hangs")
    server_logprobs: bool = Field(
        False, description="ask the server for token log-probabilities (vLLM and llama.cpp server give them)"
    )

    @field_validator("backend")
    @classmethod
    def _known_backend(cls, name: str) -> str:
        from query.llm.backends import LLM_BACKENDS  # the registry imports these settings

        return LLM_BACKENDS.check(name)

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
        if self.backend == OPENAI_COMPATIBLE and self.base_url is None:
            raise ValueError("backend 'openai-compatible' needs base_url, e.g. http://127.0.0.1:8080/v1")
        if self.backend == GGUF and self.model_path is None:
            raise ValueError("backend 'gguf' needs model_path, the GGUF file to load")
        return self

    def in_state_dir(self, state_dir: Path) -> LlmSettings:
        """These settings with a relative model cache placed inside ``state_dir``."""
        if self.cache_dir.is_absolute():
            return self
        return self.model_copy(update={"cache_dir": Path(state_dir) / self.cache_dir.name})
