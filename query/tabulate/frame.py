"""A Wikipedia table as typed Arrow columns, ready for SQL, with every cell's text and links kept.

``typed_table`` turns a table's rows (``schemas.wikipedia.TableRow``, from the index's tables stage)
into a ``QuestionTable``: one SQL-safe column name per header, each column typed by what its cells
hold (``query.tabulate.cells``), a ``row_index`` column so a selected row leads back to its cells,
and the cells' own text and links for the answer, the display and the hop to a linked page.
"""

from __future__ import annotations

import datetime as dt
import re
import unicodedata
from dataclasses import dataclass, field

import pyarrow as pa

from query.tabulate.cells import CellValue, ColumnType, column_type, read_cell
from schemas.wikipedia import TableRow

ROW_COLUMN = "row_index"
_IDENT = re.compile(r"[^0-9a-z]+")


@dataclass(frozen=True)
class Column:
    name: str  # the SQL identifier
    header: str  # as the table wrote it
    type: ColumnType
    position: int


@dataclass
class QuestionTable:
    """One table as SQL sees it (``arrow``) and as a reader sees it (``rows``: cell text and links)."""

    table_id: str
    title: str
    columns: list[Column]
    arrow: pa.Table
    rows: list[TableRow] = field(repr=False)
    derived: dict[str, dict[int, tuple[str, str]]] = field(default_factory=dict, repr=False)
    """Columns read from elsewhere (``with_column``): row index → (cell text, where it was read)."""

    def column(self, name: str) -> Column:
        return next(c for c in self.columns if c.name == name)

    def with_column(self, header: str, values: dict[int, tuple[dt.date, str, str]]) -> QuestionTable:
        """This table with a date column ``header`` added: row index → (date, text, provenance); rows
        without a value are NULL."""
        name = identifier(header, {c.name for c in self.columns} | {ROW_COLUMN})
        order = self.arrow.column(ROW_COLUMN).to_pylist()
        dates = pa.array([values[i][0] if i in values else None for i in order], pa.date32())
        column = Column(name=name, header=header, type="date", position=-1 - len(self.derived))
        cells = {i: (text, where) for i, (_, text, where) in values.items()}
        return QuestionTable(
            table_id=self.table_id,
            title=self.title,
            columns=[*self.columns, column],
            arrow=self.arrow.append_column(name, dates),
            rows=self.rows,
            derived={**self.derived, name: cells},
        )

    def row(self, row_index: int) -> TableRow:
        """The row whose ``row_index`` is this (the SQL's ``row_index`` column), not the n-th row."""
        return next(r for r in self.rows if r.row_index == row_index)

    def cell_text(self, row_index: int, column: str) -> str:
        if column in self.derived:
            return self.derived[column].get(row_index, ("", ""))[0]
        position = self.column(column).position
        return next((c.text for c in self.row(row_index).cells if c.column == position), "")

    def cell_links(self, row_index: int, column: str) -> list[str]:
        position = self.column(column).position
        return [link.target for c in self.row(row_index).cells if c.column == position for link in c.links]

    def cell_provenance(self, row_index: int, column: str) -> str | None:
        """Where a derived cell was read (None for the table's own cells: the row is their provenance)."""
        found = self.derived.get(column, {}).get(row_index)
        return found[1] if found else None

    def schema_text(self) -> str:
        """The columns as a prompt or a user reads them: name, type and the header they came from."""
        return ", ".join(f"{c.name} {c.type.upper()} -- {c.header!r}" for c in self.columns)


def identifier(header: str, taken: set[str]) -> str:
    """A lower-case ASCII identifier for ``header``, unique in ``taken``: "Games played" → games_played."""
    ascii_text = unicodedata.normalize("NFKD", header).encode("ascii", "ignore").decode()
    base = _IDENT.sub("_", ascii_text.casefold()).strip("_") or "column"
    if base[0].isdigit():
        base = f"c_{base}"
    if base == ROW_COLUMN:
        base = f"{base}_"
    name, n = base, 2
    while name in taken:
        name, n = f"{base}_{n}", n + 1
    taken.add(name)
    return name


def typed_table(rows: list[TableRow]) -> QuestionTable:
    """The rows of one table (in row order) as a typed ``QuestionTable``; raises on no rows."""
    if not rows:
        raise ValueError("a table needs at least one row")
    ordered = sorted(rows, key=lambda r: r.row_index)
    headers: dict[int, str] = {}
    for row in ordered:
        for cell in row.cells:
            headers.setdefault(cell.column, " ".join(cell.header.split()))
    taken: set[str] = {ROW_COLUMN}
    columns: list[Column] = []
    data: dict[str, pa.Array] = {ROW_COLUMN: pa.array([r.row_index for r in ordered], pa.int32())}
    for position in sorted(headers):
        texts = [next((c.text for c in r.cells if c.column == position), "") for r in ordered]
        values = [read_cell(t) for t in texts]
        kind = column_type(values)
        name = identifier(headers[position] or f"column {position + 1}", taken)
        columns.append(Column(name=name, header=headers[position], type=kind, position=position))
        data[name] = _array(kind, texts, values)
    first = ordered[0]
    title = " / ".join([first.page_title, *first.section_path, *([first.caption] if first.caption else [])])
    return QuestionTable(
        table_id=first.table_id, title=title, columns=columns, arrow=pa.table(data), rows=ordered
    )


def _array(kind: ColumnType, texts: list[str], values: list[CellValue]) -> pa.Array:
    if kind == "number":
        return pa.array([v.number for v in values], pa.float64())
    if kind == "date":
        return pa.array([v.date if v.kind == "date" else None for v in values], pa.date32())
    return pa.array([" ".join(t.split()) or None for t in texts], pa.string())
