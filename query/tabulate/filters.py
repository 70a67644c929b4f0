"""Row conditions a question states by naming a cell value: "the oldest *German* athlete who won
*silver*", "the youngest *Gold* medal athlete".

A superlative ranks the rows the question is about, not every row of the table: "Who is the oldest
athlete who won silver?" over a medal table asks for the oldest of the silver rows. The rule: a text
column with a handful of distinct values (a category: medal, sex, event, nationality) whose one value
is written in the question as a whole word or phrase conditions the ranking on that value. A column
with many distinct values (names, titles) is not a category, and a value the table's own title holds
describes every row, so neither conditions it. The values are matched here and bound as SQL
parameters; the question's text never reaches the SQL.

A column of many values (a tournament, a venue) can still be named by part of a cell: "the earliest
final *in Ecuador*" over tournaments "Ecuador F3", "Venezuela F4", …; "the last game played at the
*Navy-Marine Corps Memorial Stadium*" over sites "Navy-Marine Corps Memorial Stadium Annapolis, MD".
A name the question writes (a run of capitalised words, not in the title or a header) that a few of
one column's cells hold as whole words — at most half of the rows, so it selects — conditions the
operation on those rows (``mentions``: their row indexes, bound as one list parameter). Names are
matched, never values guessed, so a question naming nothing in the table ranks it whole.

A year works the same way over a column of dates or years: "the last player of the month *in 2008*"
over Year cells "2007", "2008", "2009" is the last of the 2008 rows. Only a column whose header names a
time ("Year", "Season", "Date", "Released") or whose cells are dates is matched, so a year inside a
plot summary conditions nothing; a year in a range or after "since", "before", … ("from
1988 to 2013", "since 1952") states an interval, not a row, and is left out.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from query.lexicon import (
    CELL_NAME_PARTICLES,
    INTERVAL_WORDS,
    RANGE_MARKS,
    SEARCH_STOPWORDS,
    TIME_HEADER_WORDS,
)
from query.tabulate.columns import header_words
from query.tabulate.frame import ROW_COLUMN, QuestionTable
from query.text import fold

MAX_CATEGORIES = 12
"""A text column with more distinct values than this is a name or a title, not a category."""
MIN_VALUE_CHARS = 3
MAX_MENTION_SHARE = 0.5
"""A name held by more than this share of a column's rows describes the table, not a condition."""
_EDGE_PUNCTUATION = ',;:?!()[]"“”'


@dataclass(frozen=True)
class RowFilter:
    column: str  # SQL name
    header: str
    value: str  # the cell text, as the table writes it; for ``mentions``, the name the question writes
    mentions: tuple[int, ...] = ()
    """Set for a name held inside cells: the row indexes whose cell holds it (the condition is those rows)."""

    def condition(self) -> tuple[str, object]:
        """(column, value) for the SQL templates: a cell equal to the value, or the rows named."""
        return (ROW_COLUMN, list(self.mentions)) if self.mentions else (self.column, self.value)

    def describe(self) -> str:
        verb = "mentions" if self.mentions else "is"
        return f"{self.header} {verb} {self.value!r}"


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
    taken = exclude | {f.column for f in found}
    mentioned = mention_filters(table, question, taken)
    taken |= {f.column for f in mentioned}
    return found + mentioned + year_filters(table, question, taken)


def mention_filters(
    table: QuestionTable, question: str, exclude: set[str] | frozenset[str] = frozenset()
) -> list[RowFilter]:
    """Names the question writes that a few cells of one text column hold: one condition per column
    (the rows holding any of its names), none on ``exclude``."""
    headers = " ".join(fold(c.header) for c in table.columns)
    title = fold(table.title)
    names = {n: written for n, written in _names(question).items() if n not in title and n not in headers}
    if not names:
        return []
    found: list[RowFilter] = []
    for column in table.columns:
        if column.type != "text" or column.name in exclude or column.name in table.derived:
            continue
        cells = {r.row_index: fold(table.cell_text(r.row_index, column.name)) for r in table.rows}
        hits = {n: {i for i, cell in cells.items() if _named(n, cell)} for n in names}
        rows = tuple(sorted(set().union(*hits.values())))
        if rows and len(rows) <= MAX_MENTION_SHARE * len(cells):
            written = " / ".join(names[n] for n in names if hits[n])
            found.append(RowFilter(column.name, column.header, written, mentions=rows))
    return found


