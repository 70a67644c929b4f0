"""Dates read from the leads of linked pages (``query.tabulate.linked``), and the column they make."""

from __future__ import annotations

import datetime as dt

import pytest

from query.tabulate.frame import typed_table
from query.tabulate.linked import full_name, start_date
from schemas.wikipedia import LinkRef, TableCell, TableRow

LEADS = [
    # the OTT-QA passages' own spacing: "August 24 , 1949", "( born …"
    ("Annabel Ellwood ( born 2 February 1978 in Canberra ) is a former tennis player", dt.date(1978, 2, 2)),
    ("Anna Lee Fisher ( née Tingle ) ( born August 24 , 1949 ) is an American chemist", dt.date(1949, 8, 24)),
    ("George Melly ( 17 August 1926 - 5 July 2007 ) was an English singer", dt.date(1926, 8, 17)),
    ("Ian McCaskill ( born John McCaskill ; 28 July 1938 - 10 December 2016 ) was", dt.date(1938, 7, 28)),
    ("Arantxa ( pronunciation : [ a\u02c8\u027ea ] ; born 18 December 1971 ) is", dt.date(1971, 12, 18)),
    ("Y ( born 1949 ) is a painter", dt.date(1949, 1, 1)),
    ("Alpha Xi Delta ( ΑΞΔ ) is a fraternity founded on April 17 , 1893 at Lombard", dt.date(1893, 4, 17)),
    ("Sheffield Football Club is an English club . Founded in 1857 , it is the oldest", dt.date(1857, 1, 1)),
]


@pytest.mark.parametrize(("lead", "expected"), LEADS)
def test_a_birth_or_founding_date_is_read_from_the_lead(lead: str, expected: dt.date) -> None:
    found = start_date(lead)
    assert found is not None and found[0] == expected


@pytest.mark.parametrize(
    "lead",
    [
        "Alka Tomar is an Indian wrestler . Coached by Jabbar Singh , she won in 2010",  # a later date only
        "The club ( 2004\u201305 season ) finished third",  # a season is not a start
        "Zed was founded by Bob in 1901 .",  # the date is not right after the verb
        "",
    ],
)
def test_a_lead_that_states_no_start_gives_none(lead: str) -> None:
    assert start_date(lead) is None


def _row(index: int, name: str) -> TableRow:
    cell = TableCell(column=0, header="Name", text=name, links=[LinkRef(target=name, anchor=name)])
    return TableRow(
        table_id="t", page_id=1, page_title="P", section_path=[], table_index=0, caption=None,
        row_index=index, cells=[cell],
    )  # fmt: skip


def test_a_linked_column_is_a_typed_date_column_with_its_provenance() -> None:
    table = typed_table([_row(0, "A"), _row(1, "B"), _row(2, "C")])
    added = table.with_column("born (lead)", {0: (dt.date(1950, 1, 2), "2 January 1950", "lead of 'A'")})
    column = added.columns[-1]
    assert column.type == "date"
    assert added.arrow.column(column.name).to_pylist() == [dt.date(1950, 1, 2), None, None]
    assert added.cell_text(0, column.name) == "2 January 1950"
    assert added.cell_provenance(0, column.name) == "lead of 'A'"
    assert added.cell_text(1, column.name) == "" and added.cell_provenance(1, column.name) is None
    assert added.cell_links(0, column.name) == [] and added.cell_text(0, "name") == "A"
    assert table.columns == added.columns[:-1]  # the original is unchanged


@pytest.mark.parametrize(
    ("lead", "short", "expected"),
    [
        ("Louis Rohan Duleep Mendis ( born 25 August 1952 ) , known as Duleep Mendis , is a", "Duleep Mendis",
         "Louis Rohan Duleep Mendis"),
        # the roster marks its captain: "( c )" is no part of the name
        ("Louis Rohan Duleep Mendis ( born 25 August 1952 ) , known as Duleep Mendis , is a",
         "Duleep Mendis ( c )", "Louis Rohan Duleep Mendis"),
        ("Arjuna Ranatunga ( born 1 December 1963 ) is a", "Arjuna Ranatunga ( vc ) †", None),
        ("Donald Mark Benton ( born April 8 , 1957 ) is an American", "Don Benton", "Donald Mark Benton"),
        ("Fernando Büttenbender Prass ( born 9 July 1978 in Porto Alegre ) is a", "Fernando Prass",
         "Fernando Büttenbender Prass"),
        ("Michael Flynn ( born 17 October 1980 ) is a Welsh footballer", "Michael Flynn", None),  # no more
        ("The club was founded in 1903 by", "Bradford City", None),  # a lead that opens with no name
        ("Hope Ini Ita Akpan is a professional footballer", "Jack Smith", None),  # another person's name
    ],
)  # fmt: skip
def test_full_name_is_the_longer_name_a_lead_opens_with(lead, short, expected):
    assert full_name(lead, short) == expected
