"""The table-sql mode's graph path: a set of entities → a table of one property's values → SQL.

``EntitySetPlanner.plan`` resolves what ``query.understand.entity_sets`` read from the question
against the index — the country its modifiers name ("Chilean" → Chile, by the question's links or
the alias index tried with the demonym's usual endings), the class its noun names ("cities" → city,
Q515; "places" → any class), the property its measure names ("inhabitants" → population, P1082,
among quantity properties), the members of an explicit list (each by its best link) — then runs the
fixed entity-set Cypher and builds the table. Anything it cannot resolve is a reason, not a guess.
"""

from __future__ import annotations

from dataclasses import dataclass

from index.aliases import AliasIndex
from index.graph import MEMBERS_CYPHER, GraphIndex
from index.statements import StatementStore
from query.modes.base import Understanding
from query.tabulate.entities import EntityTable, MixedUnits, entity_table
from query.understand.entity_sets import ANY_CLASS, SetQuestion
from query.understand.properties import PropertyLabels

COUNTRY_CLASSES = frozenset({"Q6256", "Q3624078", "Q7275", "Q6266", "Q1763527"})
"""country, sovereign state, state, nation, constituent country."""
CLASS_NOUNS: dict[str, tuple[str, ...]] = {
    "city": ("Q515", "Q1549591", "Q1637706", "Q200250"),  # city, big city, million city, metropolis
    "town": ("Q3957",),
    "village": ("Q532",),
    "mountain": ("Q8502",),
    "volcano": ("Q8072",),
    "lake": ("Q23397",),
    "river": ("Q4022",),
    "island": ("Q23442",),
    "country": ("Q6256", "Q3624078"),
    "person": ("Q5",),
    "people": ("Q5",),
    "human": ("Q5",),
    "commune": ("Q25412", "Q484170"),  # commune of Chile, commune of France
    "municipality": ("Q15284",),
}
"""Common set nouns → Wikidata classes; a noun not here is matched against the index's class labels."""
MAX_MEMBERS = 2000


@dataclass
class SetMembers:
    """An entity set and the query (with its parameters) that made it."""

    entities: list[tuple[str, str | None]]
    query: str  # the Cypher, or "explicit list"
    params: dict
    capped: bool


@dataclass
class SetPlan:
    """A resolved set question: the entity set (and the query that made it), the property, the table."""

    entities: list[tuple[str, str | None]]
    query: str  # the Cypher, or "explicit list"
    params: dict
    prop: str
    property_label: str
    table: EntityTable
    capped: bool


class SetDeclined(Exception):
    """Why a set question cannot be answered from the graph, in words a user reads in the route."""


