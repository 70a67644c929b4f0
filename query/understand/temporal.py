"""The time a question is restricted to: full dates, years and cue words ("first", "before").

Each reader also returns which tokens (or character spans) it used, so the intent keeps them out of
the mentions and the relation phrase: "Sept 2017" is a time, not a name, and "before" is no relation.
"""

from __future__ import annotations

import datetime as dt
import re

from query.lexicon import (
    COUNT_NOUN_EXCEPTIONS,
    CUE_BLOCKERS,
    FUNCTION_WORDS,
    MONTH_GROUP,
    MONTH_NUMBERS,
    NUMBER_WORDS,
    RECENT_WORDS,
    SPOKEN_YEAR_LEADS,
    TENS_WORDS,
    TIME_CUES,
    spoken_number,
)
from query.understand.tokens import Token
from schemas.query import TimeCue

DATE_PATTERNS = [
    re.compile(
        r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + MONTH_GROUP + r"\s*,?\s+(?P<year>\d{4})\b", re.I
    ),
    re.compile(r"\b" + MONTH_GROUP + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*,?\s*(?P<year>\d{4})\b", re.I),
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
]
MONTH_YEAR = re.compile(r"\b" + MONTH_GROUP + r"\s+\d{4}\b", re.I)
"""A month and a year ("Sept 2017"): a time, so never part of a mention; it adds no full date."""
YEAR = re.compile(
    r"(?<![\w,.])(?P<year>1\d{3}|20\d{2})(?:\s*[\u2013\-/]\s*(?P<to>\d{2}|\d{4}))?(?![\w,]|\.\d)"
)

_UNIT = "|".join(NUMBER_WORDS[1:10])
_TEEN = "|".join(NUMBER_WORDS[10:20])
_TENS = "|".join(TENS_WORDS)
_TWO_DIGITS = rf"(?:(?:{_TENS})(?:[- ](?:{_UNIT}))?|{_TEEN}|oh[- ](?:{_UNIT}))"
SPOKEN_YEAR = re.compile(
    rf"\b(?:(?P<century>{_TEEN}|twenty)[- ](?P<rest>{_TWO_DIGITS}|hundred)"
    rf"|(?:(?P<lead>\w+)(?: the year)? |(?P<opening>^))(?P<millennium>one|two) thousand"
    rf"(?:(?: and)? (?P<small>{_TWO_DIGITS}|{_UNIT}))?)"
    r"\b(?![- ](?:years?|people|inhabitants|residents|metres|meters|feet|square|km)\b)",
    re.I,
)
"""A year in words: "nineteen sixty-five", "nineteen hundred", "twenty twelve", and "two thousand (and)
ten" after a word a time follows ("in the year two thousand") or opening the question before a colon or
comma; "nineteen countries" is a count, and "two thousand people" an amount."""

SHORT_YEAR = re.compile(
    rf"\b(?:{'|'.join(sorted(SPOKEN_YEAR_LEADS))})(?: the year)? "
    rf"(?:['\u2019](?P<digits>\d\d)(?![\w'\u2019])|(?P<oh>oh[- ](?:{_UNIT}))\b)",
    re.I,
)
"""A year by its last two digits after a word a time follows: "in '07", "back in oh-seven"."""
SHORT_YEAR_PIVOT = 30
"""Two digits below it are this century's ("'07" is 2007), the rest the last's ("'95" is 1995)."""

Span = tuple[int, int]


def spoken_years(question: str) -> list[tuple[int, Span]]:
    """The years a question says in words, in order, with the character span each was read from."""
    found = []
    for m in SPOKEN_YEAR.finditer(question):
        if m.group("century"):
            century = spoken_number(m.group("century")) or 0
            rest = m.group("rest").lower()
            year = century * 100 + (0 if rest == "hundred" else spoken_number(rest) or 0)
            span = (m.start(), m.end())
        elif (m.group("lead") or "").lower() in SPOKEN_YEAR_LEADS or (
            m.group("opening") is not None and question[m.end() : m.end() + 1] in (":", ",")
        ):  # "in two thousand and six", or "Two thousand and six: how many …" opening the question
            thousands = spoken_number(m.group("millennium")) or 0
            year = thousands * 1000 + (spoken_number(m.group("small") or "") or 0)
            span = (m.start("millennium"), m.end())
        else:
            continue
        if 1000 <= year <= 2099:
            found.append((year, span))
    for m in SHORT_YEAR.finditer(question):
        group = "digits" if m.group("digits") else "oh"
        tail = int(m.group("digits")) if m.group("digits") else spoken_number(m.group("oh")[3:]) or 0
        year = (2000 if tail < SHORT_YEAR_PIVOT else 1900) + tail
        found.append((year, (m.start(group) - (group == "digits"), m.end(group))))
    return sorted(found, key=lambda f: f[1])


def dates(question: str) -> tuple[list[str], list[Span]]:
    """Full dates as ISO strings, in order and once each, and the character spans they were read from;
    an impossible date ("31 February 2015") is left out."""
    found: list[tuple[int, str, Span]] = []
    for pattern in DATE_PATTERNS:
        for m in pattern.finditer(question):
            if any(s < m.end() and m.start() < e for _, _, (s, e) in found):
                continue
            month = m.group("month")
            month_no = int(month) if month.isdigit() else MONTH_NUMBERS[month.lower().rstrip(".")]
            try:
                day = dt.date(int(m.group("year")), month_no, int(m.group("day")))
            except ValueError:
                continue
            found.append((m.start(), day.isoformat(), (m.start(), m.end())))
    found.sort()
    return list(dict.fromkeys(d for _, d, _ in found)), [span for _, _, span in found]


def time_tokens(question: str, tokens: list[Token], date_spans: list[Span]) -> set[int]:
    """The tokens inside a full date or a month-and-year: they name a time, never an entity."""
    spans = date_spans + [(m.start(), m.end()) for m in MONTH_YEAR.finditer(question)]
    return {i for i, t in enumerate(tokens) if any(s <= t.start < e for s, e in spans)}


def years(question: str, tokens: list[Token], date_spans: list[Span]) -> tuple[list[int], set[int]]:
    """Four-digit years 1000-2099, "2009-10" as two years; not numbers in names ("Reno 1868 FC") nor
    counts ("1500 songs"); then the years said in words ("in nineteen sixty-five")."""
    found: list[int] = []
    used: set[int] = set()
    by_start = {t.start: i for i, t in enumerate(tokens)}
    for m in YEAR.finditer(question):
        if any(s <= m.start() < e for s, e in date_spans):
            continue
        i = by_start.get(m.start())
        if i is None:
            continue
        prev = tokens[i - 1] if i > 0 else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if (
            prev is not None
            and prev.kind == "cap"
            and not prev.gap
            and prev.lower not in FUNCTION_WORDS
            and prev.lower.rstrip(".") not in MONTH_NUMBERS
        ):
            continue
        if nxt is not None and m.group("to") is None and _count_noun(nxt):
            continue
        year = int(m.group("year"))
        found.append(year)
        to = m.group("to")
        if to:
            end = int(to) if len(to) == 4 else year - year % 100 + int(to)
            if len(to) == 2 and end < year:
                end += 100
            if year < end <= year + 100:
                found.append(end)
        used.update(j for j, t in enumerate(tokens) if m.start() <= t.start < m.end())
    for year, (start, end) in spoken_years(question):
        if any(s <= start < e for s, e in date_spans):
            continue
        found.append(year)
        used.update(j for j, t in enumerate(tokens) if start <= t.start < end)
    return list(dict.fromkeys(found)), used


def _count_noun(token: Token) -> bool:
    word = token.lower
    return (
        token.kind == "word"
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith("ss")
        and (word not in COUNT_NOUN_EXCEPTIONS)
    )


def cues(tokens: list[Token], in_mention: set[int]) -> tuple[list[TimeCue], set[int]]:
    """Time cues outside mentions, in order and once each, and the tokens that state them; "first
    name", "named after" and a lone "recent" are no cue."""
    found: list[TimeCue] = []
    used: set[int] = set()
    for i, t in enumerate(tokens):
        cue = TIME_CUES.get(t.lower)
        if cue is None or i in in_mention:
            continue
        nxt = tokens[i + 1].lower if i + 1 < len(tokens) else ""
        prev = tokens[i - 1].lower if i > 0 else ""
        if nxt in CUE_BLOCKERS.get(t.lower, ()) or (t.lower == "after" and prev == "named"):
            continue
        if t.lower in RECENT_WORDS and prev != "most":
            continue
        if t.lower == "prior" and nxt != "to":
            continue
        used.add(i)
        if cue not in found:
            found.append(cue)
    return found, used
