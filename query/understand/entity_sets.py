"""Questions over a set of KG entities: "How many of the Chilean places have more than 100,000
inhabitants?", "Which city has the most inhabitants?", "Which city has the second largest area?",
"Which of Bonn, Parma and Siena has the largest area?", "What is the total population of the cities?";
and the statistics kinds: "What is the variance (standard deviation) of the area of the cities?", "Is
the population of the German cities normally distributed?", "What is the correlation between the
population and the area of the countries?" (and "Is there a correlation / relationship between …"),
"Do the cities and the mountains differ in the variance of their elevation?"; and relationships over
the graph: "Which country has the most cities?", "How many of the cities are in Germany?".

Rules read the shape: a count with a threshold, or a superlative; the set as written (its noun, the words
before it, or an explicit list) and the phrase naming the quantity. What the words mean — which country
"Chilean" is, which class "cities" is, which property "inhabitants" is — is resolved against the index
by the table-sql mode, so the rules never guess an id.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from query import lexicon
from query.lexicon import SET_MAX_WORDS, SET_MIN_WORDS, SET_ORDINALS, SET_SCALE_WORDS, Direction

# moved: query.lexicon.ANY_CLASS; kept for query/modes/entity_sets.py until the lead's refactor lands
ANY_CLASS = lexicon.ANY_CLASS

_NUMBER = r"(?P<num>\d[\d,]*(?:\.\d+)?)\s*(?P<scale>" + "|".join(SET_SCALE_WORDS) + r")?"
_CMP = r"(?P<cmp>more than|over|above|at least|fewer than|less than|under|below|at most)"
_MEASURE = r"(?P<measure>[\w\-]+(?: [\w\-]+){0,3}?)"
"""At most four words ("population", "total area"): a longer tail is a condition these shapes cannot
read ("the population of the nations that competed in 1908"), so the question does not match."""
_ORD = r"(?:(?P<ord>" + "|".join(SET_ORDINALS) + r") )?"
_SUP = _ORD + r"(?P<sup>" + "|".join(sorted(SET_MAX_WORDS | SET_MIN_WORDS)) + r")"
AGGREGATE = re.compile(
    r"^what is the (?P<agg>total|combined|average|mean|median|variance|standard deviation) (?:of (?:the )?)?"
    + _MEASURE
    + r" of (?:all )?(?:the )?"
    r"(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?\s*\??$",
    re.I,
)
_AGGREGATES = {
    "total": "sum", "combined": "sum", "average": "avg", "mean": "avg", "median": "median",
    "variance": "var_samp", "standard deviation": "stddev_samp",
}  # fmt: skip
"""Sample variance and standard deviation (n - 1): the set is a sample of the world's entities."""
_SET = r"(?:all )?(?:the )?(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?"
DISTRIBUTION = re.compile(
    r"^(?:is|are) the " + _MEASURE + r" of " + _SET
    + r" (?:normally distributed|(?:following|distributed by) a normal distribution)\s*\??$",
    re.I,
)  # fmt: skip
DISTRIBUTION_DOES = re.compile(
    r"^does the " + _MEASURE + r" of " + _SET + r" follow a normal distribution\s*\??$", re.I
)
CORRELATION = re.compile(
    r"^(?P<ask>what is|how strong is|is there|is there any|is there a significant) (?:the |a |an )?"
    r"(?:correlation|relationship|association) between (?:the )?(?P<measure>[\w\-]+(?: [\w\-]+){0,3}?)"
    r" and (?:the )?(?P<measure2>[\w\-]+(?: [\w\-]+){0,3}?) of " + _SET + r"\s*\??$",
    re.I,
)
VARIANCE_TEST = re.compile(
    r"^do (?:the )?(?P<set>[\w\s'\-]+?) and (?:the )?(?P<set2>[\w\s'\-]+?) differ in (?:the )?"
    r"(?:variance|variability|spread) of (?:their |the )?" + _MEASURE + r"\s*\??$",
    re.I,
)
GROUP = re.compile(
    r"^(?:which|what) (?P<group>country|nation) (?:has|had|is home to) the " + _SUP + r" (?:of (?:the )?)?"
    r"(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?\s*\??$",
    re.I,
)
COUNT_IN = re.compile(
    r"^(?i:how many (?:of )?" + _SET + r" (?:are|is|were|lie) (?:located )?in) (?P<place>[A-Z][\w'\- ]*?)"
    r"\s*\??$",
)
"""Case-sensitive on purpose: the place is a name ("Germany"), not "how many … are in the index"."""
COUNT = re.compile(
    r"^how many (?:of )?(?:the )?(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?"
    r" (?:have|has|had|with|are there with|count) (?:an? )?"
    + _CMP
    + r" "
    + _NUMBER
    + r" "
    + _MEASURE
    + r"\s*\??$",
    re.I,
)
COUNT_OF = re.compile(
    r"^how many (?:of )?(?:the )?(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?"
    r" (?:have|has|had) an? (?P<measure>[\w\-]+(?: (?!of\b)[\w\-]+)?) (?:of )?"
    + _CMP
    + r" "
    + _NUMBER
    + r"(?: [a-z ]+)?\s*\??$",
    re.I,
)
"""The other word order: "How many mountains have an elevation above 3,000 metres?" (unit words ignored)."""
SUPERLATIVE = re.compile(
    r"^which (?:of )?(?:the )?(?P<set>[\w\s'\-]+?)(?: in (?:the|this) (?:index|sample|dataset))?"
    r" (?:has|had|have|is home to) the " + _SUP + r" " + _MEASURE + r"\s*\??$",
    re.I,
)
LIST = re.compile(
    r"^which of (?P<list>.+?) (?:has|had|have) the " + _SUP + r" " + _MEASURE + r"\s*\??$",
    re.I,
)
_OPERATORS = {
    "more than": ">", "over": ">", "above": ">", "at least": ">=",
    "fewer than": "<", "less than": "<", "under": "<", "below": "<", "at most": "<=",
}  # fmt: skip


