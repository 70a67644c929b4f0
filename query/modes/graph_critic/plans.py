"""The graph-critic's router: which module a round runs, with which topic entities and relations, and how
the critic's feedback changes the plan (one thing at a time, never a plan already tried).

Topic entities are the linker's best candidates, strongest mention first; relations are those the
question names among the ones the topics have in the graph (``query.understand.relations``, over the
relation inventory the graph holds). Rules, no model.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from index.graph import GraphIndex
from query.modes.base import Understanding
from query.modes.graph_critic.settings import GraphCriticSettings, Module
from query.understand.relations import RelationInventory


@dataclass
class Plan:
    module: Module
    entities: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    relations: list[str] | None = None  # None = any relation
    relation_labels: list[str] = field(default_factory=list)
    skip: int = 0  # which candidate of the strongest mention the topics use (the critic moves it on)

    def key(self) -> tuple:
        return (self.module, tuple(e for e, _ in self.entities), tuple(self.relations or ()))


class PlanRouter:
    """Plans rounds; the relation inventory is read from the graph on first use."""

    def __init__(self, graph: GraphIndex, settings: GraphCriticSettings):
        self.graph, self.settings = graph, settings
        self._inventory: RelationInventory | None = None

    @property
    def inventory(self) -> RelationInventory:
        if self._inventory is None:  # read on first use: an engine that never routes here pays nothing
            self._inventory = RelationInventory.from_graph(self.graph)
        return self._inventory

    def topics(self, understanding: Understanding, skip: int) -> list[tuple[str, str]]:
        """The best candidate of each linked mention (the ``skip``-th for the first mention, when the
        critic said the entity was wrong), strongest mention first."""
        ranked = sorted(
            (lk for lk in understanding.links if lk.candidates),
            key=lambda lk: -lk.candidates[0].score,
        )
        out: list[tuple[str, str]] = []
        for i, link in enumerate(ranked):
            index = skip if i == 0 else 0
            if index < len(link.candidates):
                candidate = link.candidates[index]
                if all(candidate.entity_id != e for e, _ in out):
                    out.append((candidate.entity_id, candidate.label))
        return out[: self.settings.topics]

    def first(self, understanding: Understanding) -> Plan:
        if self.settings.first_module == "fused" or not self.topics(understanding, skip=0):
            return Plan("fused")
        return self.hybrid(understanding)

    def hybrid(self, understanding: Understanding) -> Plan:
        """The walk from the best candidates of the linked mentions (no entities when none is linked)."""
        topics = self.topics(understanding, skip=0)
        return self._with_relations(Plan("hybrid", topics), understanding) if topics else Plan("hybrid")

    def _with_relations(self, plan: Plan, understanding: Understanding) -> Plan:
        """The relations the question names among those the topic entities have (any, when none)."""
        edges, _ = self.graph.ego([e for e, _ in plan.entities], None, self.settings.edges_per_hop)
        available = {e.relation: e.label for e in edges}
        named = self.inventory.named(
            understanding.question, available, [m.property for m in understanding.intent.properties]
        )
        if named:
            plan.relations = [r.name for r in named]
            plan.relation_labels = [f"{r.label} (by '{r.why}')" for r in named]
        return plan

    def next(
        self, plan: Plan, feedback: str | None, understanding: Understanding, tried: set, unread: bool = False
    ) -> Plan | None:
        """The router's answer to the feedback: change the one thing it names (``unread``: rows of the
        single pass's ranking the reader was not shown remain)."""
        options: list[Plan] = []
        if feedback == "incorrect relation" and plan.relations is not None:
            options.append(Plan("hybrid", plan.entities, None, skip=plan.skip))
        if feedback in ("incorrect entity", "incorrect relation") and plan.module == "hybrid":
            others = self.topics(understanding, skip=plan.skip + 1)
            if others:
                options.append(
                    self._with_relations(Plan("hybrid", others, skip=plan.skip + 1), understanding)
                )
        if feedback in ("no intersection", "answer outside intersection") and len(plan.entities) > 1:
            options.append(
                self._with_relations(Plan("hybrid", plan.entities[:1], skip=plan.skip), understanding)
            )
        walk = [self.hybrid(understanding)] if any(lk.candidates for lk in understanding.links) else []
        if plan.module in ("fused", "deeper"):  # the single pass was rejected: other evidence next
            deeper = [Plan("deeper")] if unread and self.settings.deeper else []
            options += [*deeper, *walk, Plan("text")]
        else:
            options += [Plan("fused"), Plan("text"), *walk]
        return next((o for o in options if o.key() not in tried), None)
