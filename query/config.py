"""The query engine's whole configuration as one model, so an experiment is a config file, not a code edit.

A file may hold the engine settings at its top level or under an ``engine`` table, so one TOML/YAML
file can carry both ``hqa`` settings and the engine's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import BaseModel, ConfigDict, Field

from query.llm.generators import LlmSettings
from query.read.candidates import AnswerSettings
from query.rerank.models import BUNDLED_RANKER
from query.retrieve.retrievers import RetrievalSettings


class RerankSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage1: bool = Field(True, description="feature ranker over the pool; off = fused order")
    stage1_keep: int = Field(100, ge=1, description="head of the fused pool stage one re-orders and keeps")
    ranker: Path | None = Field(
        BUNDLED_RANKER,
        description="stage-one weights (JSON); the bundled ones were fitted on OTT-QA dev; None = hand-set",
    )
    stage2: str | None = Field(
        None,
        description="pair scorer for stage two ('late-interaction', 'cross-encoder'); None = off: on OTT-QA "
        "dev late interaction lowered answer presence at 30 at every mixing weight (see the README)",
    )
    stage2_settings: dict[str, Any] = Field(default_factory=dict, description="the pair scorer's settings")
    stage2_keep: int = Field(30, ge=1)
    stage2_weight: float = Field(0.5, ge=0.0, le=1.0, description="pair score's share of the final score")


class EngineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    intent: str = Field("rules", description="intent extractor")
    link_k: int = Field(5, ge=1, description="candidate entities kept per mention")
    property_table: Path | None = Field(None, description="property labels; None = the bundled table")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    llm: LlmSettings = Field(default_factory=LlmSettings)

    @classmethod
    def load(cls, path: Path | None, **overrides: Any) -> EngineConfig:
        values: dict[str, Any] = {}
        if path is not None:
            text = Path(path).read_text()
            values = tomllib.loads(text) if Path(path).suffix == ".toml" else (yaml.safe_load(text) or {})
            values = values.get("engine", values)
        return cls.model_validate(_merge(values, overrides))


def _merge(base: dict[str, Any], overrides: dict[str, Any]) -> dict[str, Any]:
    out = dict(base)
    for key, value in overrides.items():
        out[key] = _merge(out.get(key) or {}, value) if isinstance(value, dict) else value
    return out
