"""Which column a question ranks by, and which way (``query.tabulate.columns.measure_column``)."""

from __future__ import annotations

import pytest

from query.tabulate.columns import measure_column
from query.tabulate.frame import typed_table
from query.understand.table_ops import table_op
from schemas.wikipedia import TableCell, TableRow

# A seeded draw as OTT-QA tables write it (1996 tennis entries): seed 1 is the best.
ENTRIES = [("Steffi Graf", "1", "1"), ("Iva Majoli", "7", "5"), ("Anke Huber", "10", "9")]


def _table():
    rows = []
    for index, (player, rank, seed) in enumerate(ENTRIES):
        cells = [
            TableCell(column=position, header=header, text=text, links=[])
            for position, (header, text) in enumerate([("Player", player), ("Rank", rank), ("Seed", seed)])
        ]
        rows.append(
            TableRow(
                table_id="t",
                page_id=1,
                page_title="P",
                section_path=[],
                table_index=0,
                caption=None,
                row_index=index,
                cells=cells,
            )
        )
    return typed_table(rows)


@pytest.mark.parametrize(
    ("question", "header", "direction"),
    [
        ("Which player had the best seed?", "Seed", "min"),
        ("Who was the top seed of the draw?", "Seed", "min"),
        ("Which player had the worst rank?", "Rank", "max"),
        ("Which player had the highest seed?", "Seed", "max"),  # literal: the largest number
        ("Which player had the lowest rank?", "Rank", "min"),
    ],
)
def test_better_and_worse_over_a_place_column_rank_the_other_way(question, header, direction) -> None:
    op = table_op(question)
    assert op is not None
    chosen = measure_column(_table(), op)
    assert chosen is not None and chosen.column.header == header and chosen.direction == direction
