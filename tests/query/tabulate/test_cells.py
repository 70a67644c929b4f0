"""Cell text to values, and tables to typed columns, on hand-written cells and real sample tables."""

from __future__ import annotations

import datetime as dt
import gzip
import json

import pytest

from query.tabulate.cells import column_type, read_cell, without_marks
from query.tabulate.frame import ROW_COLUMN, identifier, typed_table
from schemas.wikipedia import LinkRef, TableCell, TableRow
from tests.conftest import OTTQA


@pytest.mark.parametrize(
    ("text", "number", "kind"),
    [
        ("1,234", 1234.0, "number"),
        ("\u22125", -5.0, "number"),
        ("45%", 45.0, "number"),
        ("$3.2 million", 3.2e6, "number"),
        ("£2.5bn", 2.5e9, "number"),
        ("$12k", 12_000.0, "number"),
        ("3 m", 3.0, "number"),  # metres: a bare one-letter scale is a unit
        ("2,180 (est.)", 2180.0, "number"),
        ("1,234[a]", 1234.0, "number"),
        ("T2", 2.0, "rank"),
        ("1st", 1.0, "rank"),
        ("3=", 3.0, "rank"),
        ("1998", 1998.0, "year"),
        ("2004\u201305", 2004.0, "season"),
        ("1:23.456", 83.456, "time"),
        ("2:01:15", 7275.0, "time"),
        ("12 May 2004", 2004.0, "date"),
        ("\u2014", None, "empty"),
        ("n/a", None, "empty"),
        ("49ers", None, "text"),
        ("6\u20134", None, "text"),  # a score is not a number
        ("Team A", None, "text"),
    ],
)
def test_read_cell(text: str, number: float | None, kind: str) -> None:
    value = read_cell(text)
    assert (value.kind, value.number) == (kind, pytest.approx(number) if number is not None else None)


def test_dates_in_three_spellings_are_one_value() -> None:
    dates = {read_cell(t).date for t in ("12 May 2004", "May 12, 2004", "2004-05-12")}
    assert dates == {dt.date(2004, 5, 12)}
    assert read_cell("31 February 2004").kind == "text"  # not a day: no guess


@pytest.mark.parametrize(
    ("text", "answer"),
    [
        ("† Mount Pleasant", "Mount Pleasant"),
        ("Ford *", "Ford"),
        ("Ichamati ( Ichhamati ) River [ 2 ]", "Ichamati ( Ichhamati ) River"),  # a name's parentheses stay
        ("Bologna", "Bologna"),
        ("C#", "C#"),  # a name, not a note
    ],
)
def test_an_answer_from_a_cell_drops_its_note_marks(text: str, answer: str) -> None:
    assert without_marks(text) == answer


def test_a_column_is_typed_by_most_of_its_cells() -> None:
    assert column_type([read_cell(t) for t in ["1", "2", "T3", "\u2014", "5"]]) == "number"
    assert column_type([read_cell(t) for t in ["Bears", "49ers", "Rams", "Jets"]]) == "text"
    assert column_type([read_cell(t) for t in ["1 May 2001", "2 June 2003", "2004"]]) == "number"
    assert column_type([read_cell(t) for t in ["1 May 2001", "2 June 2003", "3 July 2005"]]) == "date"
    assert column_type([read_cell("")]) == "text"


def test_identifiers_are_sql_safe_and_unique() -> None:
    taken: set[str] = {ROW_COLUMN}
    names = [
        identifier(h, taken)
        for h in ["Games played", "Games played", "Pos.", "1st leg", "Año", "", "row_index"]
    ]
    assert names == ["games_played", "games_played_2", "pos", "c_1st_leg", "ano", "column", "row_index_"]


def _row(index: int, *cells: tuple[str, str]) -> TableRow:
    return TableRow(
        table_id="T_0",
        page_id=1,
        page_title="T",
        section_path=["Results"],
        table_index=0,
        caption=None,
        row_index=index,
        cells=[
            TableCell(column=i, header=h, text=t, links=[LinkRef(target=t, anchor=t)] if i == 0 else [])
            for i, (h, t) in enumerate(cells)
        ],
    )


def test_typed_table_keeps_row_order_types_and_cells() -> None:
    rows = [
        _row(1, ("Team", "Rams"), ("Points", "1,020"), ("Founded", "1936")),
        _row(0, ("Team", "Bears"), ("Points", "\u2014"), ("Founded", "1919")),
    ]
    table = typed_table(rows)
    assert [c.type for c in table.columns] == ["text", "number", "number"]
    assert table.arrow.column_names == [ROW_COLUMN, "team", "points", "founded"]
    assert table.arrow.to_pylist() == [
        {ROW_COLUMN: 0, "team": "Bears", "points": None, "founded": 1919.0},
        {ROW_COLUMN: 1, "team": "Rams", "points": 1020.0, "founded": 1936.0},
    ]
    assert table.cell_text(1, "points") == "1,020" and table.cell_links(0, "team") == ["Bears"]
    assert table.title == "T / Results"
    with pytest.raises(ValueError):
        typed_table([])


def test_real_ottqa_tables_type_their_numeric_columns() -> None:
    with gzip.open(OTTQA / "tables.json.gz", "rt") as f:
        raw = json.load(f)
    typed = numeric = 0
    for table_id, t in list(raw.items())[:60]:
        rows = [
            TableRow(
                table_id=table_id,
                page_id=0,
                page_title=t["title"],
                section_path=[t["section_title"]],
                table_index=0,
                caption=None,
                row_index=i,
                cells=[
                    TableCell(column=j, header=h[0], text=c[0], links=[])
                    for j, (h, c) in enumerate(zip(t["header"], r, strict=True))
                ],
            )
            for i, r in enumerate(t["data"])
        ]
        table = typed_table(rows)
        assert table.arrow.num_rows == len(t["data"])
        for column in table.columns:
            texts = [r[column.position][0] for r in t["data"]]
            digits = sum(x.replace(",", "").replace(".", "", 1).strip().isdigit() for x in texts)
            if digits == len(texts):  # every cell a plain number: it must be typed as one
                typed += 1
                numeric += column.type == "number"
    assert typed > 20 and numeric == typed
