"""The table-sql mode: arithmetic over a table built for the question — from the graph, or a retrieved
Wikipedia table.

From the graph (``query.modes.set_answers``, with ``query.modes.entity_sets`` resolving the words):
"How many of the Chilean places have more than 100,000 inhabitants?", "Which Chilean city has the most
inhabitants?", "Which of Bonn, Parma and Siena has the largest area?", "Is the population of the German
cities normally distributed?", "Which country has the most cities?" — the entity set by a fixed
Cypher, one row per entity with its values and the statements they came from, then a template SELECT
(and, for a statistics question, a SciPy test over what it selected). Every reading of the question
is tried in turn; the first the index resolves answers.

From a retrieved table: a question that ranks or picks a place over the rows of one table.

"Which team had the most top 4 finishes?", "the nation with the lowest RLIF rank", "the second-to-last
driver": the answer is one row of a table, chosen by arithmetic the reader cannot do. The mode runs
the engine's retrieval, takes the table whose rows rank best among the final evidence, loads all of
its rows from the index (``index.tables``), types its columns (``query.tabulate``), picks the measure
column by its header, and runs a template SELECT on DuckDB (``query.sql``). "The oldest player" over a
roster with no age column ranks by the birth (or founding) dates the leads of the rows' linked pages
state (``query.tabulate.linked``), each such cell naming the passage it was read from. A category value
the question names ("the oldest *German* athlete who won *silver*"), or a name a few cells hold ("the
earliest final *in Ecuador*" over tournaments "Ecuador F3", …), conditions the ranking or the place in
the table's order (``query.tabulate.filters``; bound as parameters). Then:

- a "which/what <noun>" question whose noun heads a column is answered by that cell of the row, and
  one whose noun is what the table lists ("which *natural park*" over "… / Natural Parks") by the row's
  subject cell;
- a "full name" question by the name the lead of the row's linked page opens with;
- any other question is read from the chosen row first, with the lead passages of the pages its
  cells link to after it (the hop; the row subject's own page first), then the rest of the evidence:
  the reader finds "the nickname of the team with the most wins" on the team's page. An LLM reader is
  told that row [1] is the SQL's pick over the whole table (it sees a few rows of it, and would
  otherwise rank them itself), and the subject's name ("answer the question about Ferrari").

A ranking wins over a "how many" ("How many titles did the player with the most points win?": the
table picks the player, the count is on the player's page); a "how many" about one thing ("How many
seats does the stadium have?") is never counted over rows: when the values the question names (a
year, a name inside cells, a category) select exactly one row ("the city that hosted the final *in
2009*"), that row is the thing and is read like a ranking's row (a lookup), else the mode declines.
A superlative no column can rank takes the same lookup when its conditions leave one row.

With an instruct model configured, a question the templates cannot serve — a count ("how many of the
clubs are from Minsk"), or a superlative whose quantity no header names by the rules — gets SQL written
by the model from the table's schema and first rows (``query.sql.writer``), checked and run the same
way; a single value it returns (a count) is the answer, rows it returns are read as above.

It declines — and says why — when the question has no such cue, no table is among the evidence, no
header names the measured quantity (and no model wrote SQL that runs), the table is too large, or no
row has a value.
"""

from __future__ import annotations

import math
import re
from collections.abc import Sequence
from typing import Any, Protocol

from pydantic import BaseModel, Field

from index.aliases import AliasIndex
from index.graph import GraphIndex
from index.statements import StatementStore
from index.tables import TableStore
from query.llm.chat import Llm
from query.modes.base import Declined, Understanding
from query.modes.entity_sets import EntitySetPlanner, SetDeclined
from query.modes.set_answers import NAME, SetAnswerer
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from query.sql.guard import SqlFailed, SqlRejected, run_select
from query.sql.templates import ROW, TABLE, SqlQuery, position, rows_where, superlative, value_text
from query.sql.writer import SqlWriter
from query.tabulate.cells import without_marks
from query.tabulate.columns import answer_column, header_words, measure_column
from query.tabulate.filters import RowFilter, row_filters
from query.tabulate.frame import QuestionTable, typed_table
from query.tabulate.linked import full_name, start_date
from query.text import STOPWORDS, fold
from query.understand.entity_sets import set_question, set_readings
from query.understand.properties import PropertyLabels
from query.understand.table_ops import IMPLIED, ORDINALS, TableOp, asks_a_value, table_op
from schemas.query import QueryResult, TableCellValue, TableColumn, TableRowView, TableSql

