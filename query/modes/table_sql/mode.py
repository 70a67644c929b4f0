"""The table-sql mode: arithmetic over a table built for the question — from the graph, or a retrieved
Wikipedia table.

From the graph (``set_answers``, with ``set_planner`` resolving the words): "How many of the Chilean
places have more than 100,000 inhabitants?", "Which Chilean city has the most inhabitants?", "Which of
Bonn, Parma and Siena has the largest area?", "Is the population of the German cities normally
distributed?", "Which country has the most cities?" — the entity set by a fixed Cypher, one row per
entity with its values and the statements they came from, then a template SELECT (and, for a statistics
question, a SciPy test over what it selected). Every reading of the question is tried in turn; the first
the index resolves answers.

From a retrieved table (``retrieved``, answering from the chosen row with ``rows``): a question that ranks
or picks a place over the rows of one table.

It declines — and says why — when the question has no such cue, no table is among the evidence, no header
names the measured quantity (and no model wrote SQL that runs), the table is too large, or no row has a
value.
"""

from __future__ import annotations

from index.aliases import AliasIndex
from index.graph import GraphIndex
from index.statements import StatementStore
from index.tables import TableStore
from query.llm.chat import Llm
from query.modes.base import Declined, Understanding
from query.modes.table_sql.retrieved import NO_WRITER, RetrievedTables
from query.modes.table_sql.rows import RowAnswers
from query.modes.table_sql.set_answers import SetAnswerer
from query.modes.table_sql.set_planner import EntitySetPlanner, SetDeclined
from query.modes.table_sql.settings import NAME, TableSqlSettings
from query.pipeline import Pipeline
from query.sql.writer import SqlWriter
from query.understand.entity_sets import set_question, set_readings
from query.understand.properties import PropertyLabels
from query.understand.table_ops import asks_a_value, table_op
from schemas.query import QueryResult


class TableSqlMode:
    name = NAME

    def __init__(
        self,
        pipeline: Pipeline,
        tables: TableStore | None,
        settings: TableSqlSettings | None = None,
        llm: Llm | None = None,
        graph: GraphIndex | None = None,
        statements: StatementStore | None = None,
        properties: PropertyLabels | None = None,
        aliases: AliasIndex | None = None,
    ):
        self.settings = settings or TableSqlSettings()
        self.tables = tables
        self.writer = SqlWriter(llm) if llm is not None else None
        rows = RowAnswers(pipeline, pipeline.store, graph, self.settings)
        self.retrieved = (
            RetrievedTables(pipeline, tables, rows, self.writer, self.settings)
            if tables is not None
            else None
        )
        self.sets = (
            SetAnswerer(
                EntitySetPlanner(graph, statements, properties, aliases),
                pipeline.store,
                display_rows=self.settings.display_rows,
                alpha=self.settings.alpha,
                min_test_values=self.settings.min_test_values,
                index_version=pipeline.index_version,
            )
            if graph is not None and statements is not None and properties is not None and aliases is not None
            else None
        )

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        if self.sets is not None and (asked := set_question(understanding.question)) is not None:
            why = f"a set question ({asked.kind}) over entities of the graph"
            retrieved = self.settings.retrieved_tables and self.tables is not None
            if retrieved and (op := table_op(understanding.question)) is not None:
                why += f", else a table row by '{op.cue}'"  # what answers when the graph cannot
            return self.settings.set_estimate, why
        if not self.settings.retrieved_tables:
            return 0.0, "no set question, and the retrieved-table path is off (table_sql.retrieved_tables)"
        if self.tables is None:
            return 0.0, "the index has no tables (built before the tables stage): rebuild it"
        op = table_op(understanding.question)
        if op is None:
            return 0.0, "no superlative, ordinal or position over rows in the question"
        if op.kind == "count" and asks_a_value(understanding.question):
            return self.settings.estimate, "a number about one thing, read from the one row it names by value"
        if op.kind == "count" and self.writer is None:
            return 0.0, NO_WRITER
        return self.settings.estimate, f"the question asks for a row by '{op.cue}'"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        """The graph path for a set question, else (or when it cannot) the retrieved-table path."""
        readings = set_readings(understanding.question) if self.sets is not None else []
        if not readings or self.sets is None:
            return self._over_table(understanding)
        reasons = []
        for asked in readings:
            try:
                return self.sets.answer(understanding, asked)
            except SetDeclined as exc:
                reasons.append(f"as a {asked.kind}: {exc}" if len(readings) > 1 else str(exc))
        outcome = self._over_table(understanding)
        if isinstance(outcome, Declined):
            return Declined(NAME, f"graph: {'; '.join(reasons)}; table: {outcome.reason}")
        return outcome

    def _over_table(self, understanding: Understanding) -> QueryResult | Declined:
        if not self.settings.retrieved_tables:
            return Declined(NAME, "the retrieved-table path is off (table_sql.retrieved_tables)")
        if self.retrieved is None:
            return Declined(NAME, "no row operation this mode can run")
        return self.retrieved.answer(understanding)
