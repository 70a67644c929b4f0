"""The query engine's whole configuration as one model, so an experiment is a config file, not a code edit.

A file may hold the engine settings at its top level or under an ``engine`` table, so one TOML/YAML
file can carry both ``hqa`` settings and the engine's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, field_validator

from query.llm.settings import LlmSettings
from query.modes import MODES
from query.modes.graph_critic import GraphCriticSettings
from query.modes.kg_lookup import KgLookupSettings
from query.modes.table_sql import TableSqlSettings
from query.read.candidates import AnswerSettings
from query.read.llm_reader import LlmReaderSettings
from query.rerank.models import BUNDLED_RANKER
from query.retrieve.retrievers import RetrievalSettings
from query.understand.intent import INTENT_EXTRACTORS
from schemas.settings import deep_merge


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

    modes: list[str] = Field(
        default_factory=lambda: ["kg-lookup", "table-sql", "retrieve-read"],
        min_length=1,
        description="reasoning modes the router may pick, in order of preference when their estimates tie; "
        "the last one should always answer",
    )
    intent: str = Field(
        "rules", description="intent extractor (``query.understand.intent.INTENT_EXTRACTORS``)"
    )
    link_k: int = Field(5, ge=1, description="candidate entities kept per mention")
    property_table: Path | None = Field(None, description="property labels; None = the bundled table")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    reader: Literal["llm", "candidates"] = Field(
        "llm",
        description="who reads the answer out of the evidence: 'llm' (the instruct model of ``llm``, seconds "
        "a question; it read OTT-QA far better, README) or 'candidates' (the candidate reader, milliseconds)",
    )
    llm: LlmSettings = Field(default_factory=LlmSettings)
    llm_reader: LlmReaderSettings = Field(default_factory=LlmReaderSettings)
    kg_lookup: KgLookupSettings = Field(default_factory=KgLookupSettings)
    table_sql: TableSqlSettings = Field(default_factory=TableSqlSettings)
    graph_critic: GraphCriticSettings = Field(default_factory=GraphCriticSettings)

    @field_validator("modes")
    @classmethod
    def _known_modes(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in MODES]
        if unknown:
            raise ValueError(f"unknown modes {unknown}; known: {', '.join(MODES)}")
        if len(set(names)) != len(names):
            raise ValueError(f"a mode is named twice: {names}")
        return names

    @field_validator("intent")
    @classmethod
    def _known_intent(cls, name: str) -> str:
        if name not in INTENT_EXTRACTORS:
            raise ValueError(f"unknown intent extractor {name!r}; known: {', '.join(INTENT_EXTRACTORS)}")
        return name

    @classmethod
    def load(cls, path: Path | None, **overrides: Any) -> EngineConfig:
        values: dict[str, Any] = {}
        if path is not None:
            text = Path(path).read_text()
            values = tomllib.loads(text) if Path(path).suffix == ".toml" else (yaml.safe_load(text) or {})
            values = values.get("engine", values)
        return cls.model_validate(deep_merge(values, overrides))