LINKED_SHARE = 0.5
"""Share of a table's rows that must get a date from their linked pages before it is ranked by them."""


class TableSqlSettings(BaseModel):
    """Bounds of the table-sql mode (``[table_sql]`` in an engine config)."""

    retrieved_tables: bool = Field(
        True,
        description="also answer superlatives, positions and counts over a retrieved Wikipedia table (on: "
        "with the LLM reader it raised held-out OTT-QA cue-question EM from 12.7 to 18.7; the graph path "
        "is always on)",
    )
    estimate: float = Field(0.6, ge=0, le=1, description="router order when the question has a row cue")
    set_estimate: float = Field(
        0.995,
        ge=0,
        le=1,
        description="router order for a count or superlative over a set of KG entities: above the KG "
        "lookup's best (0.99), which would answer one member's value of the property",
    )
    table_from_top: int = Field(30, ge=1, description="final evidence rows searched for the table")
    max_rows: int = Field(2000, ge=2, description="a table larger than this is not loaded")
    display_rows: int = Field(50, ge=1, description="rows of the table kept in the result")
    hop_passages: int = Field(3, ge=0, description="lead passages of the chosen row's links read after it")
    subject_windows: int = Field(
        1,
        ge=0,
        description="of those, lead windows of the row subject's own page (the answer column's link) read "
        "first, before the pages its other cells link to",
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="significance level a statistics question's verdict is read at"
    )
    min_test_values: int = Field(
        5, ge=3, description="values per sample below which a statistics test is refused, not run"
    )


class TableSqlPipeline(Protocol):
    """What the mode needs of the engine (the modes room does not import it)."""

    def run(self, question: str, understanding: Understanding | None = None) -> Any: ...

    def read(self, staged: Any, reader: Any = None) -> Any: ...

    def result(self, staged: Any, read: Any) -> QueryResult: ...

    def hop_from(self, rows: list[EvidenceRow]) -> list[str]: ...


def pick_table(rows: Sequence[EvidenceRow]) -> str | None:
    """The table whose rows rank best among ``rows`` (each row's vote is 1 / its rank)."""
    votes: dict[str, float] = {}
    for rank, row in enumerate(rows, start=1):
        table_id = row.raw_provenance.get("table_id") if row.source_type == "table" else None
        if table_id:
            votes[table_id] = votes.get(table_id, 0.0) + 1.0 / rank
    return max(votes, key=lambda t: votes[t]) if votes else None


def pick_note(trace: TableSql, subject: str | None = None) -> str:
    """What the LLM reader is told about row [1]: the SQL chose it over the whole table, so the model
    reads the hop from it instead of ranking the rows it sees (a few of many) itself. Naming the row's
    subject turns "the country of the manufacturer with the most wins" into "the country of Ferrari":
    the model no longer has to resolve the description itself."""
    tie = f" ({trace.note})" if trace.note else ""
    named = (
        f" Its subject is {subject}: answer the question about {subject}."
        if subject
        else " Answer the question about that row's subject."
    )
    return (
        f"row [1] is the row of the table '{trace.title}' that SQL over all {trace.total_rows} rows picked "
        f"for '{trace.operation}'{tie}; the passages after it are the pages its cells link to.{named}"
    )


_SKIP_HEAD = frozenset(
    [
        "is",
        "was",
        "are",
        "were",
        "the",
        "a",
        "an",
        "to",
        "from",
        "last",
        "of",
        "most",
        "least",
        "highest",
        "lowest",
        "largest",
        "smallest",
    ]
)


def _head_noun(question: str, op: TableOp) -> str | None:
    """The noun a question asks for: "What is the second-to-last *club*", "Which *team*"; for "who",
    the answer noun of the operation ("who was the oldest *player*")."""
    words = [w for w in question.casefold().replace("-", " ").replace("?", " ").split() if w]
    if not words:
        return None
    if words[0] == "who":  # "who was the oldest player" is the row; "who founded the town …" is not
        return op.target[0] if op.target and words[1:2] and words[1] in _BE else None
    if words[0] not in ("which", "what"):
        return None
    for word in words[1:9]:
        if word in _SKIP_HEAD or word in ORDINALS or word in IMPLIED:
            continue
        return word
    return None


