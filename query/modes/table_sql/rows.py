"""How the table-sql mode answers from the row its SQL chose (over a retrieved table).

- a "which/what <noun>" question whose noun heads a column is answered by that cell of the row, and one
  whose noun is what the table lists ("which *natural park*" over "… / Natural Parks") by the row's
  subject cell;
- a "full name" question by the name the lead of the row's linked page opens with;
- a count or an aggregate by the value the SQL computed;
- any other question is read from the chosen row first, with the lead passages of the pages its cells
  link to after it (the hop; the row subject's own page first), then the rest of the evidence: the
  reader finds "the nickname of the team with the most wins" on the team's page. An LLM reader is told
  that row [1] is the SQL's pick over the whole table (it sees a few rows of it, and would otherwise rank
  them itself), and the subject's name ("answer the question about Ferrari").

Each way makes a new run with the row first (``StagedRun.focused``); the retrieval it was given is left
as it was.
"""

from __future__ import annotations

from collections.abc import Sequence

from index.graph import GraphIndex
from query.modes.table_sql.settings import NAME, TableSqlSettings
from query.pipeline import Pipeline, StagedRun
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from query.sql.templates import SqlQuery
from query.tabulate.cells import without_marks
from query.tabulate.columns import MeasureChoice, answer_column, header_words
from query.tabulate.filters import RowFilter
from query.tabulate.frame import QuestionTable
from query.tabulate.linked import full_name
from query.understand.row_questions import asks_full_name, head_noun, names_the_rows
from query.understand.table_ops import TableOp
from schemas.query import QueryResult, TableCellValue, TableColumn, TableRowView, TableSql
from schemas.wikipedia import IndexedTableRow


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


def direct_column(question: str, table: QuestionTable, op: TableOp, exclude: str | None) -> str | None:
    """The column the question asks for by name: its head noun is the operation's answer noun and
    heads a column. "What is the nickname of the team with the most wins" is not direct (the head is
    "nickname", the answer noun "team"): the reader finds it on the team's page."""
    head = head_noun(question, op)
    if head is None or not op.target or head != op.target[0]:
        return None
    column = answer_column(table, op, exclude)
    if column is None:
        return None
    if {head, head.rstrip("s")} & header_words(column.header) or names_the_rows(question, head, table.title):
        return column.name
    return None


