"""Which column a question ranks by, and which column answers it, chosen by the columns' headers.

A superlative names its quantity in the question's words ("the most *top 4 finishes*"), a table in
its header ("Top 4"), often abbreviated ("Pts", "GP", "W"): the measure column is the typed column
whose header shares the most of those words, with the usual sports and statistics abbreviations
spelled out. A word like "oldest" names no quantity but implies one ("Born", "Age", "Founded"), and
its direction depends on the column: the largest age, the earliest birth date or year. The answer
column is the one headed by the question's answer noun ("which *team*"), else the table's first
text column with links (the subject of each row), else its first text column. No column that shares
a word: no choice, and the mode declines rather than ranking by a column that merely exists.
"""

from __future__ import annotations

from dataclasses import dataclass

from query.lexicon import (
    BETTER,
    HEADER_ABBREVIATIONS,
    HEADER_SYNONYMS,
    PLACING_HEADER_WORDS,
    SEARCH_STOPWORDS,
)
from query.tabulate.frame import Column, QuestionTable
from query.text import tokens
from query.understand.table_ops import Direction, TableOp


@dataclass(frozen=True)
class MeasureChoice:
    column: Column
    direction: Direction
    matched: tuple[str, ...]  # the question's words the header shares


def _stem(word: str) -> str:
    return word[:-1] if len(word) > 3 and word.endswith("s") and not word.endswith("ss") else word


def header_words(header: str) -> set[str]:
    """A header's words, abbreviations spelled out and plural -s dropped: "Pts" → {"pts", "point"}."""
    out = set()
    for token in tokens(header):
        out.add(_stem(token))
        if token in HEADER_ABBREVIATIONS:
            out.add(_stem(HEADER_ABBREVIATIONS[token]))
    return out


def _question_words(words: tuple[str, ...]) -> set[str]:
    out = set()
    for word in words:
        if word in SEARCH_STOPWORDS:
            continue
        out.add(_stem(word))
        out.update(_stem(s) for s in HEADER_SYNONYMS.get(word, ()))
    return out


def _looks_like_years(table: QuestionTable, column: Column) -> bool:
    values = [v for v in table.arrow.column(column.name).to_pylist() if v is not None]
    return bool(values) and all(float(v).is_integer() and 1000 <= v <= 2100 for v in values)


def _tenure_for_age(op: TableOp, column: Column, shared: tuple[str, ...]) -> bool:
    """A "Years" column ("2007-2010": years at the club) matched only by the "year" an "oldest" or
    "youngest" implies: a span of time at something, not when the row's subject was born or founded."""
    return "born" in op.implied and shared == ("year",) and "years" in tokens(column.header)


def measure_column(table: QuestionTable, op: TableOp) -> MeasureChoice | None:
    """The typed column ``op`` ranks by, and the direction to rank it in; None when no header fits."""
    typed = [c for c in table.columns if c.type in ("number", "date")]
    wanted = _question_words(op.measure) if op.measure else set(op.implied)
    best: tuple[float, int, Column, tuple[str, ...]] | None = None
    for order, column in enumerate(typed):
        shared = tuple(sorted(wanted & header_words(column.header)))
        if not shared or _tenure_for_age(op, column, shared):
            continue
        score = len(shared) / max(len(header_words(column.header)), 1)  # "Top 4" over "Top 10 finishes"
        key = (len(shared) + score, -order, column, shared)
        if best is None or key[:2] > best[:2]:
            best = key
    if best is None or op.direction is None:
        return None
    column = best[2]
    dated = column.type == "date" or _looks_like_years(table, column)
    direction = (op.date_direction or op.direction) if dated else op.direction
    if op.cue in BETTER and header_words(column.header) & PLACING_HEADER_WORDS:
        direction = BETTER[op.cue]
    return MeasureChoice(column=column, direction=direction, matched=best[3])


def answer_column(table: QuestionTable, op: TableOp, exclude: str | None = None) -> Column | None:
    """The column whose cell answers: headed by the answer noun, else the rows' linked subject."""
    text = [c for c in table.columns if c.type == "text" and c.name != exclude]
    if not text:
        return None
    wanted = _question_words(op.target)
    for column in text:
        if wanted & header_words(column.header):
            return column
    first_rows = [r.row_index for r in table.rows[:20]]
    linked = [c for c in text if any(table.cell_links(i, c.name) for i in first_rows)]
    return (linked or text)[0]
