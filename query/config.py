"""The query engine's whole configuration as one model, so an experiment is a config file, not a code edit.

A file may hold the engine settings at its top level or under an ``engine`` table, so one TOML/YAML
file can carry both ``hqa`` settings and the engine's.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator

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
        """The config of a TOML or YAML file (``None``: the defaults) with ``overrides`` laid over it.

        A file that is not a config raises a ``ValueError`` naming it, and a wrong value a ``ValidationError``
        titled with it: a parser's own exception (``yaml.ScannerError``, ``AttributeError`` for a file that
        holds a list) would not say which of a run's files to fix.
        """
        if path is None:
            return cls.model_validate(overrides)
        path = Path(path)
        try:
            return cls.model_validate(deep_merge(_config_table(path), overrides))
        except ValidationError as exc:
            raise _titled(exc, f"EngineConfig in {path}") from exc


def _titled(error: ValidationError, title: str) -> ValueError:
    """``error`` titled ``title``; a plain ``ValueError`` saying it where pydantic cannot rebuild one of its
    error types (``path_type``)."""
    try:
        return ValidationError.from_exception_data(title, error.errors())  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        return ValueError(f"{title}: {error}")


def _config_table(path: Path) -> dict[str, Any]:
    """The engine settings of a config file: its top-level table, or its ``engine`` table when it has one."""
    kind = "TOML" if path.suffix == ".toml" else "YAML"
    try:
        text = path.read_text(encoding="utf-8")
        values = tomllib.loads(text) if kind == "TOML" else yaml.safe_load(text)
    except (UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise ValueError(f"{path} is not a readable {kind} file: {type(exc).__name__}: {exc}") from exc
    if values is None:  # an empty YAML file: the defaults
        return {}
    if isinstance(values, dict):
        values = values.get("engine", values)
    if not isinstance(values, dict):
        raise ValueError(
            f"{path} must hold a table of engine settings (at its top level or under 'engine'), "
            f"not a {type(values).__name__}"
        )
    return values