SetKind = Literal[
    "count", "superlative", "aggregate", "distribution", "correlation", "variance test", "group"
]


@dataclass(frozen=True)
class SetQuestion:
    kind: SetKind
    noun: str | None  # the set's noun, singular ("place", "city"); None for an explicit list
    modifiers: tuple[str, ...]  # words before the noun ("Chilean")
    members: tuple[str, ...]  # an explicit list, as written
    measure: str  # the phrase naming the quantity ("inhabitants")
    operator: str | None = None  # a count's comparison: ">", ">=", "<", "<="
    threshold: float | None = None
    direction: Direction | None = None
    k: int = 1  # the place asked: 2 for "the second largest"
    aggregate: Literal["sum", "avg", "median", "var_samp", "stddev_samp"] | None = None
    measure2: str | None = None  # a correlation's second quantity
    yes_no: bool = False  # "is there a correlation": the answer is the test's verdict, not r
    other: tuple[str | None, tuple[str, ...]] | None = None  # a variance test's second set (noun, modifiers)
    place: str | None = None  # "how many of the cities are in Germany": the place, as written


def singular(noun: str) -> str:
    noun = noun.casefold()
    if noun.endswith("ies") and len(noun) > 4:
        return noun[:-3] + "y"
    if noun.endswith(("ches", "shes", "sses", "xes")):
        return noun[:-2]
    if noun.endswith("s") and not noun.endswith("ss"):
        return noun[:-1]
    return noun


def _split_set(text: str) -> tuple[str | None, tuple[str, ...]]:
    words = text.split()
    if not words:
        return None, ()
    return singular(words[-1]), tuple(words[:-1])


def _split_list(text: str) -> tuple[str, ...]:
    parts = re.split(r",\s*(?:and\s+|or\s+)?|\s+(?:and|or)\s+", text.strip())
    return tuple(p.strip() for p in parts if p.strip())


def _k(match: re.Match[str]) -> int:
    return SET_ORDINALS.get((match["ord"] or "").casefold(), 1)


