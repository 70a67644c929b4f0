"""The manifest every index version carries: what went in, what came out, how long it took.

Readers use it to know what they opened; the next build uses its stage fingerprints to reuse
unchanged stages; ``hqa info`` prints it.
"""

from __future__ import annotations

from typing import Any

from pydantic import BaseModel, Field


class InputFile(BaseModel):
    path: str
    sha256: str
    bytes: int
    reader: str
    shard: str


class StageReport(BaseModel):
    name: str
    fingerprint: str = Field(description="hash of this stage's inputs and settings")
    reused_from: str | None = Field(None, description="version whose output was reused (hard-linked)")
    seconds: float
    counts: dict[str, int] = Field(default_factory=dict)
    rate: float | None = Field(None, description="items per second of the stage's main work")
    rate_unit: str | None = None
    bytes: int = 0
    details: dict[str, Any] = Field(default_factory=dict)


class Manifest(BaseModel):
    version: str
    created_at: str
    hqa_version: str
    inputs: list[InputFile]
    settings: dict[str, Any]
    libraries: dict[str, str]
    model: dict[str, Any] = Field(default_factory=dict, description="embedding model name, version, cap")
    stages: dict[str, StageReport]
    counts: dict[str, int] = Field(description="rows per table and documents per index")
    validation: dict[str, str] = Field(default_factory=dict, description="check -> 'ok' or the failure")
    seconds: float
    files: dict[str, int] = Field(
        default_factory=dict,
        description="every file of the version (relative path -> bytes) when published, checked when a "
        "reader opens it (index.integrity); empty for versions published before the list was kept",
    )
    checksums: dict[str, str] = Field(
        default_factory=dict,
        description="SHA-256 of every file of ``files``, checked by `hqa verify` and before a rebuild links "
        "a stage; empty for versions published before checksums were kept",
    )
