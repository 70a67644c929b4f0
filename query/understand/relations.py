"""The relations the index holds, and which of them a question names.

The graph-critic router names "useful relations" for its walk; it must choose among relations that
exist — Wikidata properties on FACT edges, column headers and infobox keys on LINKS_TO edges — so the
inventory is read from the graph itself (``GraphIndex.relations``: every relation type with its edge
count). A question names a relation when a word of it, stemmed, meets a word of the relation's label
("founded" → "Founded", "capacity" → "Capacity"), through a verb's usual property ("created" →
creator, "played" → cast member: ``properties.VERB_CUES``), or when the intent already matched the property.
"""

from __future__ import annotations

from dataclasses import dataclass

from index.graph import GraphIndex, RelationCount
from query.understand.properties import cue_stems, stem
from query.understand.tokens import content_words


@dataclass(frozen=True)
class NamedRelation:
    name: str  # a property id or a header / key as written
    label: str
    why: str  # the question word it was named by


class RelationInventory:
    def __init__(self, relations: list[RelationCount]):
        self.relations = relations
        self._by_name = {r.name: r for r in relations}

    @classmethod
    def from_graph(cls, graph: GraphIndex) -> RelationInventory:
        return cls(graph.relations())

    def __len__(self) -> int:
        return len(self.relations)

    def count(self, name: str) -> int:
        relation = self._by_name.get(name)
        return relation.count if relation is not None else 0

    def label(self, name: str) -> str:
        relation = self._by_name.get(name)
        return relation.label if relation is not None else name

    def named(
        self, question: str, available: dict[str, str], properties: list[str] | None = None, limit: int = 2
    ) -> list[NamedRelation]:
        """The relations among ``available`` (name → label) the question names: the intent's best
        matched properties (``properties``, best first; at most ``limit``) when the walk has them, else
        those whose label meets a word of the question or a verb's usual property. Naming many
        relations is naming none: past ``limit`` the walk would be the whole ego-graph again."""
        words = {stem(w): w for w in content_words(question)}
        out = [
            NamedRelation(name, available[name], "the question's property")
            for name in (properties or [])
            if name in available
        ][:limit]
        if out:
            return out
        for name, label in available.items():
            label_words = [stem(w) for w in content_words(label)]
            met = next((words[w] for w in label_words if w in words and len(w) > 2), None)
            if met is not None:
                out.append(NamedRelation(name, label, met))
            elif verb := next((words[w] for w in cue_stems(label.casefold()) if w in words), None):
                out.append(NamedRelation(name, label, verb))
        return out[:limit]


__all__ = ["NamedRelation", "RelationInventory"]