def year_filters(
    table: QuestionTable, question: str, exclude: set[str] | frozenset[str] = frozenset()
) -> list[RowFilter]:
    """Years the question writes that a few cells of one time column hold: one condition per column
    (the rows holding any of its years), none on ``exclude``."""
    title = fold(table.title)
    years = [y for y in _years(question) if y not in title]
    if not years:
        return []
    found: list[RowFilter] = []
    for column in table.columns:
        if column.name in exclude or column.name in table.derived:
            continue
        if column.type != "date" and not header_words(column.header) & TIME_HEADER_WORDS:
            continue
        cells = {r.row_index: table.cell_text(r.row_index, column.name) for r in table.rows}
        hits = {y: {i for i, cell in cells.items() if _holds_year(cell, y)} for y in years}
        rows = tuple(sorted(set().union(*hits.values())))
        if rows and len(rows) <= MAX_MENTION_SHARE * len(cells):
            held = " / ".join(y for y in years if hits[y])
            found.append(RowFilter(column.name, column.header, held, mentions=rows))
    return found


_YEAR = re.compile(r"1[5-9]\d\d|20\d\d")


def _years(question: str) -> list[str]:
    """The years ``question`` writes as a point in time ("in 2008", "the 2017 building"), in order;
    not one in a range ("1988 - 2013", "between 1988 and 2013", "2012/13") or after a word that makes
    it an interval's end ("since 1952")."""
    words = [w.strip(_EDGE_PUNCTUATION + ".") for w in question.split()]

    def year(at: int) -> bool:
        return 0 <= at < len(words) and _YEAR.fullmatch(words[at]) is not None

    found: list[str] = []
    for at, word in enumerate(words):
        if not year(at) or (at and fold(words[at - 1]) in INTERVAL_WORDS):
            continue
        if (at + 1 < len(words) and words[at + 1] in RANGE_MARKS and year(at + 2)) or (
            at and words[at - 1] in (*RANGE_MARKS, "and") and year(at - 2)
        ):
            continue  # "1988 - 2013", "1988 to 2013", "between 1988 and 2013": an interval
        if word not in found:
            found.append(word)
    return found


def _holds_year(cell: str, year: str) -> bool:
    return re.search(rf"(?<!\d){year}(?!\d)", cell) is not None


def _names(question: str) -> dict[str, str]:
    """The runs of capitalised words ``question`` writes (folded → as written), with the lower-case
    particles names hold inside them ("Zamboanga del Norte", "Bank of America"); stop words ("For the
    earliest …") and punctuation end a run: "navy-marine corps memorial stadium", "ecuador"."""
    runs: dict[str, str] = {}
    run: list[str] = []
    particles: list[str] = []  # lower-case words after the run, kept only if a capitalised one follows
    for token in [*question.split(), ""]:
        word = token.strip(_EDGE_PUNCTUATION)
        if word.endswith(".") and word.count(".") == 1:  # a sentence's full stop, not "A.F.C."
            word = word[:-1]
        if word[:1].isupper() and fold(word) not in SEARCH_STOPWORDS:
            run += [*particles, word]
            particles = []
            if word == token:
                continue
        elif run and word in CELL_NAME_PARTICLES and word == token:
            particles.append(word)
            continue
        if run and len(written := " ".join(run)) >= MIN_VALUE_CHARS:
            runs.setdefault(fold(written), written)
        run, particles = [], []
    return runs


def _named(value: str, asked: str) -> bool:
    if len(value) < MIN_VALUE_CHARS or value in SEARCH_STOPWORDS or value.isdigit():
        return False
    return re.search(rf"(?<!\w){re.escape(value)}(?!\w)", asked) is not None


__all__ = ["MAX_CATEGORIES", "RowFilter", "mention_filters", "row_filters", "year_filters"]