class RowAnswers:
    """The answer from one chosen row of a question's table; safe for concurrent use."""

    def __init__(
        self, pipeline: Pipeline, store: EvidenceStore, graph: GraphIndex | None, settings: TableSqlSettings
    ):
        self.pipeline, self.store, self.graph, self.settings = pipeline, store, graph, settings

    def from_row(
        self,
        staged: StagedRun,
        table: QuestionTable,
        op: TableOp,
        question: str,
        chosen: IndexedTableRow,
        trace: TableSql,
        note: str | None,
        exclude: str | None = None,
        direct: str | None = None,
    ) -> QueryResult:
        """The chosen row's answer: the cell the question asks for by its column (``direct``, else the
        head noun's), the full name the row's linked lead opens with, else the reader's answer from the
        row and the pages it links to."""
        direct = direct or direct_column(question, table, op, exclude)
        if direct is not None and without_marks(table.cell_text(chosen.row_index, direct)):
            return self._direct_answer(staged, table, chosen, direct, trace, note)
        if asks_full_name(question) and (named := self.full_name(table, chosen, op, exclude)):
            return self._lead_answer(staged, chosen, named[1], named[0], trace, note)
        return self._read_from_row(staged, table, op, chosen, trace, note, exclude)

    def value(self, staged: StagedRun, value: str, trace: TableSql) -> QueryResult:
        """A count or an aggregate: the value the SQL computed is the answer."""
        return self._stated(staged, value, 0.7, [], trace)

    def leads(self, titles: list[str]) -> dict[str, EvidenceRow]:
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

    def full_name(
        self, table: QuestionTable, chosen: IndexedTableRow, op: TableOp, exclude: str | None
    ) -> tuple[str, EvidenceRow] | None:
        """ "What is the full name of the youngest player": the name the lead of the chosen row's
        subject page opens with (Wikipedia's first sentence gives it in full), and that lead."""
        subject = answer_column(table, op, exclude)
        if subject is None:
            return None
        links = table.cell_links(chosen.row_index, subject.name)
        lead = self.leads(links[:1]).get(links[0]) if links else None
        if lead is None:
            return None
        short = " ".join(table.cell_text(chosen.row_index, subject.name).split())
        name = full_name(lead.text.removeprefix(f"{links[0]}: "), short or links[0])
        return (name, lead) if name else None

    # -- the row first ----------------------------------------------------------------------------------

    def _focus(
        self, staged: StagedRun, chosen_evidence: str | None, subject_pages: Sequence[str] = ()
    ) -> tuple[list[str], dict[str, EvidenceRow]]:
        """The chosen row's evidence, the lead passages its cells link to (the row's subject's first),
        then the rest of the final; and the rows this brings in."""
        head: list[str] = []
        added: dict[str, EvidenceRow] = {}
        if chosen_evidence is not None:
            row = next(iter(self.store.get([chosen_evidence])), None)
            if row is not None:
                added[row.evidence_id] = row
                head.append(row.evidence_id)
                hops = self._subject_first(self.pipeline.hop_from([row]), subject_pages)
                hops = hops[: self.settings.hop_passages]
                for hop_row in self.store.get(hops):
                    added[hop_row.evidence_id] = hop_row
                    head.append(hop_row.evidence_id)
        keep = len(staged.final)
        rest = [e for e in staged.final if e not in head]
        return (head + rest)[: max(keep, len(head))], added

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
        self,
        staged: StagedRun,
        table: QuestionTable,
        chosen: IndexedTableRow,
        column: str,
        trace: TableSql,
        note: str | None,
    ) -> QueryResult:
        final, added = self._focus(staged, chosen.evidence_id)
        focused = staged.focused(final, rows=added, by=NAME)
        answer = without_marks(table.cell_text(chosen.row_index, column))
        links = table.cell_links(chosen.row_index, column)
        noted = trace.model_copy(update={"note": note or (f"answer links to {links[0]}" if links else None)})
        supporting = [chosen.evidence_id] if chosen.evidence_id else []
        return self._stated(focused, answer, 0.45 if note else 0.9, supporting, noted)

    def _lead_answer(
        self,
        staged: StagedRun,
        chosen: IndexedTableRow,
        lead: EvidenceRow,
        name: str,
        trace: TableSql,
        note: str | None,
    ) -> QueryResult:
        """The full name the chosen row's linked lead opens with: the row and the lead lead the evidence."""
        focus, added = self._focus(staged, chosen.evidence_id)
        final = [*focus[:1], lead.evidence_id, *[e for e in focus[1:] if e != lead.evidence_id]]
        focused = staged.focused(final, rows={lead.evidence_id: lead, **added}, by=NAME)
        noted = trace.model_copy(update={"note": note or f"the full name opens the lead of '{lead.title}'"})
        supporting = [e for e in (chosen.evidence_id, lead.evidence_id) if e]
        return self._stated(focused, name, 0.45 if note else 0.85, supporting, noted)

    def _stated(
        self, staged: StagedRun, answer: str, confidence: float, supporting: list[str], trace: TableSql
    ) -> QueryResult:
        """A result whose answer the mode states itself (a cell, a lead's name, a computed value): the
        evidence as ``staged`` orders it, the candidate reader run only to fill the result's fields."""
        result = self.pipeline.result(staged, self.pipeline.read(staged, self.pipeline.candidates))
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
        staged: StagedRun,
        table: QuestionTable,
        op: TableOp,
        chosen: IndexedTableRow,
        trace: TableSql,
        note: str | None,
        exclude: str | None = None,
    ) -> QueryResult:
        """The reader's answer from the chosen row, its subject's page and the pages it links to first."""
        column = answer_column(table, op, exclude)
        pages = table.cell_links(chosen.row_index, column.name) if column is not None else []
        subject = without_marks(table.cell_text(chosen.row_index, column.name)) if column is not None else ""
        final, added = self._focus(staged, chosen.evidence_id, pages)
        told = pick_note(trace, subject or None) if chosen.evidence_id is not None else None
        focused = staged.focused(final, rows=added, by=NAME, note=told)
        result = self.pipeline.result(focused, self.pipeline.read(focused))
        confidence = result.confidence * (0.5 if note else 1.0)
        return result.model_copy(update={"table": trace, "confidence": confidence})

    def trace(
        self,
        table: QuestionTable,
        op: TableOp,
        query: SqlQuery,
        sql: str,
        selected: list[int],
        value: str | None,
        note: str | None,
        measure: MeasureChoice | None,
        written_by: str | None = None,
        filters: Sequence[RowFilter] = (),
    ) -> TableSql:
        """What the user sees of the table: its rows (the chosen ones always), the operation and the SQL."""
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
