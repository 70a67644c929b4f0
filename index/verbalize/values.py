"""Wikidata values as people write them: '11,150,516', '4.5 metre', 'March 1879', '20th century'.

Dates honour their precision (a year-precision date is never shown as 1 January), quantities keep
the exact decimal of the dump, and item values are named through the lexicon. These functions are
shared by the KG verbalizer and the graph's FACT edges, so both say the same thing.
"""

from __future__ import annotations

from collections.abc import Mapping
from decimal import Decimal, InvalidOperation
from typing import Any

from index.lexicon import Lexicon
from schemas.calendar import MONTH_NAMES


def format_amount(text: str | None, value: float | None) -> str:
    """'+11150516' -> '11,150,516'; '-1.50' -> '-1.50'; exact digits from the dump when present."""
    if text:
        try:
            number = Decimal(text)
        except InvalidOperation:
            return text.lstrip("+")
        if number == number.to_integral_value() and "." not in text:
            return f"{int(number):,}"
        whole, _, fraction = str(abs(number)).partition(".")
        sign = "-" if number < 0 else ""
        return f"{sign}{int(whole):,}" + (f".{fraction}" if fraction else "")
    if value is None:
        return ""
    return f"{int(value):,}" if float(value).is_integer() else f"{value:,}"


def _ordinal(n: int) -> str:
    suffix = "th" if 10 <= n % 100 <= 20 else {1: "st", 2: "nd", 3: "rd"}.get(n % 10, "th")
    return f"{n}{suffix}"


def _year(year: int) -> str:
    """Wikidata numbers years historically: -0044 is 44 BC (there is no year 0)."""
    return f"{-year} BC" if year < 0 else str(year)


def format_time(time: str | None, precision: int | None, year: int | None) -> str:
    """A Wikidata time at its precision: day '14 March 1879', month 'March 1879', year '1879',
    decade '1870s', century '19th century', millennium '2nd millennium'; negative years are BC."""
    if not time:
        return ""
    sign = -1 if time.startswith("-") else 1
    body = time.lstrip("+-")
    date = body.split("T", 1)[0]
    parts = date.split("-")
    try:
        y = sign * int(parts[0]) if year is None else year
        month = int(parts[1]) if len(parts) > 1 else 0
        day = int(parts[2]) if len(parts) > 2 else 0
    except ValueError:
        return time
    precision = 11 if precision is None else precision
    if precision >= 11 and month and day:
        return f"{day} {MONTH_NAMES[month - 1]} {_year(y)}"
    if precision >= 10 and month:
        return f"{MONTH_NAMES[month - 1]} {_year(y)}"
    if precision >= 9:
        return _year(y)
    if precision == 8:
        return f"{abs(y) // 10 * 10}s" + (" BC" if y < 0 else "")
    if precision == 7:
        century = (abs(y) - 1) // 100 + 1
        return f"{_ordinal(century)} century" + (" BC" if y < 0 else "")
    if precision == 6:
        millennium = (abs(y) - 1) // 1000 + 1
        return f"{_ordinal(millennium)} millennium" + (" BC" if y < 0 else "")
    return _year(y)


def format_value(snak: Mapping[str, Any], lexicon: Lexicon) -> str:
    """The value of one snak (main snak or qualifier) as text."""
    if snak["snak_type"] == "somevalue":
        return "unknown value"
    if snak["snak_type"] == "novalue":
        return "no value"
    kind = snak["value_kind"]
    if kind == "item":
        return lexicon.name(snak["value_item"])
    if kind == "quantity":
        amount = format_amount(snak["value_amount_text"], snak["value_amount"])
        unit = snak["value_unit"]
        if unit:
            amount = f"{amount} {lexicon.unit_name(unit)}"
        return amount
    if kind == "time":
        return format_time(snak["value_time"], snak["value_precision"], snak["value_year"])
    if kind == "globecoordinate":
        return f"{snak['value_latitude']:.4g}, {snak['value_longitude']:.4g}"
    return snak["value_string"] or ""


def format_qualifiers(qualifiers: list[Mapping[str, Any]] | None, lexicon: Lexicon) -> str:
    """'point in time: 2015, determination method: census': qualifiers in dump order."""
    return ", ".join(
        f"{lexicon.property_name(q['property'])}: {format_value(q, lexicon)}" for q in qualifiers or []
    )
