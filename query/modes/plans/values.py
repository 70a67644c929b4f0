"""The values a plan compares: the current best-rank value of a property, amounts in one unit per
dimension, times by their year, and names without ids.

The rules follow the natural-question set's (``benchmarks/natural_questions/README.md``) and Wikidata's:
deprecated statements never count; preferred ones win over normal ones; among those, the latest point in
time is the current value (undated statements count as oldest). Units: an area is compared in square
kilometres and a length in metres, whatever unit each statement was written in (Lausanne's area is in
square metres, Tours' in square kilometres).
"""

from __future__ import annotations

from dataclasses import dataclass

from index.statements import TypedStatement
from index.verbalize.values import format_amount

UNIT_FACTORS: dict[str, tuple[str, float]] = {
    # unit label -> (the unit compared in, factor to it)
    "square kilometre": ("square kilometre", 1.0),
    "square metre": ("square kilometre", 1e-6),
    "hectare": ("square kilometre", 0.01),
    "acre": ("square kilometre", 0.0040468564224),
    "square mile": ("square kilometre", 2.589988110336),
    "metre": ("metre", 1.0),
    "kilometre": ("metre", 1000.0),
    "foot": ("metre", 0.3048),
    "centimetre": ("metre", 0.01),
}
THRESHOLD_UNITS = {
    "square kilometre": ("square kilomet", "km2", "km²", "sq km"),
    "square metre": ("square met",),
    "kilometre": ("kilomet", "km"),
    "metre": ("met", "m"),
    "foot": ("feet", "ft"),
}


def live(statements: list[TypedStatement]) -> list[TypedStatement]:
    """Statements that may answer: not deprecated, with a value."""
    return [
        s for s in statements if s.rank != "deprecated" and s.snak_type == "value" and s.value_kind != "none"
    ]


def best_rank(statements: list[TypedStatement]) -> list[TypedStatement]:
    alive = live(statements)
    preferred = [s for s in alive if s.rank == "preferred"]
    return preferred or alive


def current(statements: list[TypedStatement]) -> list[TypedStatement]:
    """The best-rank statements with the latest point in time (undated ones count as oldest)."""
    best = best_rank(statements)
    if not best:
        return []
    latest = max(_time_key(s) for s in best)
    return [s for s in best if _time_key(s) == latest]


def _time_key(statement: TypedStatement) -> tuple[int, str]:
    if statement.point_in_time is None:
        return (-(10**9), "")
    return (statement.point_in_time_year or -(10**9), statement.point_in_time or "")


def in_year(statements: list[TypedStatement], year: int) -> list[TypedStatement]:
    """Non-deprecated statements dated in ``year`` (point in time) or whose start-end interval holds it."""
    out = []
    for s in live(statements):
        if s.point_in_time_year is not None:
            if s.point_in_time_year == year:
                out.append(s)
        elif s.start_year is not None or s.end_year is not None:
            start = s.start_year if s.start_year is not None else -(10**9)
            end = s.end_year if s.end_year is not None else 10**9
            if start <= year <= end:
                out.append(s)
    preferred = [s for s in out if s.rank == "preferred"]
    return preferred or out


def nearest_year(statements: list[TypedStatement], year: int) -> TypedStatement | None:
    """The dated statement closest to ``year`` (the earlier one on a tie): what a refusal may mention."""
    dated = [s for s in live(statements) if s.point_in_time_year is not None]
    if not dated:
        return None
    return min(dated, key=lambda s: (abs((s.point_in_time_year or 0) - year), s.point_in_time_year or 0))


@dataclass(frozen=True)
class Measure:
    """A value made comparable: a number in the dimension's unit, or a year."""

    number: float
    unit: str | None  # the unit compared in; None for counts, years and dimensionless amounts


def measure(statement: TypedStatement) -> Measure | None:
    """The comparable number of a quantity (in its dimension's unit) or a time (its year)."""
    if statement.value_kind == "quantity" and statement.value_amount is not None:
        label = statement.value_unit_label if statement.value_unit else None
        if label is None:
            return Measure(float(statement.value_amount), None)
        unit, factor = UNIT_FACTORS.get(label, (label, 1.0))
        return Measure(float(statement.value_amount) * factor, unit)
    if statement.value_kind == "time" and statement.value_year is not None:
        return Measure(float(statement.value_year), None)
    return None


def threshold_measure(number: float, unit_text: str | None, like: Measure) -> Measure:
    """A question's threshold in the unit of the value it is compared with ("40 square kilometres",
    "1,000 m"); without a unit it is read in the value's own unit."""
    if not unit_text:
        return Measure(number, like.unit)
    lowered = unit_text.lower()
    for label, spellings in THRESHOLD_UNITS.items():
        if any(lowered.startswith(s) or lowered == s for s in spellings):
            unit, factor = UNIT_FACTORS[label]
            return Measure(number * factor, unit)
    return Measure(number, like.unit)


def value_text(statement: TypedStatement) -> str:
    """A value as an answer says it: an item by its label ("unnamed" without one, never its id), an
    amount with thousands separators, a time as written."""
    if statement.value_kind == "item":
        return statement.value_item_label or "unnamed"
    if statement.value_kind == "quantity":
        return format_amount(statement.value_amount_text, statement.value_amount)
    return statement.value_text or statement.value_string or ""
