"""The query engine's whole configuration as one model, so an experiment is a config file, not a code edit.

Each table is one component's own settings model (``[understand]``, ``[retrieval]``, ``[rerank]``,
``[answer]``, ``[llm]``, ``[llm_reader]``, ``[kg_lookup]``, ``[kg_plan]``, ``[table_sql]``,
``[graph_critic]``); the engine hands each component its table and nothing else. A file may hold the
engine settings at its top level or under an ``engine`` table, so one TOML/YAML file can carry both
``hqa`` settings and the engine's; both are read by ``schemas.settings.read_config_file``.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, ValidationError, field_validator, model_validator

from query.llm.settings import LlmSettings
from query.modes import MODES
from query.modes.graph_critic import GraphCriticSettings
from query.modes.kg_lookup import KgLookupSettings
from query.modes.plans import PlanModeSettings
from query.modes.table_sql import TableSqlSettings
from query.read.candidates import AnswerSettings
from query.read.llm_reader import LlmReaderSettings
from query.read.readers import READERS
from query.rerank.settings import RerankSettings
from query.retrieve.retrievers import RetrievalSettings
from query.understand.settings import UnderstandSettings
from query.understand.understanding import INTENT_EXTRACTORS
from schemas.settings import ENGINE_TABLE, deep_merge, read_config_file

__all__ = ["EngineConfig", "RerankSettings"]


class EngineConfig(BaseModel):
    model_config = ConfigDict(extra="forbid")

    modes: list[str] = Field(
        default_factory=lambda: ["kg-plan", "kg-lookup", "table-sql", "retrieve-read"],
        min_length=1,
        description="reasoning modes the router may pick, in order of preference when their estimates tie; "
        "the last one should always answer",
    )
    understand: UnderstandSettings = Field(default_factory=UnderstandSettings)
    property_table: Path | None = Field(None, description="property labels; None = the bundled table")
    retrieval: RetrievalSettings = Field(default_factory=RetrievalSettings)
    rerank: RerankSettings = Field(default_factory=RerankSettings)
    answer: AnswerSettings = Field(default_factory=AnswerSettings)
    reader: str = Field(
        "llm",
        description="who reads the answer out of the evidence: 'llm' (the instruct model of ``llm``, seconds "
        "a question; it read OTT-QA far better, README) or 'candidates' (the candidate reader, milliseconds)",
    )
    llm: LlmSettings = Field(default_factory=LlmSettings)
    llm_reader: LlmReaderSettings = Field(default_factory=LlmReaderSettings)
    kg_lookup: KgLookupSettings = Field(default_factory=KgLookupSettings)
    kg_plan: PlanModeSettings = Field(default_factory=PlanModeSettings)
    table_sql: TableSqlSettings = Field(default_factory=TableSqlSettings)
    graph_critic: GraphCriticSettings = Field(default_factory=GraphCriticSettings)

    @property
    def wants_llm(self) -> bool:
        """Does an engine of this config load the instruct model (the LLM reader, or the LLM planner)?"""
        return self.reader == "llm" or self.kg_plan.llm_planner

    @model_validator(mode="before")
    @classmethod
    def _understanding_keys(cls, values: Any) -> Any:
        """The top-level ``intent`` and ``link_k`` of configs written before ``[understand]``."""
        if not isinstance(values, dict) or not ({"intent", "link_k"} & set(values)):
            return values
        values = dict(values)
        moved: dict[str, Any] = {}
        if "intent" in values:
            moved["intent"] = {"extractor": values.pop("intent")}
        if "link_k" in values:
            moved["linking"] = {"k": values.pop("link_k")}
        values["understand"] = deep_merge(moved, values.get("understand") or {})
        return values

    @field_validator("modes")
    @classmethod
    def _known_modes(cls, names: list[str]) -> list[str]:
        unknown = [n for n in names if n not in MODES]
        if unknown:
            raise ValueError(f"unknown modes {unknown}; known: {', '.join(MODES)}")
        if len(set(names)) != len(names):
            raise ValueError(f"a mode is named twice: {names}")
        return names

    @field_validator("reader")
    @classmethod
    def _known_reader(cls, name: str) -> str:
        return READERS.check(name)

    @field_validator("understand")
    @classmethod
    def _known_intent(cls, settings: UnderstandSettings) -> UnderstandSettings:
        INTENT_EXTRACTORS.check(settings.intent.extractor)
        return settings

    @classmethod
    def load(cls, path: Path | None, **overrides: Any) -> EngineConfig:
        """The config of a TOML or YAML file (``None``: the defaults) with ``overrides`` laid over it.

        A file that is not a config raises a ``ValueError`` naming it, and a wrong value a ``ValidationError``
        titled with it, so a run's log says which of its files to fix.
        """
        if path is None:
            return cls.model_validate(overrides)
        path = Path(path)
        what = "engine settings (at its top level or under 'engine')"
        values = read_config_file(path, what)
        table = values.get(ENGINE_TABLE, values)
        if not isinstance(table, dict):
            raise ValueError(
                f"{path} must hold a table of engine settings (at its top level or under 'engine'), "
                f"not a {type(table).__name__}"
            )
        try:
            return cls.model_validate(deep_merge(table, overrides))
        except ValidationError as exc:
            raise _titled(exc, f"EngineConfig in {path}") from exc


def _titled(error: ValidationError, title: str) -> ValueError:
    """``error`` titled ``title``; a plain ``ValueError`` saying it where pydantic cannot rebuild one of its
    error types (``path_type``)."""
    try:
        return ValidationError.from_exception_data(title, error.errors())  # type: ignore[arg-type]
    except (KeyError, TypeError, ValueError):
        return ValueError(f"{title}: {error}")