class EntitySetPlanner:
    def __init__(
        self, graph: GraphIndex, statements: StatementStore, properties: PropertyLabels, aliases: AliasIndex
    ):
        self.graph, self.statements, self.properties, self.aliases = graph, statements, properties, aliases
        self._class_labels: dict[str, list[str]] | None = None

    # -- resolving words -------------------------------------------------------------------------------

    def _is_country(self, entity_id: str) -> bool:
        return any(s.value_item in COUNTRY_CLASSES for s in self.statements.lookup([entity_id], ["P31"]))

    def country(self, question: SetQuestion, understanding: Understanding) -> str | None:
        """The country the set's modifiers name: a linked country first, else a demonym's country."""
        modifiers = {m.casefold() for m in question.modifiers}
        for link in understanding.links:
            if link.mention.text.casefold() not in modifiers:
                continue
            for candidate in link.candidates[:3]:
                if self._is_country(candidate.entity_id):
                    return candidate.entity_id
        for word in question.modifiers:
            if not word[:1].isupper():
                continue
            forms = [
                word,
                word + "y",
                word[:-1] + "um",
                word[:-2],
                word[:-3] + "y",
                word[:-3] + "a",
                word[:-4] + "a",
            ]
            for form in forms:
                if len(form) < 3:
                    continue
                for hit in self.aliases.lookup(form, 3, fuzzy=False):
                    if self._is_country(hit.entity_id):
                        return hit.entity_id
        return None

    def classes(self, noun: str | None) -> list[str]:
        if noun is None or noun in ANY_CLASS:
            return []
        if noun in CLASS_NOUNS:
            return list(CLASS_NOUNS[noun])
        if self._class_labels is None:
            self._class_labels = {}
            for class_id, label, _ in self.graph.classes():
                if label and label != class_id:
                    self._class_labels.setdefault(label.casefold(), []).append(class_id)
        return self._class_labels.get(noun, [])

    def prop(self, measure: str) -> tuple[str, str]:
        for match in self.properties.match(measure, k=5):
            if self.properties.datatype(match.property) == "quantity":
                return match.property, match.label
        raise SetDeclined(f"no quantity property is named by '{measure}'")

    def _truthy(
        self, entities: list[tuple[str, str | None]], country: str | None, classes: list[str]
    ) -> list[tuple[str, str | None]]:
        """The members whose best-rank statements (preferred if any, else normal) say the country and the
        class: the graph's edges hold every non-deprecated statement, so a city that *was* in a country, or
        was once classed as a city, would otherwise count."""
        wanted = [p for p, v in (("P17", country), ("P31", classes)) if v]
        by_subject: dict[tuple[str, str], list] = {}
        for statement in self.statements.lookup([e for e, _ in entities], wanted):
            by_subject.setdefault((statement.subject, statement.property), []).append(statement)

        def says(entity_id: str, prop: str, values: set[str]) -> bool:
            live = [s for s in by_subject.get((entity_id, prop), []) if s.rank != "deprecated"]
            best = [s for s in live if s.rank == "preferred"] or live
            return any(s.value_item in values for s in best)

        return [
            (e, label)
            for e, label in entities
            if (country is None or says(e, "P17", {country}))
            and (not classes or says(e, "P31", set(classes)))
        ]

    # -- the plan ---------------------------------------------------------------------------------------

    def members(self, question: SetQuestion, understanding: Understanding) -> SetMembers:
        """The entity set: an explicit list linked member by member, else the fixed Cypher over the
        country and class the question names, kept to truthy members, capped at ``MAX_MEMBERS``."""
        if question.members:
            entities = []
            for written in question.members:
                link = next(
                    (lk for lk in understanding.links if lk.mention.text.casefold() == written.casefold()),
                    None,
                )
                if link is None or link.best is None:
                    hits = self.aliases.lookup(written, 1)
                    if not hits:
                        raise SetDeclined(f"'{written}' links to no entity")
                    entities.append((hits[0].entity_id, hits[0].label))
                else:
                    entities.append((link.best.entity_id, link.best.label))
            return SetMembers(entities, "explicit list", {"members": [e for e, _ in entities]}, False)
        country = self.country(question, understanding)
        classes = self.classes(question.noun)
        if country is None and not classes:
            what = " ".join([*question.modifiers, question.noun or ""]).strip()
            raise SetDeclined(f"'{what}' names neither a country nor a class the index knows")
        if question.modifiers and country is None:
            raise SetDeclined(f"'{' '.join(question.modifiers)}' names no country the index knows")
        if question.noun is not None and question.noun not in ANY_CLASS and not classes:
            # a noun that names no class must not widen the set to every entity of the country: "the
            # German zorblaxes" (or "the German cities' --") would be answered over all German places
            raise SetDeclined(f"'{question.noun}' names no class the index knows")
        entities, params = self.graph.members(country, classes, MAX_MEMBERS + 2)
        entities = [(e, label) for e, label in entities if e != country]  # "places in Chile": not Chile
        entities = self._truthy(entities, country, classes)
        capped = len(entities) > MAX_MEMBERS
        if not entities:
            raise SetDeclined(f"the entity set is empty (country {country}, classes {classes})")
        return SetMembers(entities[:MAX_MEMBERS], MEMBERS_CYPHER, params, capped)

    def values(
        self, entities: list[tuple[str, str | None]], measure: str, understanding: Understanding
    ) -> EntityTable:
        """Each entity's value of the quantity ``measure`` names (the asked year's, when one is)."""
        prop, label = self.prop(measure)
        year = understanding.intent.time.years[0] if understanding.intent.time.years else None
        try:
            return entity_table(entities, self.statements, prop, label, year)
        except MixedUnits as exc:
            raise SetDeclined(str(exc)) from exc

    def plan(self, question: SetQuestion, understanding: Understanding) -> SetPlan:
        self.prop(question.measure)  # an unnamed quantity is the first reason, before any graph query
        members = self.members(question, understanding)
        table = self.values(members.entities, question.measure, understanding)
        return SetPlan(
            members.entities, members.query, members.params, table.property, table.property_label, table,
            members.capped,
        )  # fmt: skip