_BE = frozenset(["is", "was", "are", "were"])
_FULL_NAME = re.compile(r"\bfull (?:name|title)\b", re.I)
_DATE_ASKED = re.compile(r"^\s*when\b|\b(?:birth\s*date|date of birth|birthday)\b", re.I)


def _asks_a_date(question: str) -> bool:
    """ "When was …", "What is the birthdate of …": the answer is a date, not a row's subject."""
    return _DATE_ASKED.search(question) is not None


def _direct_column(question: str, table: QuestionTable, op: TableOp, exclude: str | None) -> str | None:
    """The column the question asks for by name: its head noun is the operation's answer noun and
    heads a column. "What is the nickname of the team with the most wins" is not direct (the head is
    "nickname", the answer noun "team"): the reader finds it on the team's page."""
    head = _head_noun(question, op)
    if head is None or not op.target or head != op.target[0]:
        return None
    column = answer_column(table, op, exclude)
    if column is None:
        return None
    if {head, head.rstrip("s")} & header_words(column.header) or _names_the_rows(question, head, table.title):
        return column.name
    return None


def _names_the_rows(question: str, head: str, title: str) -> bool:
    """ "Which *natural park* has the largest area?" over "… / Natural Parks": the question's noun is
    what the table lists, so the row's subject cell is the answer. The noun is the head with the word
    after it when that is not a verb ("protected landscape", "natural park"), matched at a word start of
    the title, so "park" alone does not match "Parker"."""
    words = [w for w in fold(question).replace("-", " ").split() if w.isalpha()]
    if head not in words:
        return False
    at = words.index(head)
    after = words[at + 1] if at + 1 < len(words) else ""
    phrase = [head, after] if after and after not in STOPWORDS and after not in _ROW_VERBS else [head]
    return re.search(rf"(?<!\w){re.escape(' '.join(phrase))}", fold(title)) is not None


_ROW_VERBS = frozenset({"won", "win", "wins", "scored", "holds", "held", "finished", "played"})
"""Verbs after "which <noun>" that are not stop words: "which team *won* the most"."""


_A_VALUE = "'how many' asks for a number stated about one thing (a value on its page), not a count"
_NO_WRITER = "a count needs a row condition the rules cannot read (no LLM configured to write SQL)"


