"""The table-sql mode's retrieved-table path: a question that ranks or picks a place over the rows of one
retrieved Wikipedia table.

"Which team had the most top 4 finishes?", "the nation with the lowest RLIF rank", "the second-to-last
driver": the answer is one row of a table, chosen by arithmetic the reader cannot do. The path runs the
pipeline's retrieval, takes the table whose rows rank best among the final evidence, loads all of its
rows from the index (``index.tables``), types its columns (``query.tabulate``), picks the measure column
by its header, and runs a template SELECT on DuckDB (``query.sql``). "The oldest player" over a roster
with no age column ranks by the birth (or founding) dates the leads of the rows' linked pages state
(``query.tabulate.linked``), each such cell naming the passage it was read from. A category value the
question names ("the oldest *German* athlete who won *silver*"), or a name a few cells hold ("the earliest
final *in Ecuador*" over tournaments "Ecuador F3", …), conditions the ranking or the place in the table's
order (``query.tabulate.filters``; bound as parameters). The chosen row is answered by ``RowAnswers``.

A ranking wins over a "how many" ("How many titles did the player with the most points win?": the table
picks the player, the count is on the player's page); a "how many" about one thing ("How many seats does
the stadium have?") is never counted over rows: when the values the question names (a year, a name inside
cells, a category) select exactly one row ("the city that hosted the final *in 2009*"), that row is the
thing and is read like a ranking's row (a lookup), else the path declines. A superlative no column can
rank takes the same lookup when its conditions leave one row.

With an instruct model configured, a question the templates cannot serve — a count ("how many of the clubs
are from Minsk"), or a superlative whose quantity no header names by the rules — gets SQL written by the
model from the table's schema and first rows (``query.sql.writer``), checked and run the same way; a
single value it returns (a count) is the answer, rows it returns are read as above.
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from index.tables import TableStore
from query.modes.base import Declined, Understanding
from query.modes.table_sql.rows import RowAnswers
from query.modes.table_sql.settings import LINKED_SHARE, NAME, TableSqlSettings
from query.pipeline import Pipeline, StagedRun
from query.retrieve.evidence_store import EvidenceRow
from query.sql.guard import SqlFailed, SqlRejected, run_select
from query.sql.templates import ROW, TABLE, SqlQuery, position, rows_where, superlative, value_text
from query.sql.writer import SqlWriter
from query.tabulate.columns import answer_column, measure_column
from query.tabulate.filters import RowFilter, row_filters
from query.tabulate.frame import QuestionTable, typed_table
from query.tabulate.linked import start_date
from query.understand.row_questions import asks_a_date
from query.understand.table_ops import TableOp, asks_a_value, table_op
from schemas.query import QueryResult

A_VALUE = "'how many' asks for a number stated about one thing (a value on its page), not a count"
NO_WRITER = "a count needs a row condition the rules cannot read (no LLM configured to write SQL)"


def pick_table(rows: Sequence[EvidenceRow]) -> str | None:
    """The table whose rows rank best among ``rows`` (each row's vote is 1 / its rank)."""
    votes: dict[str, float] = {}
    for rank, row in enumerate(rows, start=1):
        table_id = row.raw_provenance.get("table_id") if row.source_type == "table" else None
        if table_id:
            votes[table_id] = votes.get(table_id, 0.0) + 1.0 / rank
    return max(votes, key=lambda t: votes[t]) if votes else None


class RetrievedTables:
    """The retrieved-table path; safe for concurrent use."""

    def __init__(
        self,
        pipeline: Pipeline,
        tables: TableStore,
        rows: RowAnswers,
        writer: SqlWriter | None,
        settings: TableSqlSettings,
    ):
        self.pipeline, self.tables, self.rows = pipeline, tables, rows
        self.writer, self.settings = writer, settings

    def answer(self, understanding: Understanding) -> QueryResult | Declined:
        op = table_op(understanding.question)
        if op is None:
            return Declined(NAME, "no row operation this mode can run")
        value_question = op.kind == "count" and asks_a_value(understanding.question)
        if op.kind == "count" and not value_question and self.writer is None:
            return Declined(NAME, NO_WRITER)
        staged = self.pipeline.run(understanding)
        table_id = pick_table(staged.final_rows()[: self.settings.table_from_top])
        if table_id is None:
            return Declined(NAME, f"no table among the top {self.settings.table_from_top} evidence rows")
        rows = self.tables.rows(table_id)
        if len(rows) < 2:
            return Declined(NAME, f"table {table_id} has {len(rows)} row(s): nothing to rank")
        if len(rows) > self.settings.max_rows:
            return Declined(
                NAME, f"table {table_id} has {len(rows)} rows, over the cap of {self.settings.max_rows}"
            )
        table = typed_table(rows)
        if value_question:
            return self._lookup(staged, table, op, understanding.question, A_VALUE)
        return self._ranked(staged, table, table_id, op, understanding.question)

    def _ranked(
        self, staged: StagedRun, table: QuestionTable, table_id: str, op: TableOp, question: str
    ) -> QueryResult | Declined:
        """A superlative, a position or a count over the table's rows, by a template or a written SELECT."""
        measure = measure_column(table, op) if op.kind == "superlative" else None
        linked_note = None
        if measure is None and op.kind == "superlative" and "born" in op.implied:
            table, linked_note = self._with_start_dates(table, op)
            measure = measure_column(table, op)
        if measure is None and op.kind == "superlative" and op.k == 1:
            subject = answer_column(table, op)
            only = self._lookup(
                staged, table, op, question, "no column to rank by",
                exclude={subject.name} if subject is not None else set(),
            )  # fmt: skip
            if not isinstance(only, Declined):
                return only
        filters: list[RowFilter] = []
        if op.kind == "position" or measure is not None:
            if measure is not None:
                subject = answer_column(table, op, measure.column.name)
                skip = {measure.column.name, *([subject.name] if subject is not None else [])}
                filters = row_filters(table, question, skip)
                where = [f.condition() for f in filters]
                query = superlative(measure.column.name, measure.direction, op.k, where)
            else:
                subject = answer_column(table, op)
                filters = row_filters(table, question, {subject.name} if subject else set())
                query = position(op.k, op.from_end, [f.condition() for f in filters])
            try:
                out = run_select(query.sql, {TABLE: table.arrow}, query.params)
            except (SqlRejected, SqlFailed) as exc:
                return Declined(NAME, f"the SQL over {table_id} failed: {exc}")
            written_by = None
        else:
            if self.writer is None:
                wanted = " ".join(op.measure) or "/".join(op.implied)
                why = f"; {linked_note}" if linked_note else ""
                return Declined(NAME, f"no numeric or date column of {table_id} is headed by '{wanted}'{why}")
            schema = f"{ROW} INTEGER, " + table.schema_text()
            written = self.writer.write(
                question, schema, table.arrow, table.title, want_row=op.kind != "count"
            )
            if written.result is None:
                return Declined(NAME, f"no SQL over {table_id} ran: {written.error}")
            out, query, written_by = (
                written.result,
                SqlQuery(written.result.sql, [], op.kind),
                self.writer.llm.name,
            )
        if not out.rows:
            return Declined(NAME, f"no row of {table_id} has a value to rank by")
        exclude = measure.column.name if measure else None
        if out.columns and out.columns[0] != ROW:  # one value (a count, an aggregate): the answer itself
            if op.kind != "count":  # a ranking answered by a bare cell: which row, and is it the asked one?
                return Declined(NAME, f"the SQL over {table_id} returned a value, not the row it ranks first")
            if len(out.rows) != 1 or len(out.rows[0]) != 1 or out.rows[0][0] is None:
                return Declined(NAME, f"the SQL over {table_id} returned neither rows nor one value")
            if out.rows[0][0] == 0:  # the model's condition matched no row: more likely a wrong condition
                return Declined(NAME, f"the written SQL's condition matched no row of {table_id}: {out.sql}")
            value = value_text(out.rows[0][0])
            trace = self.rows.trace(table, op, query, out.sql, [], value, None, measure, written_by)
            return self.rows.value(staged, value, trace)
        selected = [int(r[0]) for r in out.rows if r[0] is not None]
        if not selected or any(all(r.row_index != s for r in table.rows) for s in selected):
            return Declined(NAME, f"the SQL over {table_id} returned no row of the table")
        chosen = table.row(selected[0])
        note = f"{len(selected)} rows tie at this place; the first is read" if len(selected) > 1 else None
        value = value_text(out.rows[0][1]) if len(out.rows[0]) > 1 and op.kind == "superlative" else None
        trace = self.rows.trace(
            table, op, query, out.sql, selected, value, note, measure, written_by, filters
        )
        ranked_date = None
        if measure is not None and measure.column.type == "date" and asks_a_date(question):
            ranked_date = measure.column.name  # "When was the oldest player born?": the date it was ranked by
        return self.rows.from_row(staged, table, op, question, chosen, trace, note, exclude, ranked_date)

    def _lookup(
        self,
        staged: StagedRun,
        table: QuestionTable,
        op: TableOp,
        question: str,
        why: str,
        exclude: set[str] | None = None,
    ) -> QueryResult | Declined:
        """ "How many people live in the city that hosted the 2009 final?": a number about one thing,
        which no count over rows gives. When the values the question names (a year, a name inside
        cells, a category) select exactly one row of the table, that row is the thing: it and the
        pages its cells link to are read first, as for a ranking's row. Any other number of rows and
        the mode declines, so the retrieve-read mode reads the question as before. A superlative no
        column can rank ("the hurricane that cost the least *during the 1978 season*") is served the
        same way when its conditions leave one row: the least of one row is that row."""
        filters = row_filters(table, question, exclude or set())
        if not filters:
            return Declined(NAME, f"{why}; no value it names selects a row of {table.table_id}")
        query = rows_where([f.condition() for f in filters])
        try:
            out = run_select(query.sql, {TABLE: table.arrow}, query.params)
        except (SqlRejected, SqlFailed) as exc:
            return Declined(NAME, f"the SQL over {table.table_id} failed: {exc}")
        selected = [int(r[0]) for r in out.rows]
        if len(selected) != 1:
            many = f"{why}; the values it names select {len(selected)} rows of {table.table_id}"
            return Declined(NAME, many)
        chosen = table.row(selected[0])
        trace = self.rows.trace(table, op, query, out.sql, selected, None, None, None, None, filters)
        named = " and ".join(f.describe() for f in filters)
        only = f" (the only row, so the {op.cue} one)" if op.kind == "superlative" else ""
        trace = trace.model_copy(update={"operation": f"lookup: the row where {named}{only}"})
        return self.rows.from_row(staged, table, op, question, chosen, trace, None)

    def _with_start_dates(self, table: QuestionTable, op: TableOp) -> tuple[QuestionTable, str | None]:
        """``table`` with a "born / founded" date column read from the leads of the pages its subject
        column links to (``query.tabulate.linked``): "the oldest player" over a roster without ages.
        Unchanged, with the reason, when too few rows get a date."""
        subject = answer_column(table, op)
        if subject is None or self.rows.graph is None:
            return table, "no column of linked pages to read dates from"
        links = {r.row_index: table.cell_links(r.row_index, subject.name) for r in table.rows}
        titles = {row_index: found[0] for row_index, found in links.items() if found}
        leads = self.rows.leads(sorted(set(titles.values())))
        values = {}
        for row_index, title in titles.items():
            lead = leads.get(title)
            # without the "<title>: " a window starts with, whose "(footballer, born 1961)" is no birth date
            found = start_date(lead.text.removeprefix(f"{title}: ")) if lead is not None else None
            if found is not None and lead is not None:
                values[row_index] = (found[0], found[1], f"lead of '{title}' (evidence {lead.evidence_id})")
        wanted = max(2, math.ceil(LINKED_SHARE * len(table.rows)))
        if len(values) < wanted:
            return table, (
                f"the pages the '{subject.header}' column links to give a birth or founding date for "
                f"{len(values)} of {len(table.rows)} rows (at least {wanted} needed)"
            )
        return table.with_column(f"born or founded (lead of the {subject.header} page)", values), None
