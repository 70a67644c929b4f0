"""Reasoning modes and the router that picks one per question (``EngineConfig.modes``).

- ``kg-lookup``: entity and property → a typed statement (``query.modes.kg_lookup``);
- ``table-sql``: a superlative or a position over the rows of one retrieved table, by SQL
  (``query.modes.table_sql``);
- ``graph-critic``: a router over retrieval modules (a walk of the graph from the topic entities, text
  similarity, the fused pass) with a critic that validates each round (``query.modes.graph_critic``);
- ``retrieve-read``: retrieve → re-rank → read, the fallback that always answers.

A mode is registered here by name with a factory over ``ModeContext`` (what the engine opened), so an
experiment with another set or order of modes is a config, not a code edit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

from index.aliases import AliasIndex
from index.graph import GraphIndex
from index.statements import StatementStore
from index.tables import TableStore
from query.llm.chat import Llm
from query.modes.base import Declined, Mode, Understanding
from query.modes.graph_critic import GraphCriticMode, GraphCriticSettings
from query.modes.kg_lookup import KgLookupMode, KgLookupSettings
from query.modes.retrieve_read import RetrieveReadMode, RetrieveReadPipeline
from query.modes.router import NoModeAnswered, Router
from query.modes.table_sql import TableSqlMode, TableSqlSettings
from query.retrieve.evidence_store import EvidenceStore
from query.understand.properties import PropertyLabels

__all__ = [
    "MODES",
    "Declined",
    "GraphCriticSettings",
    "KgLookupSettings",
    "Mode",
    "ModeContext",
    "NoModeAnswered",
    "Router",
    "TableSqlSettings",
    "Understanding",
    "build_modes",
]


@dataclass
class ModeContext:
    """What the engine opened that modes may use; built once per engine."""

    pipeline: RetrieveReadPipeline  # the engine: also a TableSqlPipeline
    evidence: EvidenceStore
    statements: StatementStore | None
    properties: PropertyLabels
    index_version: str
    kg_lookup: KgLookupSettings
    tables: TableStore | None = None
    table_sql: TableSqlSettings | None = None
    llm: Llm | None = None  # the configured instruct model, when one loaded
    graph: GraphIndex | None = None
    aliases: AliasIndex | None = None
    graph_critic: GraphCriticSettings | None = None


MODES: dict[str, Callable[[ModeContext], Mode]] = {
    "kg-lookup": lambda c: KgLookupMode(c.statements, c.evidence, c.properties, c.index_version, c.kg_lookup),
    "table-sql": lambda c: TableSqlMode(
        c.pipeline,  # type: ignore[arg-type]
        c.evidence,
        c.tables,
        c.table_sql,
        c.llm,
        graph=c.graph,
        statements=c.statements,
        properties=c.properties,
        aliases=c.aliases,
        index_version=c.index_version,
    ),
    "graph-critic": lambda c: GraphCriticMode(
        c.pipeline,  # type: ignore[arg-type]
        c.evidence,
        _required(c.graph, "graph-critic needs the index's graph"),
        c.graph_critic,
        c.index_version,
        llm=c.llm,
    ),
    "retrieve-read": lambda c: RetrieveReadMode(c.pipeline),
}


def _required(value, why: str):
    if value is None:
        raise ValueError(why)
    return value


def build_modes(names: list[str], context: ModeContext) -> list[Mode]:
    unknown = [n for n in names if n not in MODES]
    if unknown:
        raise ValueError(f"unknown modes {unknown}; known: {', '.join(MODES)}")
    return [MODES[name](context) for name in names]
