"""The service's own settings: where it listens, what it admits, how long a request may take.

Built by ``hqa serve`` from its options and the environment; the app never reads the root settings.
The token itself is never an option (a flag shows in ``ps`` and shell history): it comes from a file or
the ``HQA_SERVE_TOKEN`` environment variable, and is required whenever the address is not loopback.
"""

from __future__ import annotations

import ipaddress
import os
from pathlib import Path

from pydantic import BaseModel, Field, SecretStr, model_validator

TOKEN_ENV = "HQA_SERVE_TOKEN"


class ServeSettings(BaseModel):
    host: str = Field("127.0.0.1", description="address to bind; loopback unless a token is set")
    port: int = Field(8000, ge=0, le=65535)
    token: SecretStr | None = Field(None, description="bearer token every /v1 request must carry")
    max_body_bytes: int = Field(64_000, ge=1_024, description="larger request bodies get 413")
    max_question_chars: int = Field(1_000, ge=1, description="longer questions get 413")
    max_batch: int = Field(16, ge=1, description="questions one /v1/batch may carry")
    llm_slots: int = Field(1, ge=1, description="questions the LLM engine answers at once")
    llm_queue: int = Field(4, ge=0, description="questions that may wait for an LLM slot; then 429")
    fast_slots: int = Field(2, ge=1, description="questions the candidate reader answers at once")
    fast_queue: int = Field(16, ge=0, description="questions that may wait for a fast slot; then 429")
    deadline_s: float = Field(60.0, gt=0, description="a request's deadline unless it asks for less")
    max_deadline_s: float = Field(300.0, gt=0, description="the longest deadline a request may ask for")
    cors_origins: list[str] = Field(default_factory=list, description="no CORS headers unless named")
    malloc_arenas: int = Field(
        2,
        ge=0,
        description="glibc malloc arenas (query.serve.arenas): few keep RSS flat across version switches; "
        "0 = glibc's default (8 per core); MALLOC_ARENA_MAX in the environment wins",
    )

    @property
    def loopback(self) -> bool:
        if self.host == "localhost":
            return True
        try:
            return ipaddress.ip_address(self.host).is_loopback
        except ValueError:
            return False  # a host name: treated as reachable from elsewhere

    @model_validator(mode="after")
    def _token_off_loopback(self) -> ServeSettings:
        if not self.loopback and self.token is None:
            raise ValueError(
                f"binding {self.host} (not loopback) needs a bearer token: put it in a file and pass "
                f"--token-file, or set {TOKEN_ENV}; or bind 127.0.0.1"
            )
        if self.deadline_s > self.max_deadline_s:
            raise ValueError(f"deadline_s {self.deadline_s} is above max_deadline_s {self.max_deadline_s}")
        return self


def read_token(token_file: Path | None, environ: dict[str, str] | None = None) -> SecretStr | None:
    """The token from ``token_file`` (first line, stripped), else ``HQA_SERVE_TOKEN``, else None. An
    empty file or variable is refused: an empty token would let every request in."""
    environ = os.environ if environ is None else environ
    if token_file is not None:
        text = Path(token_file).read_text(encoding="utf-8").strip().splitlines()
        token, source = (text[0].strip() if text else ""), str(token_file)
    elif TOKEN_ENV in environ:
        token, source = environ[TOKEN_ENV].strip(), TOKEN_ENV
    else:
        return None
    if not token:
        raise ValueError(f"the token in {source} is empty: write one, or leave it unset on loopback")
    return SecretStr(token)
