"""Typed values from the text of a table cell: numbers, ranks, years, dates and race times.

A Wikipedia table stores everything as text: "1,234", "$3.2 million", "45%", "T2", "2004-05",
"12 May 2004", "1:23.456". SQL can only rank, count or compare those once they are values, so each
cell is read into a ``CellValue`` (a number, a date, or neither), and a column is typed by what most
of its cells hold (``column_type``): a "Rank" column of "1", "2", "T3" is numeric even with a "—" in
it, while a "Team" column with one "49ers" in it stays text. A cell that does not parse in a typed
column becomes NULL, never a guess; the text is kept beside it for the answer and the provenance.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from typing import Literal

from query.lexicon import EMPTY_CELLS, MONTH_GROUP, SCALE_WORDS
from schemas.calendar import MONTH_NUMBERS

ColumnType = Literal["number", "date", "text"]

_MINUS = "\u2212\u2013\u2014\\-"  # minus, en dash, em dash, hyphen (escaped for a class)
_NUMBER = re.compile(
    r"^\s*(?:(?:approx\.?|about|c\.|ca\.|~|≈|est\.?)\s*)?"  # hedges before the figure
    r"(?P<sign>[" + _MINUS + r"+])?\s*"
    r"(?P<currency>[$€£¥₹]|US\$|A\$|C\$|Rs\.?|R\$)?\s*"
    r"(?P<int>\d{1,3}(?:[,\u202f\u00a0 ]\d{3})+|\d+)(?P<frac>\.\d+)?"
    r"\s*(?P<scale>thousand|million|billion|trillion|mil|mn|bn|[kmb])?\b"
    r"(?P<rest>.*)$",
    re.I,
)
_RANK = re.compile(
    r"^\s*(?:(?:T|=|t-|tied\s+)(?P<tied>\d{1,4})|(?P<nth>\d{1,4})\s*(?:st|nd|rd|th)|(?P<eq>\d{1,4})\s*=)\s*$",
    re.I,
)
_TIME = re.compile(r"^\s*(?:(?P<h>\d+):)?(?P<m>\d{1,2}):(?P<s>\d{2}(?:\.\d+)?)\s*$")
_SEASON = re.compile(r"^\s*(?P<year>1[5-9]\d\d|20\d\d)\s*[" + _MINUS + r"/]\s*(?:\d{2}|\d{4})\s*$")
_YEAR = re.compile(r"^\s*(?P<year>1[0-9]\d\d|20\d\d)\s*(?:\(.*\)|\[.*\])?\s*$")
_DATES = (
    re.compile(r"^\s*(?P<day>\d{1,2})\s+" + MONTH_GROUP + r",?\s+(?P<year>\d{4})\b", re.I),
    re.compile(r"^\s*" + MONTH_GROUP + r"\s+(?P<day>\d{1,2})\s*,?\s+(?P<year>\d{4})\b", re.I),
    re.compile(r"^\s*(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
    re.compile(r"^\s*" + MONTH_GROUP + r"\s+(?P<year>\d{4})\s*$", re.I),
)
_UNIT_REST = re.compile(r"^\s*(?:%|percent|[a-zA-Zµ°²³/.\s]{1,20})?\s*(?:\(.*\)|\[.*\])?\s*$")

NUMBER_SHARE = 0.7
"""A column is numeric (or a date column) when this share of its non-empty cells reads as one."""


@dataclass(frozen=True)
class CellValue:
    """What a cell holds as a value: ``number`` (ranks, counts, amounts, years, seconds) or ``date``."""

    number: float | None = None
    date: dt.date | None = None
    kind: Literal["number", "rank", "year", "season", "time", "date", "empty", "text"] = "text"


# A note's mark beside a cell's text: "[ 3 ]", "[a]", "*", "†" (a county seat, a deceased player); not
# "#", which is part of names ("C#")
NOTE_MARKS = re.compile(r"\[[^\[\]]*\]|[*†‡§^]")


def without_marks(text: str) -> str:
    """A cell's text as an answer: its note marks dropped ("† Mount Pleasant" is "Mount Pleasant");
    parentheses stay, they are often part of a name ("Ichamati ( Ichhamati ) River")."""
    return " ".join(NOTE_MARKS.sub(" ", text).split())


def is_empty(text: str) -> bool:
    return text.strip().casefold() in EMPTY_CELLS


def read_cell(text: str) -> CellValue:
    """The value ``text`` holds, or ``kind="text"`` when it holds none a comparison could use."""
    stripped = re.sub(r"\[\w{1,4}\]", "", text).strip()  # footnote marks: "1,234[a]"
    if is_empty(stripped):
        return CellValue(kind="empty")
    for pattern in _DATES:
        match = pattern.match(stripped)
        if match:
            month = match["month"]
            number = int(month) if month.isdigit() else MONTH_NUMBERS[month.casefold().rstrip(".")]
            day = int(match["day"]) if "day" in match.groupdict() and match["day"] else 1
            try:
                value = dt.date(int(match["year"]), number, day)
            except ValueError:
                return CellValue(kind="text")
            return CellValue(number=float(value.year), date=value, kind="date")
    if (match := _YEAR.match(stripped)) is not None:
        year = int(match["year"])
        return CellValue(number=float(year), date=dt.date(year, 1, 1), kind="year")
    if (match := _SEASON.match(stripped)) is not None:
        year = int(match["year"])
        return CellValue(number=float(year), date=dt.date(year, 1, 1), kind="season")
    if (match := _TIME.match(stripped)) is not None:
        seconds = int(match["h"] or 0) * 3600 + int(match["m"]) * 60 + float(match["s"])
        return CellValue(number=seconds, kind="time")
    if (match := _RANK.match(stripped)) is not None:
        return CellValue(number=float(match["tied"] or match["nth"] or match["eq"]), kind="rank")
    match = _NUMBER.match(stripped)
    if match is None or not _UNIT_REST.match(match["rest"]):
        return CellValue(kind="text")
    digits = re.sub(r"[,\u202f\u00a0 ]", "", match["int"]) + (match["frac"] or "")
    value = float(digits)
    scale = (match["scale"] or "").casefold()
    if len(scale) == 1 and not match["currency"]:
        scale = ""  # "3 m" is three metres; "$3m" is three million
    if scale:
        value *= SCALE_WORDS[scale]
    if match["sign"] and match["sign"] != "+":
        value = -value
    return CellValue(number=value, kind="number")


def column_type(values: list[CellValue]) -> ColumnType:
    """``number`` or ``date`` when most non-empty cells are one, else ``text``.

    Dates win only when most cells are full dates: a column of bare years is a number column (years
    sort and subtract as numbers), and a column of "1st", "12", "T3" is one too.
    """
    filled = [v for v in values if v.kind != "empty"]
    if not filled:
        return "text"
    dates = sum(v.kind == "date" for v in filled)
    numbers = sum(v.number is not None for v in filled)
    if dates / len(filled) >= NUMBER_SHARE:
        return "date"
    if numbers / len(filled) >= NUMBER_SHARE:
        return "number"
    return "text"
