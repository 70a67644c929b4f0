"""Row conditions a question states by naming a cell value: "the oldest *German* athlete who won
*silver*", "the youngest *Gold* medal athlete".

A superlative ranks the rows the question is about, not every row of the table: "Who is the oldest
athlete who won silver?" over a medal table asks for the oldest of the silver rows. The rule: a text
column with a handful of distinct values (a category: medal, sex, event, nationality) whose one value
is written in the question as a whole word or phrase conditions the ranking on that value. A column
with many distinct values (names, titles) is not a category, and a value the table's own title holds
describes every row, so neither conditions it. The values are matched here and bound as SQL
parameters; the question's text never reaches the SQL.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from query.tabulate.frame import QuestionTable
from query.text import STOPWORDS, fold

MAX_CATEGORIES = 12
"""A text column with more distinct values than this is a name or a title, not a category."""
MIN_VALUE_CHARS = 3


@dataclass(frozen=True)
class RowFilter:
    column: str  # SQL name
    header: str
    value: str  # the cell text, as the table writes it


def row_filters(
    table: QuestionTable, question: str, exclude: set[str] | frozenset[str] = frozenset()
) -> list[RowFilter]:
    """The conditions ``question`` names by value, at most one per category column, none on ``exclude``."""
    asked = fold(question)
    title = fold(table.title)
    found: list[RowFilter] = []
    for column in table.columns:
        if column.type != "text" or column.name in exclude or column.name in table.derived:
            continue
        values = {v for v in table.arrow.column(column.name).to_pylist() if v}
        if not 2 <= len(values) <= MAX_CATEGORIES:
            continue
        named = [v for v in values if _named(fold(v), asked) and fold(v) not in title]
        if len(named) == 1:
            found.append(RowFilter(column.name, column.header, named[0]))
    return found


def _named(value: str, asked: str) -> bool:
    if len(value) < MIN_VALUE_CHARS or value in STOPWORDS or value.isdigit():
        return False
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", asked) is not None


__all__ = ["MAX_CATEGORIES", "RowFilter", "row_filters"]
