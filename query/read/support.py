"""Is an answer written in the evidence? The check that keeps a generated answer honest.

A model may only answer what a row it read holds: a span of the row (as the row writes it), or a
normalization of a value in it — the same number written otherwise ("30528" for "30,528", "3" for
"three"), a number the row writes with a suffix ("7" for "7th"), the same date ("12 March 1990" for
"March 12, 1990"), or a quantity with its unit ("141 square kilometre" → "141", unit apart). The
answer returned is always the row's own form, so what the user sees can be found in the cited text.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from query.lexicon import MONTH_ALTERNATION, NUMBER_WORDS
from query.text import fold
from schemas.calendar import MONTH_NUMBERS

_NUMBER = re.compile(r"(?<![\w.])(\d{1,3}(?:,\d{3})+|\d+)(\.\d+)?(?![\d])")
_LEADING_NUMBER = re.compile(r"^\s*([+-]?(?:\d{1,3}(?:,\d{3})+|\d+)(?:\.\d+)?)(?:\s*(.*))?$")
_MONTH = f"({MONTH_ALTERNATION})"
_DATES = (
    (re.compile(rf"\b(\d{{1,2}}) {_MONTH},? (\d{{4}})\b", re.I), ("d", "m", "y")),
    (re.compile(rf"\b{_MONTH} (\d{{1,2}}),? (\d{{4}})\b", re.I), ("m", "d", "y")),
    (re.compile(r"\b(\d{4})-(\d{2})-(\d{2})\b"), ("y", "mn", "d")),
)
_UNIT = re.compile(r"^[a-zµ°%²³/.\- ]{1,30}$")
"""Words after a number that read as its unit ("square kilometre", "km²", "%"), not a name ("World Cup")."""
_QUOTES = {'"': '"', "'": "'", "\u201c": "\u201d", "\u2018": "\u2019", "`": "`"}
_INITIALS_END = re.compile(r"(?:^|[\s,])(?:[A-Z]\.){2,}$")

Kind = Literal["span", "normalized"]


@dataclass(frozen=True)
class Support:
    """The answer as a row writes it, its unit when one was split off, and which rows hold it."""

    text: str
    unit: str | None
    rows: list[int]
    kind: Kind


def trim_answer(text: str) -> str:
    """The answer span: whitespace, a trailing period and surrounding quotes removed."""
    previous = None
    while text != previous:
        previous = text
        text = " ".join(text.split())
        if text.endswith(".") and not _INITIALS_END.search(text):
            text = text[:-1]
        if len(text) >= 2 and _QUOTES.get(text[0]) == text[-1]:
            text = text[1:-1]
    return text


def _number_value(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def _span(text: str, start: int, end: int, fallback: str) -> str:
    """``text[start:end]`` when folding kept offsets (ASCII text), else the answer as given."""
    return text[start:end] if text.isascii() else fallback


def _exact(answer: str, text: str) -> str | None:
    needle = fold(answer)
    match = re.search(rf"(?<!\w){re.escape(needle)}(?!\w)", fold(text))
    return _span(text, match.start(), match.end(), answer) if match else None


def _numbers(text: str) -> list[tuple[str, float, int, int]]:
    out = []
    for m in _NUMBER.finditer(text):
        value = _number_value(m.group(0))
        if value is not None:
            out.append((m.group(0), value, m.start(), m.end()))
    return out


def _number_form(answer: str, text: str) -> tuple[str, str | None] | None:
    """The row's form of the answer's leading number, and the unit words after it (if any)."""
    m = _LEADING_NUMBER.match(answer)
    if m is None:
        word = fold(answer).strip()
        if word in NUMBER_WORDS:  # "three" → the row's "3"
            value = float(NUMBER_WORDS.index(word))
            hit = next((n for n in _numbers(text) if n[1] == value), None)
            return (hit[0], None) if hit else None
        return None
    value = _number_value(m.group(1))
    rest = (m.group(2) or "").strip() or None
    if rest is not None and not _UNIT.match(rest):
        return None
    for form, number, _start, end in _numbers(text):
        if number != value:
            continue
        suffix = re.match(r"(st|nd|rd|th)\b", text[end:])
        if suffix and rest is None:  # "7" → the row's "7th"
            return form + suffix.group(0), None
        return form, rest
    if rest is None and value is not None and value.is_integer() and 0 <= value < len(NUMBER_WORDS):
        word = NUMBER_WORDS[int(value)]
        hit = re.search(rf"(?<!\w){word}(?!\w)", fold(text))
        if hit:  # "3" → the row's "three"
            return _span(text, hit.start(), hit.end(), word), None
    return None


def _dates(text: str) -> list[tuple[tuple[int, int, int], str]]:
    found = []
    for pattern, order in _DATES:
        for m in pattern.finditer(text):
            parts = dict(zip(order, m.groups(), strict=True))
            month = int(parts["mn"]) if "mn" in parts else MONTH_NUMBERS[parts["m"].lower()]
            found.append(((int(parts["y"]), month, int(parts["d"])), m.group(0)))
    return found


def _date_form(answer: str, text: str) -> str | None:
    wanted = {d for d, _ in _dates(answer)}
    return next((form for d, form in _dates(text) if d in wanted), None) if wanted else None


def find_support(
    answer: str, texts: list[str], cited: list[int], split_units: list[bool] | None = None
) -> Support | None:
    """Where ``answer`` is written among ``texts``, in the form the first holder writes it (the cited rows
    are searched first, then the others); None when no row holds it. ``rows``: every row holding that
    form, the first group's holders first. ``split_units[i]``: row i's quantities are typed values whose
    unit is kept apart (KG statements), so "141 square kilometre" read there answers "141".
    """
    answer = trim_answer(answer)
    if not answer:
        return None
    split = split_units or [False] * len(texts)
    cited_rows = [i for i in dict.fromkeys(cited) if 0 <= i < len(texts)]
    others = [i for i in range(len(texts)) if i not in cited_rows]
    # the rows the model cited first, in either form ("7" read in a cited row as "seven"), then the rest
    for group in (cited_rows, others):
        for kind in ("span", "normalized"):
            holders: list[int] = []
            form: tuple[str, str | None] | None = None
            for i in group:
                found = _find(answer, texts[i], split[i], kind)
                if found is not None:
                    holders.append(i)
                    form = form or found
            if form is not None:
                more = [i for i in range(len(texts)) if i not in holders and _holds(form[0], texts[i])]
                return Support(form[0], form[1], holders + more, kind)  # type: ignore[arg-type]
    return None


def _holds(form: str, text: str) -> bool:
    return _exact(form, text) is not None


def _find(answer: str, text: str, split_unit: bool, kind: str) -> tuple[str, str | None] | None:
    if kind == "span":
        exact = _exact(answer, text)
        if exact is None:
            return None
        if split_unit:
            number = _number_form(answer, text)
            if number is not None and number[1] is not None:
                return number
        return exact, None
    number = _number_form(answer, text)
    if number is not None:
        return number
    date = _date_form(answer, text)
    return (date, None) if date is not None else None
