"""The constraints of a question plan the rules read from its words: the end a ranking wants ("lower",
"the most recent"), a yes/no threshold and its comparator ("at least 1.90 metres", "twenty percent or
more", "below sea level", "were prices falling"), years that are thresholds rather than times.

Apart from ``plan`` because these are the cue words' own rules, read after the property is known: which
end "worse" means depends on the property (the worst unemployment is the highest), and a cue inside the
property's own phrase ("first" of "first mention") is no cue.
"""

from __future__ import annotations

import re
from typing import TYPE_CHECKING

from query.lexicon import spoken_amount, spoken_number
from query.understand import plan_words as words
from schemas.query import PlanConstraints, QuestionPlan

if TYPE_CHECKING:
    from query.understand.plan import PropertyReading

__all__ = ["constrain"]


def constrain(plan: QuestionPlan, question: str, reading: PropertyReading | None) -> None:
    """The plan's constraints from the question's words: which end a comparison or superlative wants, a
    yes/no question's threshold and comparator (said before or after its number, or against 0 for
    sea level and for a rate asked falling or rising)."""
    c = plan.constraints
    dated = reading is not None and reading.property in words.DATE_PROPERTIES
    if plan.operation in ("compare", "superlative", "yes_no"):
        c.pick = None
        if reading is not None and reading.phrase.strip():
            # "the most recent first mention": "first" is a word of the property, "most recent" the cue;
            # a phrase with no cue of its own ("been around") is left in ("been around longer" is one)
            _pick(c, reading.phrase, dated)
            if c.pick is not None:
                c.pick = None
                _pick(c, question.replace(reading.phrase, " "), dated)
        if c.pick is None:
            _pick(c, question, dated)
        if (
            c.pick is not None
            and reading is not None
            and reading.property in words.WORSE_WHEN_HIGHER
            and words.BETTER_WORSE.search(question)
        ):
            c.pick = "max" if c.pick == "min" else "min"  # "the worst unemployment": the highest
    if plan.operation == "yes_no" and (m := words.THRESHOLD.search(question)):
        number = _threshold_number(m.group("num"))
        number *= words.SCALES.get((m.group("scale") or "").lower(), 1.0)
        c.comparator = ">" if m.group("cmp").lower() in words.ABOVE else "<"
        if m.group("cmp").lower() in words.AT_LEAST:
            c.comparator = ">="
        c.threshold = number
        c.threshold_unit = m.group("unit")
        # the threshold's number is no time of the value ("bigger than 1000 km2"; "after 1990" compares
        # with the year itself)
        c.years = [y for y in c.years if y != int(number)]
    elif plan.operation == "yes_no" and (m := words.OR_MORE.search(question)):
        c.threshold = _threshold_number(m.group("num")) * words.SCALES.get(
            (m.group("scale") or "").lower(), 1.0
        )
        c.comparator = (
            ">=" if m.group("dir").lower() in ("more", "higher", "above", "greater", "over") else "<="
        )
        c.threshold_unit = m.group("unit")
    elif plan.operation == "yes_no" and (m := words.SEA_LEVEL.search(question)):
        c.comparator = "<" if m.group(1).lower() in ("below", "under") else ">"
        c.threshold = 0.0
    elif (
        plan.operation == "yes_no"
        and reading is not None
        and reading.property in words.CHANGE_RATES
        and len(plan.mentions) == 1
        and (words.FALLING.search(question) or words.RISING.search(question))
    ):
        # "Were prices in Israel falling?": a rate of change against 0, by the sign the verb says
        c.comparator = "<" if words.FALLING.search(question) else ">"
        c.threshold = 0.0
    elif (
        plan.operation == "yes_no"
        and c.pick is not None
        and (
            re.search(r"\bthan\b", question)
            or (dated and len(plan.mentions) >= 2 and re.search(r"\b(?:before|after)\b", question, re.I))
        )
    ):
        # "Is A older than B?"; "Was A founded after B?": the dates of two named entities compared
        c.comparator = ">" if c.pick == "max" else "<"


def _pick(c: PlanConstraints, question: str, dated: bool) -> None:
    """Which end a comparison or superlative wants, from its cue words."""
    if dated and words.EARLY_CUES.search(question):
        c.pick = "min"
    elif dated and words.LATE_CUES.search(question):
        c.pick = "max"
    elif words.MIN_CUES.search(question):
        c.pick = "min"
    elif words.MAX_CUES.search(question):
        c.pick = "max"
    elif re.search(r"\b(?:later|latest|older|oldest)\b", question, re.I):
        c.pick = "max"  # "a legal adult later": an age, a quantity, the larger
    elif re.search(r"\b(?:earlier|earliest|sooner|soonest|younger|youngest)\b", question, re.I):
        c.pick = "min"


def _threshold_number(said: str) -> float:
    """The number of a threshold: digits, a number word ("six"), "a"/"an" before a scale, "half a"."""
    said = said.lower()
    if said == "half a":
        return 0.5
    if said in ("a", "an"):
        return 1.0
    if (value := spoken_number(said)) is not None or (value := spoken_amount(said)) is not None:
        return float(value)
    return float(said.replace(",", ""))