def set_readings(question: str) -> list[SetQuestion]:
    """Every way the shapes read ``question``, to be tried in order. "Which country has the most cities?"
    and "Which country has the most inhabitants?" have one shape: members of a class counted per
    country, or a quantity ranked over the countries. Only the index can tell "cities" (a class) from
    "inhabitants" (a quantity), so both readings are returned — the relationship first, since it fails
    at once when its noun names no class — and the mode answers with the first that resolves."""
    text = " ".join(question.replace("\u2019", "'").split())
    readings = []
    if (m := GROUP.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        direction: Direction = "max" if m["sup"].casefold() in SET_MAX_WORDS else "min"
        readings.append(SetQuestion(kind="group", noun=noun, modifiers=modifiers, members=(),
                                    measure="country", direction=direction, k=_k(m)))  # fmt: skip
    if (asked := _statistics(text) or _arithmetic(text)) is not None:
        readings.append(asked)
    return readings


def set_question(question: str) -> SetQuestion | None:
    """The first reading of ``question`` (``set_readings``), or None when it is not one of these shapes."""
    readings = set_readings(question)
    return readings[0] if readings else None


def _arithmetic(text: str) -> SetQuestion | None:
    if (m := COUNT.match(text) or COUNT_OF.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        threshold = float(m["num"].replace(",", "")) * SET_SCALE_WORDS.get((m["scale"] or "").casefold(), 1.0)
        return SetQuestion(
            kind="count", noun=noun, modifiers=modifiers, members=(), measure=m["measure"].strip(),
            operator=_OPERATORS[m["cmp"].casefold()], threshold=threshold,
        )  # fmt: skip
    if (m := AGGREGATE.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        return SetQuestion(kind="aggregate", noun=noun, modifiers=modifiers, members=(),
                           measure=m["measure"].strip(), aggregate=_AGGREGATES[m["agg"].casefold()])  # type: ignore[arg-type]  # fmt: skip
    if (m := LIST.match(text)) is not None:
        members = _split_list(m["list"])
        if len(members) >= 2:
            direction: Direction = "max" if m["sup"].casefold() in SET_MAX_WORDS else "min"
            return SetQuestion(kind="superlative", noun=None, modifiers=(), members=members,
                               measure=m["measure"].strip(), direction=direction, k=_k(m))  # fmt: skip
    if (m := SUPERLATIVE.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        direction = "max" if m["sup"].casefold() in SET_MAX_WORDS else "min"
        return SetQuestion(kind="superlative", noun=noun, modifiers=modifiers, members=(),
                           measure=m["measure"].strip(), direction=direction, k=_k(m))  # fmt: skip
    return None


def _statistics(text: str) -> SetQuestion | None:
    """The statistics and relationship shapes (tried before the others: "how many of the cities are in
    Germany" is not a count over a threshold)."""
    if (m := DISTRIBUTION.match(text) or DISTRIBUTION_DOES.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        return SetQuestion(kind="distribution", noun=noun, modifiers=modifiers, members=(),
                           measure=m["measure"].strip(), yes_no=True)  # fmt: skip
    if (m := CORRELATION.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        return SetQuestion(kind="correlation", noun=noun, modifiers=modifiers, members=(),
                           measure=m["measure"].strip(), measure2=m["measure2"].strip(),
                           yes_no=m["ask"].casefold().startswith("is"))  # fmt: skip
    if (m := VARIANCE_TEST.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        other = _split_set(m["set2"])
        return SetQuestion(kind="variance test", noun=noun, modifiers=modifiers, members=(),
                           measure=m["measure"].strip(), other=other, yes_no=True)  # fmt: skip
    if (m := COUNT_IN.match(text)) is not None:
        noun, modifiers = _split_set(m["set"])
        return SetQuestion(kind="count", noun=noun, modifiers=(*modifiers, m["place"].strip()), members=(),
                           measure="", place=m["place"].strip())  # fmt: skip
    return None