class TableSqlMode:
    name = NAME

    def __init__(
        self,
        pipeline: TableSqlPipeline,
        store: EvidenceStore,
        tables: TableStore | None,
        settings: TableSqlSettings | None = None,
        llm: Llm | None = None,
        graph: GraphIndex | None = None,
        statements: StatementStore | None = None,
        properties: PropertyLabels | None = None,
        aliases: AliasIndex | None = None,
        index_version: str = "",
    ):
        self.index_version = index_version
        self.pipeline, self.store, self.tables, self.graph = pipeline, store, tables, graph
        self.settings = settings or TableSqlSettings()
        self.writer = SqlWriter(llm) if llm is not None else None
        self.sets = (
            SetAnswerer(
                EntitySetPlanner(graph, statements, properties, aliases),
                store,
                display_rows=self.settings.display_rows,
                alpha=self.settings.alpha,
                min_test_values=self.settings.min_test_values,
                index_version=index_version,
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
            return 0.0, _NO_WRITER
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
        op = table_op(understanding.question)
        if op is None or self.tables is None:
            return Declined(NAME, "no row operation this mode can run")
        value_question = op.kind == "count" and asks_a_value(understanding.question)
        if op.kind == "count" and not value_question and self.writer is None:
            return Declined(NAME, _NO_WRITER)
        staged = self.pipeline.run(understanding.question, understanding)
        final = [staged.rows[e] for e in staged.rankings["final"][: self.settings.table_from_top]]
        table_id = pick_table(final)
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
            return self._lookup(staged, table, op, understanding.question, _A_VALUE)
        measure = measure_column(table, op) if op.kind == "superlative" else None
        linked_note = None
        if measure is None and op.kind == "superlative" and "born" in op.implied:
            table, linked_note = self._with_start_dates(table, op)
            measure = measure_column(table, op)
        if measure is None and op.kind == "superlative" and op.k == 1:
            subject = answer_column(table, op)
            only = self._lookup(
                staged, table, op, understanding.question, "no column to rank by",
                exclude={subject.name} if subject is not None else set(),
            )  # fmt: skip
            if not isinstance(only, Declined):
                return only
        filters: list[RowFilter] = []
        if op.kind == "position" or measure is not None:
            if measure is not None:
                subject = answer_column(table, op, measure.column.name)
                skip = {measure.column.name, *([subject.name] if subject is not None else [])}
                filters = row_filters(table, understanding.question, skip)
                where = [f.condition() for f in filters]
                query = superlative(measure.column.name, measure.direction, op.k, where)
            else:
                subject = answer_column(table, op)
                filters = row_filters(table, understanding.question, {subject.name} if subject else set())
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
                understanding.question, schema, table.arrow, table.title, want_row=op.kind != "count"
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
            trace = self._trace(table, op, query, out.sql, [], value, None, measure, written_by)
            return self._value_answer(staged, value, trace)
        selected = [int(r[0]) for r in out.rows if r[0] is not None]
        if not selected or any(all(r.row_index != s for r in table.rows) for s in selected):
            return Declined(NAME, f"the SQL over {table_id} returned no row of the table")
        chosen = table.row(selected[0])
        note = f"{len(selected)} rows tie at this place; the first is read" if len(selected) > 1 else None
        value = value_text(out.rows[0][1]) if len(out.rows[0]) > 1 and op.kind == "superlative" else None
        trace = self._trace(table, op, query, out.sql, selected, value, note, measure, written_by, filters)
        ranked_date = None
        if measure is not None and measure.column.type == "date" and _asks_a_date(understanding.question):
            ranked_date = measure.column.name  # "When was the oldest player born?": the date it was ranked by
        return self._answer_from_row(
            staged, table, op, understanding.question, chosen, trace, note, exclude, ranked_date
        )

    def _answer_from_row(
        self,
        staged: Any,
        table: QuestionTable,
        op: TableOp,
        question: str,
        chosen: Any,
        trace: TableSql,
        note: str | None,
        exclude: str | None = None,
        direct: str | None = None,
    ) -> QueryResult:
        """The chosen row's answer: the cell the question asks for by its column (``direct``, else the
        head noun's), the full name the row's linked lead opens with, else the reader's answer from the
        row and the pages it links to."""
        direct = direct or _direct_column(question, table, op, exclude)
        if direct is not None and without_marks(table.cell_text(chosen.row_index, direct)):
            return self._direct_answer(staged, table, chosen, direct, trace, note)
        if _FULL_NAME.search(question) and (named := self._full_name(table, chosen, op, exclude)):
            return self._lead_answer(staged, chosen, named[1], named[0], trace, note)
        return self._read_from_row(staged, table, op, chosen, trace, note, exclude)

    def _lookup(
        self,
        staged: Any,
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
        trace = self._trace(table, op, query, out.sql, selected, None, None, None, None, filters)
        named = " and ".join(f.describe() for f in filters)
        only = f" (the only row, so the {op.cue} one)" if op.kind == "superlative" else ""
        trace = trace.model_copy(update={"operation": f"lookup: the row where {named}{only}"})
        return self._answer_from_row(staged, table, op, question, chosen, trace, None)

    def _leads(self, titles: list[str]) -> dict[str, EvidenceRow]:
        """Each page's first lead window, by page title (pages the index has no lead for are missing)."""
        if self.graph is None or not titles:
            return {}
        entities = self.graph.page_entities(titles)
        pairs = self.graph.lead_evidence(sorted(set(entities.values())))
        page_of = {evidence_id: entity_id for entity_id, evidence_id in pairs}
        windows: dict[str, EvidenceRow] = {}
        for row in sorted(
            self.store.get(list(page_of)),
            key=lambda r: (r.raw_provenance.get("passage_order") or 0, r.raw_provenance.get("window") or 0),
        ):
            windows.setdefault(page_of[row.evidence_id], row)  # each page's first lead window
        return {title: windows[entity] for title, entity in entities.items() if entity in windows}

    def _full_name(
        self, table: QuestionTable, chosen: Any, op: TableOp, exclude: str | None
    ) -> tuple[str, EvidenceRow] | None:
        """ "What is the full name of the youngest player": the name the lead of the chosen row's
        subject page opens with (Wikipedia's first sentence gives it in full), and that lead."""
        subject = answer_column(table, op, exclude)
        if subject is None:
            return None
        links = table.cell_links(chosen.row_index, subject.name)
        lead = self._leads(links[:1]).get(links[0]) if links else None
        if lead is None:
            return None
        short = " ".join(table.cell_text(chosen.row_index, subject.name).split())
        name = full_name(lead.text.removeprefix(f"{links[0]}: "), short or links[0])
        return (name, lead) if name else None

    def _with_start_dates(self, table: QuestionTable, op: TableOp) -> tuple[QuestionTable, str | None]:
        """``table`` with a "born / founded" date column read from the leads of the pages its subject
        column links to (``query.tabulate.linked``): "the oldest player" over a roster without ages.
        Unchanged, with the reason, when too few rows get a date."""
        subject = answer_column(table, op)
        if subject is None or self.graph is None:
            return table, "no column of linked pages to read dates from"
        links = {r.row_index: table.cell_links(r.row_index, subject.name) for r in table.rows}
        titles = {row_index: found[0] for row_index, found in links.items() if found}
        leads = self._leads(sorted(set(titles.values())))
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

    # -- the two ways to answer ---------------------------------------------------------------------

    def _focus(
        self, staged: Any, chosen_evidence: str | None, subject_pages: Sequence[str] = ()
    ) -> list[str]:
        """The chosen row's evidence, the lead passages its cells link to (the row's subject's first),
        then the rest of the final."""
        head: list[str] = []
        if chosen_evidence is not None:
            row = next(iter(self.store.get([chosen_evidence])), None)
            if row is not None:
                staged.rows[row.evidence_id] = row
                staged.added_by[row.evidence_id] = NAME
                head.append(row.evidence_id)
                hops = self._subject_first(self.pipeline.hop_from([row]), subject_pages)
                hops = hops[: self.settings.hop_passages]
                for hop_row in self.store.get(hops):
                    staged.rows[hop_row.evidence_id] = hop_row
                    staged.added_by[hop_row.evidence_id] = NAME
                    head.append(hop_row.evidence_id)
        keep = len(staged.rankings["final"])
        rest = [e for e in staged.rankings["final"] if e not in head]
        return (head + rest)[: max(keep, len(head))]

    def _subject_first(self, hops: list[str], subject_pages: Sequence[str]) -> list[str]:
        """The hop's lead windows with the row subject's first ``subject_windows`` leading. The hop
        ranks the windows of one row's links by evidence id, so a row whose "years won" cell links to
        eighteen Grand Prix pages would push the manufacturer's own lead — where "from what country" is
        answered — past the windows read."""
        if not subject_pages or self.graph is None or not hops:
            return hops
        entities = set(self.graph.page_entities(list(subject_pages)).values())
        rows = self.store.get(hops)
        own = [r.evidence_id for r in rows if r.entity_ids[:1] and r.entity_ids[0] in entities]
        first = own[: self.settings.subject_windows]
        return first + [e for e in hops if e not in first]

    def _direct_answer(
        self, staged: Any, table: QuestionTable, chosen: Any, column: str, trace: TableSql, note: str | None
    ) -> QueryResult:
        staged.rankings["final"] = self._focus(staged, chosen.evidence_id)
        answer = without_marks(table.cell_text(chosen.row_index, column))
        links = table.cell_links(chosen.row_index, column)
        noted = trace.model_copy(update={"note": note or (f"answer links to {links[0]}" if links else None)})
        supporting = [chosen.evidence_id] if chosen.evidence_id else []
        return self._stated(staged, answer, 0.45 if note else 0.9, supporting, noted)

    def _lead_answer(
        self, staged: Any, chosen: Any, lead: EvidenceRow, name: str, trace: TableSql, note: str | None
    ) -> QueryResult:
        """The full name the chosen row's linked lead opens with: the row and the lead lead the evidence."""
        staged.rows[lead.evidence_id] = lead
        staged.added_by.setdefault(lead.evidence_id, NAME)
        focus = self._focus(staged, chosen.evidence_id)
        staged.rankings["final"] = [
            *focus[:1],
            lead.evidence_id,
            *[e for e in focus[1:] if e != lead.evidence_id],
        ]
        noted = trace.model_copy(update={"note": note or f"the full name opens the lead of '{lead.title}'"})
        supporting = [e for e in (chosen.evidence_id, lead.evidence_id) if e]
        return self._stated(staged, name, 0.45 if note else 0.85, supporting, noted)

    def _value_answer(self, staged: Any, value: str, trace: TableSql) -> QueryResult:
        """A count or an aggregate: the value the SQL computed is the answer."""
        return self._stated(staged, value, 0.7, [], trace)

    def _stated(
        self, staged: Any, answer: str, confidence: float, supporting: list[str], trace: TableSql
    ) -> QueryResult:
        """A result whose answer the mode states itself (a cell, a lead's name, a computed value): the
        evidence as ``staged`` orders it, the candidate reader run only to fill the result's fields."""
        read = self.pipeline.read(staged, "candidates")
        result = self.pipeline.result(staged, read)
        return result.model_copy(
            update={
                "answer": answer,
                "answer_entity_id": None,
                "unknown": False,
                "confidence": confidence,
                "supporting_evidence_ids": supporting,
                "reader": NAME,
                "reading": None,
                "unit": None,
                "table": trace,
            }
        )

    def _read_from_row(
        self,
        staged: Any,
        table: QuestionTable,
        op: TableOp,
        chosen: Any,
        trace: TableSql,
        note: str | None,
        exclude: str | None = None,
    ) -> QueryResult:
        """The reader's answer from the chosen row, its subject's page and the pages it links to first."""
        column = answer_column(table, op, exclude)
        pages = table.cell_links(chosen.row_index, column.name) if column is not None else []
        subject = without_marks(table.cell_text(chosen.row_index, column.name)) if column is not None else ""
        staged.rankings["final"] = self._focus(staged, chosen.evidence_id, pages)
        if chosen.evidence_id is not None:
            staged.reader_note = pick_note(trace, subject or None)
        read = self.pipeline.read(staged)
        result = self.pipeline.result(staged, read)
        confidence = result.confidence * (0.5 if note else 1.0)
        return result.model_copy(update={"table": trace, "confidence": confidence})

    def _trace(
        self,
        table: QuestionTable,
        op: TableOp,
        query: SqlQuery,
        sql: str,
        selected: list[int],
        value: str | None,
        note: str | None,
        measure: Any,
        written_by: str | None = None,
        filters: Sequence[RowFilter] = (),
    ) -> TableSql:
        shown = table.rows[: self.settings.display_rows]
        for index in selected:  # the chosen rows are always shown, even past the display cap
            if all(r.row_index != index for r in shown):
                shown = [*shown, table.row(index)]
        what = " ".join(op.measure) or (measure.column.header if measure else "")
        if filters:
            what += " among the rows where " + " and ".join(f.describe() for f in filters)
        if written_by is not None:
            what += f" (SQL written by {written_by})"
        return TableSql(
            source=f"wikipedia table {table.table_id}",
            title=table.title,
            columns=[TableColumn(name=c.name, header=c.header, type=c.type) for c in table.columns],
            rows=[
                TableRowView(
                    row_index=r.row_index,
                    cells=[
                        TableCellValue(
                            text=table.cell_text(r.row_index, c.name),
                            links=table.cell_links(r.row_index, c.name),
                            provenance=table.cell_provenance(r.row_index, c.name),
                        )
                        for c in table.columns
                    ],
                    evidence_id=getattr(r, "evidence_id", None),
                )
                for r in shown
            ],
            total_rows=len(table.rows),
            operation=" ".join(f"{op.kind}: {op.cue} {what}".split()),
            sql=sql,
            params=list(query.params),
            selected=selected,
            value=value,
            note=note,
        )


__all__ = ["NAME", "TableSqlMode", "TableSqlPipeline", "TableSqlSettings", "pick_table"]
