"""A named entity's related items, one of them picked — by a ranking ("Which of Belgium's neighbours has
the most inhabitants?", "the capital of Chile's largest neighbour", "Which country bordering Germany has
the smallest population?") or by a description that names something ("Helsinki's twin city in *Norway*",
"Parma's twin town on the *Loire*") — and a lookup or a count on the one picked. The set is what one
item-valued relation of the named entity lists.

The rules read three things from the words: the set's relation (an everyday phrase or a property label
whose values are items: "neighbours", "twin towns", "member of"), the ranking property (the words right
before the set's noun — "most populous neighbour", "largest neighbour" — else what the rest of the
question names: "has the most inhabitants") and, when the rest names yet another property ("the
population of Belgium's largest neighbour"), what is looked up on the one ranked first. Without a ranking
word, or without a second property to rank by, nothing here applies: the question is a plain lookup of
the relation ("Who are Belgium's neighbours?").

The set's class noun, when the question says one ("Which country bordering Germany"), is only read as a
name for the members; the members are the relation's values, not filtered by their classes.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import TYPE_CHECKING

from query.understand import plan_words as words
from query.understand.properties import PropertyLabels

if TYPE_CHECKING:
    from query.understand.plan import PropertyReading

__all__ = ["DescribedMember", "RelatedSet", "described_member", "related_set"]

RANKED_KINDS = ("number", "date")  # a set of items is ranked by an amount or a time


@dataclass(frozen=True)
class RelatedSet:
    """What the rules read: the set's relation, the ranking property and what follows on the winner."""

    relation: PropertyReading  # the relation listing the set ("neighbours" → P47)
    ranked: PropertyReading  # what ranks them ("populous" → P1082)
    then: PropertyReading | None  # what is looked up on the one ranked first, if anything


def related_set(
    question: str, rest: str, reading: PropertyReading | None, properties: PropertyLabels | None
) -> RelatedSet | None:
    """The related set a question ranks, or None. ``rest`` is the question without its names (and
    without a chain's first hop); ``reading`` is the property the rules read first, which must list items
    for a set to be read."""
    from query.understand.plan import property_for  # the planner imports this module

    if reading is None or reading.kind != "entity" or not words.SUPERLATIVE_CUES.search(question):
        return None
    phrase = reading.phrase
    without_set = _without(rest, phrase, reading.property)
    said_before = _words_before(rest, phrase)
    ranked = property_for(said_before, properties) if said_before else None
    if ranked is not None and ranked.kind in RANKED_KINDS:
        # "the population of Belgium's largest neighbour": "largest" ranks, "population" is looked up
        after = without_set.replace(said_before, " ", 1)
        then = property_for(after, properties)
        if then is not None and (then.kind == "entity" or not _said_before(question, then, said_before)):
            # "the most populous neighbour by population" ranks by what it says after the cue; an item
            # property ("capital") follows as a chain's hop, read by the planner
            then = None
        return RelatedSet(reading, ranked, then)
    ranked = property_for(without_set, properties)
    if ranked is None or ranked.kind not in RANKED_KINDS:
        return None
    return RelatedSet(reading, ranked, None)


def _without(text: str, phrase: str, prop: str) -> str:
    """The text without every phrase of the set's relation ("neighbours", "bordering")."""
    text = re.sub(re.escape(phrase), " ", text, flags=re.I)
    entry = next((e for e in words.PROPERTY_WORDS if e.property == prop), None)
    return entry.pattern.sub(" ", text) if entry is not None else text


def _said_before(question: str, then: PropertyReading, cue: str) -> bool:
    """Whether the looked-up property is said before the ranking words ("the population in 2010 of the
    least populous of Laos's neighbours"): the question asks its value on the one ranked first."""
    at, cue_at = question.lower().find(then.phrase.lower()), question.lower().find(cue.lower())
    return 0 <= at < cue_at


def _words_before(text: str, phrase: str) -> str:
    """The one or two words right before the set's noun that rank it ("most populous neighbour",
    "largest neighbour", "the least populous of X's neighbours"), or ""."""
    where = text.lower().find(phrase.lower())
    if where < 0:
        return ""
    head = re.sub(r"\s*(?:\bof\s+)?['\u2019]s\s*$", " ", text[:where])  # "the least populous of X's"
    before = re.search(r"(?<![\w'\u2019])((?:[a-z]+ )?[a-z]+)\s*$", head)
    if before is None:
        return ""
    said = before.group(1)
    return said if words.SUPERLATIVE_CUES.search(said) or words.MAX_CUES.search(said) else ""


@dataclass(frozen=True)
class DescribedMember:
    """A member of a related set picked by the names its description says, and what is asked of it."""

    relation: PropertyReading  # the relation listing the set ("twin city" → P190)
    then: PropertyReading  # what is looked up (or counted) on the member picked
    described: tuple[str, ...]  # the names that describe it ("Norway", "Loire")


def described_member(
    rest: str, reading: PropertyReading | None, others: list[str], properties: PropertyLabels | None
) -> DescribedMember | None:
    """A member of the first name's related set described by the question's other names ("Helsinki's
    twin city in Norway lies on how many bodies of water?"), or None. Only names describe: a common
    word ("pilgrimage town") would be matched against whole pages and found by accident."""
    from query.understand.plan import property_for  # the planner imports this module

    if reading is None or reading.kind != "entity" or not others:
        return None
    then = property_for(_without(rest, reading.phrase, reading.property), properties)
    if then is None or then.property == reading.property:
        return None
    return DescribedMember(reading, then, tuple(others))
