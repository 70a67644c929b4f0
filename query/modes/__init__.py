"""Reasoning modes and the router that picks one per question (``EngineConfig.modes``).

- ``kg-lookup``: entity and property → a typed statement (``query.modes.kg_lookup``);
- ``kg-plan``: the question read into a typed plan (``query.understand.plan``) and executed over the
  statements and the graph: chains, comparisons, counts, superlatives, yes/no (``query.modes.plans``);
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
from query.modes.answer_guard import AnswerGuard
from query.modes.base import Declined, Mode, Understanding
from query.modes.graph_critic import GraphCriticMode, GraphCriticSettings
from query.modes.kg_lookup import KgLookupMode, KgLookupSettings
from query.modes.plans import PlanMode, PlanModeSettings, PlanReads
from query.modes.retrieve_read import RetrieveReadMode
from query.modes.router import NoModeAnswered, Router
from query.modes.table_sql import TableSqlMode, TableSqlSettings
from query.pipeline import Pipeline
from query.registry import Registry
from query.understand.linking import EntityTable
from query.understand.plan import RulePlanner
from query.understand.plan_llm import LlmPlanner
from query.understand.properties import PropertyLabels

__all__ = [
    "MODES",
    "Declined",
    "GraphCriticSettings",
    "KgLookupSettings",
    "Mode",
    "ModeContext",
    "NoModeAnswered",
    "PlanModeSettings",
    "Router",
    "TableSqlSettings",
    "Understanding",
    "build_modes",
]


@dataclass
class ModeContext:
    """What the engine opened that modes may use; built once per engine."""

    pipeline: Pipeline
    statements: StatementStore | None
    properties: PropertyLabels
    graph: GraphIndex
    aliases: AliasIndex
    tables: TableStore | None = None
    llm: Llm | None = None  # the configured instruct model, when one loaded
    kg_lookup: KgLookupSettings | None = None
    table_sql: TableSqlSettings | None = None
    graph_critic: GraphCriticSettings | None = None
    kg_plan: PlanModeSettings | None = None
    entities: EntityTable | None = None  # labels and descriptions, for the plan's classes and places
    in_text: Callable[[str], bool] | None = None  # does any indexed row hold every word of this name?


MODES: Registry[ModeContext, Mode] = Registry(
    "mode",
    {
        "kg-lookup": lambda c: KgLookupMode(
            c.statements, c.pipeline.store, c.properties, c.pipeline.index_version, c.kg_lookup
        ),
        "kg-plan": lambda c: PlanMode(
            PlanReads(c.statements, c.graph, c.aliases, c.entities)
            if c.statements is not None and c.entities is not None
            else None,
            c.pipeline.store,
            RulePlanner(c.properties),
            c.pipeline.index_version,
            c.kg_plan,
            LlmPlanner(c.llm, c.properties)
            if c.llm is not None and c.kg_plan and c.kg_plan.llm_planner
            else None,
            c.in_text,
        ),
        "table-sql": lambda c: TableSqlMode(
            c.pipeline,
            c.tables,
            c.table_sql,
            c.llm,
            graph=c.graph,
            statements=c.statements,
            properties=c.properties,
            aliases=c.aliases,
        ),
        "graph-critic": lambda c: GraphCriticMode(c.pipeline, c.graph, c.graph_critic, llm=c.llm),
        "retrieve-read": lambda c: RetrieveReadMode(
            c.pipeline, AnswerGuard(RulePlanner(c.properties), c.in_text)
        ),
    },
)
"""Modes by the names ``EngineConfig.modes`` gives; a new mode registers here."""


def build_modes(names: list[str], context: ModeContext) -> list[Mode]:
    unknown = [n for n in names if n not in MODES]
    if unknown:
        raise ValueError(f"unknown modes {unknown}; known: {', '.join(MODES)}")
    return [MODES.create(name, context) for name in names]
