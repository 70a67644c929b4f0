"""A date column a table does not have, read from the pages its rows link to.

"The oldest 1998 Hopman Cup male player", "the youngest gold medal athlete": the roster names the people
and links to their pages, but their birth dates are on those pages, in the lead's first parentheses
("Annabel Ellwood ( born 2 February 1978 in Canberra ) is …", "George Melly ( 17 August 1926 - 5 July
2007 ) was …"). So is a club's or a building's start ("… was founded in 1885"). ``start_date`` reads
that date by rules, the first window of each linked page's lead is where it looks, and
``QuestionTable.with_column`` adds the dates as a typed column whose cells name the passage they were
read from, so SQL can rank the rows and the user can check each value.

Rules, not a model: a date is taken only from the lead's first parenthetical that holds one (a person's
birth, or the first date of a life span) or right after "founded / established / formed / opened /
built / born"; a lead that says neither gives no value (NULL), never a guess from a later date.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from query.tabulate.cells import NOTE_MARKS, read_cell

LEAD_CHARS = 400
"""How far into a lead the birth or founding date is looked for: past it, dates are of other things."""
PARENTHETICALS = 3
_DATE_START = re.compile(r"\b(?=\d{1,2}\s+[A-Za-z]{3}|[A-Z][a-z]{2,8}\.?\s+\d|\d{4}\b)")
_YEAR_ONLY = re.compile(r"^(?P<year>1[0-9]\d\d|20\d\d)\b(?!\s*[-\u2013/]\d\d\b)")  # not a season
_STARTED = re.compile(
    r"\b(?:born|founded|established|formed|opened|built|incorporated)(?:\s+(?:in|on))?\s+", re.I
)


@dataclass(frozen=True)
class LinkedDate:
    """A date read from a linked page: the value, the words it was read from, and the passage."""

    date: dt.date
    said: str
    evidence_id: str
    title: str


def _first_date(text: str) -> tuple[dt.date, str] | None:
    """The first full date ("2 February 1978", "August 24 , 1949") or bare year in ``text``."""
    for match in _DATE_START.finditer(text):
        rest = text[match.start() :]
        value = read_cell(rest[:40])
        if value.kind == "date" and value.date is not None:
            return value.date, _said(rest)
        year = _YEAR_ONLY.match(rest)
        if year is not None:
            return dt.date(int(year["year"]), 1, 1), year["year"]
    return None


def _said(rest: str) -> str:
    """The words of a date at the start of ``rest``: up to its year."""
    year = re.search(r"\d{4}", rest)
    return " ".join(rest[: year.end()].split()) if year else rest.split()[0]


def _parentheticals(text: str) -> list[str]:
    """The first top-level parenthesized passages of ``text``, innermost nesting kept in them."""
    out, depth, start = [], 0, 0
    for i, char in enumerate(text):
        if char == "(":
            if depth == 0:
                start = i + 1
            depth += 1
        elif char == ")" and depth:
            depth -= 1
            if depth == 0:
                out.append(text[start:i])
                if len(out) == PARENTHETICALS:
                    break
    return out


def start_date(lead: str) -> tuple[dt.date, str] | None:
    """When the subject of a lead began: the first date of its first parenthetical that holds one
    (a birth, a life span), else the date right after "founded", "established", "born" and the like."""
    head = lead[:LEAD_CHARS]
    for inner in _parentheticals(head):
        found = _first_date(inner)
        if found is not None:
            return found
    for match in _STARTED.finditer(head):
        found = _first_date(head[match.end() : match.end() + 40])
        if found is not None and head[match.end() :].startswith(found[1][:2]):  # the date comes right after
            return found
    return None


_NAME_END = re.compile(r"\s(?:\(|,|is|was|are|were|known)\s")
# A roster's marks beside a name: "( c )" captain, "[ 3 ]" a note, "*", "†", "(vc)"
_CELL_MARKS = re.compile(r"\([^()]*\)|#|" + NOTE_MARKS.pattern)
MAX_NAME_WORDS = 8


def full_name(lead: str, short: str) -> str | None:
    """The full name a lead opens with ("Louis Rohan Duleep Mendis ( born …" for the row's "Duleep
    Mendis"): the words before its first parenthesis, comma or verb, when they hold the short name's
    last word and say more than it does; else None. The short name's roster marks ("Duleep Mendis ( c )",
    the captain) are not part of it."""
    end = _NAME_END.search(lead[:LEAD_CHARS])
    name = " ".join(lead[: end.start()].split()) if end else ""
    short_words = _CELL_MARKS.sub(" ", short).casefold().split()
    words, surname = name.casefold().split(), short_words[-1:] or [""]
    if not 1 < len(words) <= MAX_NAME_WORDS or surname[0] not in words:
        return None
    return name if len(words) > len(short_words) else None


__all__ = ["LEAD_CHARS", "LinkedDate", "full_name", "start_date"]
