"""What kind of thing an answer candidate's entity is — a person, a place, something else — from its
Wikidata item's statements, or unknown.

The candidate reader weighs a candidate by how well its kind fits the answer type the question asks
for. A page the evidence links ("Thessaloniki") is an entity, but being an entity says nothing about
being a person: only an item's statements do (instance of human, Q5; a coordinate location, P625). A
page whose title is an item's page title is read as that item; a page with no item, or an item the
index holds no statements of, has no known kind, and the scorer gives it a neutral fit.
"""

from __future__ import annotations

import re
import threading
from collections.abc import Callable, Sequence
from typing import Literal

from index.statements import StatementStore

EntityKind = Literal["person", "place", "thing"]
KIND_PROPERTIES = ("P31", "P625", "P569", "P21")
HUMAN = "Q5"
_QID = re.compile(r"Q[1-9]\d*")
_CACHED = 50_000  # kinds kept between questions (an OTT-QA run asks about ~180k pages at most)


class EntityKinds:
    """``kinds(entity_ids) -> {entity id: kind}`` for the ids whose kind is known; threads may share it."""

    def __init__(self, statements: StatementStore | None, item_of_page: Callable[[str], str | None]):
        self.statements, self.item_of_page = statements, item_of_page
        self._known: dict[str, EntityKind | None] = {}
        self._lock = threading.Lock()

    def __call__(self, entity_ids: Sequence[str]) -> dict[str, EntityKind]:
        if self.statements is None:
            return {}
        with self._lock:
            wanted = [e for e in dict.fromkeys(entity_ids) if e not in self._known]
        items = {e: e if _QID.fullmatch(e) else self.item_of_page(e) for e in wanted}
        found = _kinds(self.statements, sorted({i for i in items.values() if i}))
        with self._lock:
            if len(self._known) > _CACHED:
                self._known.clear()
            for entity_id, item in items.items():
                self._known[entity_id] = found.get(item) if item else None
            known = {e: self._known.get(e) for e in entity_ids}
        return {e: kind for e, kind in known.items() if kind is not None}


def _kinds(statements: StatementStore, items: list[str]) -> dict[str, EntityKind]:
    """A person: instance of human, or a birth date or sex; a place: a coordinate location; an item
    with other statements of these properties: a thing; an item with none: unknown (left out)."""
    properties: dict[str, set[str]] = {}
    humans: set[str] = set()
    for s in statements.lookup(items, KIND_PROPERTIES):
        if s.rank == "deprecated":
            continue
        properties.setdefault(s.subject, set()).add(s.property)
        if s.property == "P31" and s.value_item == HUMAN:
            humans.add(s.subject)
    out: dict[str, EntityKind] = {}
    for item, held in properties.items():
        if item in humans or {"P569", "P21"} & held:
            out[item] = "person"
        elif "P625" in held:
            out[item] = "place"
        elif "P31" in held:
            out[item] = "thing"
    return out
