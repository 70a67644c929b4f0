"""The graph-critic mode: a bank of retrieval modules, a router that names topic entities and relations,
and a critic that validates each round's answer and says what to change — after the second published
design this project follows (a router over retriever modules with self-reflection).

One round:

1. the **router** picks a module and, for the hybrid module, the topic entities (the linker's best
   candidates) and the relations the question names among those the topic entities have
   (``query.understand.relations``); the critic's feedback from the previous round changes one thing;
2. the **module** ranks evidence:
   - *hybrid*: the ego-graph of the topic entities in Kùzu along the chosen relations
     (``GraphIndex.ego``: statements by property, page links by column header or infobox key; capped per
     hop, and said when cut), intersected when there are several topics; the documents are the rows on
     the topics' pages that carry those edges and the lead windows of the pages they reach, ranked by
     similarity to the question (dense cosine plus the share of the question's words they hold);
   - *text*: the retrieved pool (BM25 and dense) ranked by similarity to the question alone;
   - *fused*: today's single pass (fusion, re-ranking) as it is;
   - *deeper*: the single pass's ranking without the rows the LLM reader was already shown: it reads 8
     rows of the 30, and on OTT-QA a gold answer is in the top 30 for ~79 % of questions but in the top
     8 for ~56 %, so a rejected first read is most often answered further down the same ranking;
3. the reader reads the module's top rows;
4. the **critic**: the *validator* accepts a round whose answer is known, confident enough
   (``accept_confidence``), not a topic entity itself, and found on a reasoning path; otherwise the
   *commenter* returns one feedback of fixed types (``FEEDBACK``): no entity, incorrect entity,
   incorrect relation, no intersection, answer outside the intersection, wrong module.

The first round is the router's (``first_module = "router"``, the published design) or the single pass
(``"fused"``: on OTT-QA the graph walk alone ranks far below it, so the walk becomes the correction).
The rows the reader read the answer from lead each round's evidence (``cited_first``): they are what the
critic judged, and what the user should see first.

At most ``rounds`` rounds; the first accepted answer wins, else the most confident, with
``validated = false``. Every round — module, entities, relations, paths, top rows, verdict, feedback,
milliseconds — is kept in ``QueryResult.refinement``: the user sees how the answer was reached.

The validator is rules, as above, unless ``validator = "llm"`` and the engine has its instruct model: then
the model judges whether the round's top rows state the answer (``query.modes.llm_validator``), in place
of the confidence floor; with ``validator = "answer"`` a round that passes the floor is accepted only when
the model, shown the answer and the rows it was read from, says it is what the question asks. The router
is rules.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from typing import Any, Literal, Protocol

import numpy as np
from pydantic import BaseModel, Field

from index.graph import EgoEdge, GraphIndex
from query.llm.chat import Llm
from query.modes.base import Declined, Understanding
from query.modes.llm_validator import LlmValidator
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from query.text import content_words
from query.understand.relations import RelationInventory
from schemas.query import QueryResult, RefinementRound

NAME = "graph-critic"
Module = Literal["hybrid", "text", "fused", "deeper"]
FEEDBACK = (
    "no entity",
    "incorrect entity",
    "incorrect relation",
    "missing entity",
    "no intersection",
    "answer outside intersection",
    "wrong module",
)


class GraphCriticSettings(BaseModel):
    """Bounds of the graph-critic mode (``[graph_critic]`` in an engine config)."""

    rounds: int = Field(3, ge=1, le=6, description="router-critic rounds at most")
    topics: int = Field(2, ge=1, le=4, description="topic entities walked at once")
    edges_per_hop: int = Field(200, ge=1, description="edges read per kind per hop; more is cut, and said")
    page_rows: int = Field(400, ge=1, description="rows read from the topic entities' pages")
    leads_per_target: int = Field(2, ge=1, description="lead windows read per reached page")
    evidence: int = Field(30, ge=1, le=100, description="rows a module hands the reader")
    accept_confidence: float = Field(0.5, ge=0, le=1, description="the rule validator's confidence floor")
    validator: Literal["rules", "llm", "answer"] = Field(
        "rules",
        description="'llm': the instruct model judges whether the round's top rows state the answer "
        "(query.modes.llm_validator) in place of the confidence floor; 'answer': beside the confidence "
        "floor, the model checks the round's answer against the rows it was read from; the rules when no "
        "model loaded",
    )
    accept_probability: float = Field(
        0.5,
        ge=0,
        le=1,
        description="the LLM validator's floor on P(the rows state the answer) or, for "
        "'answer', on P(the answer is what the question asks)",
    )
    validator_rows: int = Field(3, ge=1, le=10, description="top rows the LLM validator reads")
    word_weight: float = Field(0.3, ge=0, description="weight of the question-word share beside dense cosine")
    estimate: float = Field(
        0.55, ge=0, le=1, description="router order when a topic entity is linked (retrieve-read: 0.5)"
    )
    first_module: Literal["router", "fused"] = Field(
        "router",
        description="'router': the first round walks the graph when an entity is linked (the published "
        "design); 'fused': it reads the single pass first and walks the graph when the critic rejects it "
        "(on OTT-QA the hybrid module alone ranks far below the single pass: see benchmarks/results/)",
    )
    deeper: bool = Field(
        True,
        description="after a rejected single pass, read the rows of its ranking the LLM reader was not "
        "shown (the 'deeper' module) before walking the graph",
    )
    cited_first: bool = Field(
        True,
        description="the rows the reader read the answer from lead the round's evidence, ahead of the "
        "module's order: they are what the critic judged",
    )


class GraphCriticPipeline(Protocol):
    """What the mode needs of the engine (the modes room does not import it)."""

    def run(self, question: str, understanding: Understanding | None = None) -> Any: ...

    def read(self, staged: Any, reader: Any = None) -> Any: ...

    def result(self, staged: Any, read: Any) -> QueryResult: ...

    def similarity(self, question: str, evidence_ids: list[str]) -> np.ndarray: ...


@dataclass
class Plan:
    module: Module
    entities: list[tuple[str, str]] = field(default_factory=list)  # (id, label)
    relations: list[str] | None = None  # None = any relation
    relation_labels: list[str] = field(default_factory=list)
    skip: int = 0  # which candidate of the strongest mention the topics use (the critic moves it on)

    def key(self) -> tuple:
        return (self.module, tuple(e for e, _ in self.entities), tuple(self.relations or ()))


@dataclass
class Walk:
    ranking: list[str]
    rows: dict[str, EvidenceRow]
    paths: dict[str, str]  # evidence id → the path that reached it, in words
    topics: list[str]
    targets: set[str]
    empty: str | None = None  # why the walk found nothing: "no edges", "no intersection"
    note: str | None = None
    scores: dict[str, float] = field(default_factory=dict)  # the module's own scores (shown with the rows)


@dataclass
class Verdict:
    accepted: bool
    feedback: str | None = None
    detail: str | None = None


def cited_first(ranking: list[str], supporting: list[str]) -> list[str]:
    """``ranking`` with the rows the answer was read from moved to its head, in their cited order."""
    head = [e for e in dict.fromkeys(supporting) if e in ranking]
    return head + [e for e in ranking if e not in head]


def _words(text: str) -> set[str]:
    return set(content_words(text))


class GraphCriticMode:
    name = NAME

    def __init__(
        self,
        pipeline: GraphCriticPipeline,
        store: EvidenceStore,
        graph: GraphIndex,
        settings: GraphCriticSettings | None = None,
        index_version: str = "",
        llm: Llm | None = None,
    ):
        self.pipeline, self.store, self.graph = pipeline, store, graph
        self.settings = settings or GraphCriticSettings()
        self.index_version = index_version
        self._inventory: RelationInventory | None = None
        self.llm_validator = (
            LlmValidator(llm, self.settings.validator_rows)
            if llm is not None and self.settings.validator != "rules"
            else None
        )

    @property
    def inventory(self) -> RelationInventory:
        if self._inventory is None:  # read on first use: an engine that never routes here pays nothing
            self._inventory = RelationInventory.from_graph(self.graph)
        return self._inventory

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        topics = self._topics(understanding, skip=0)
        if not topics:
            return 0.0, "no entity linked in the question: nothing to walk from"
        names = ", ".join(label for _, label in topics)
        return self.settings.estimate, f"topic entities to walk from: {names}"

    # -- the router -------------------------------------------------------------------------------------

    def _topics(self, understanding: Understanding, skip: int) -> list[tuple[str, str]]:
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

    def _first_plan(self, understanding: Understanding) -> Plan:
        if self.settings.first_module == "fused" or not self._topics(understanding, skip=0):
            return Plan("fused")
        return self._hybrid_plan(understanding)

    def _hybrid_plan(self, understanding: Understanding) -> Plan:
        """The walk from the best candidates of the linked mentions (no entities when none is linked)."""
        topics = self._topics(understanding, skip=0)
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

    def _next_plan(
        self, plan: Plan, verdict: Verdict, understanding: Understanding, tried: set, unread: bool = False
    ) -> Plan | None:
        """The router's answer to the feedback: change the one thing it names (``unread``: rows of the
        single pass's ranking the reader was not shown remain)."""
        options: list[Plan] = []
        if verdict.feedback == "incorrect relation" and plan.relations is not None:
            options.append(Plan("hybrid", plan.entities, None, skip=plan.skip))
        if verdict.feedback in ("incorrect entity", "incorrect relation") and plan.module == "hybrid":
            others = self._topics(understanding, skip=plan.skip + 1)
            if others:
                options.append(
                    self._with_relations(Plan("hybrid", others, skip=plan.skip + 1), understanding)
                )
        if verdict.feedback in ("no intersection", "answer outside intersection") and len(plan.entities) > 1:
            options.append(
                self._with_relations(Plan("hybrid", plan.entities[:1], skip=plan.skip), understanding)
            )
        walk = [self._hybrid_plan(understanding)] if any(lk.candidates for lk in understanding.links) else []
        if plan.module in ("fused", "deeper"):  # the single pass was rejected: other evidence next
            deeper = [Plan("deeper")] if unread and self.settings.deeper else []
            options += [*deeper, *walk, Plan("text")]
        else:
            options += [Plan("fused"), Plan("text"), *walk]
        return next((o for o in options if o.key() not in tried), None)

    # -- the modules ------------------------------------------------------------------------------------

    def _score(self, question: str, ids: list[str], rows: dict[str, EvidenceRow]) -> dict[str, float]:
        if not ids:
            return {}
        dense = self.pipeline.similarity(question, ids)
        asked = _words(question)
        share = [len(asked & _words(rows[e].text)) / max(1, len(asked)) for e in ids]
        return {
            e: float(d) + self.settings.word_weight * s for e, d, s in zip(ids, dense, share, strict=True)
        }

    def _hybrid(self, question: str, plan: Plan) -> Walk:
        topics = [e for e, _ in plan.entities]
        labels = dict(plan.entities)
        edges, capped = self.graph.ego(topics, plan.relations, self.settings.edges_per_hop)
        note = f"the walk was cut at {self.settings.edges_per_hop} edges per kind" if capped else None
        reached: dict[str, set[str]] = {}
        for edge in edges:
            reached.setdefault(edge.source, set()).add(edge.target)
        if not edges:
            return Walk([], {}, {}, topics, set(), empty="no edges", note=note)
        targets = (
            set.intersection(*(reached.get(t, set()) for t in topics))
            if len(topics) > 1
            else reached[topics[0]]
        )
        if not targets:
            return Walk([], {}, {}, topics, set(), empty="no intersection", note=note)
        edges = [e for e in edges if e.target in targets]
        page_rows = self.graph.page_evidence(topics, self.settings.page_rows)
        rows = {r.evidence_id: r for r in self.store.get(list(dict.fromkeys(e for _, e in page_rows)))}
        paths: dict[str, str] = {}
        parents: dict[str, list[str]] = {}  # target → the topic rows that carry its edge

        def said(edge: EgoEdge) -> str:
            return (
                f"{labels.get(edge.source, edge.source)} -{edge.label}-> {edge.target_label or edge.target}"
            )

        for edge in edges:
            carriers = []
            if edge.evidence_id:
                carriers = [edge.evidence_id]
            elif edge.row_index is not None:
                carriers = [
                    e
                    for e, r in rows.items()
                    if r.raw_provenance.get("table_index") == edge.source_index
                    and r.raw_provenance.get("row_index") == edge.row_index
                ]
            for carrier in carriers:
                paths.setdefault(carrier, said(edge))
                parents.setdefault(edge.target, []).append(carrier)
        missing = [e for e in paths if e not in rows]
        rows.update({r.evidence_id: r for r in self.store.get(missing)})
        keep = set(paths) if plan.relations is not None else set(rows)  # named relations: their rows only
        leads = self.graph.lead_evidence(sorted(targets))
        lead_rows = {r.evidence_id: r for r in self.store.get(list(dict.fromkeys(e for _, e in leads)))}
        per_target: dict[str, list[EvidenceRow]] = {}
        for target, evidence_id in leads:
            if evidence_id in lead_rows:
                per_target.setdefault(target, []).append(lead_rows[evidence_id])
        lead_target: dict[str, str] = {}
        for target, windows in per_target.items():
            windows.sort(
                key=lambda r: (
                    r.raw_provenance.get("passage_order") or 0,
                    r.raw_provenance.get("window") or 0,
                )
            )
            for window in windows[: self.settings.leads_per_target]:
                lead_target[window.evidence_id] = target
                rows[window.evidence_id] = window
                keep.add(window.evidence_id)
        ids = [e for e in rows if e in keep]
        own = self._score(question, ids, rows)
        # a reached page's lead is scored mostly by the best row whose link reached it: the path is what
        # ties the page to the question ("Robert, played by …" is in the row, not in the series' lead)
        scores = dict(own)
        for lead, target in lead_target.items():
            carriers = [c for c in parents.get(target, []) if c in own]
            if carriers:
                best = max(carriers, key=lambda c: own[c])
                scores[lead] = 0.8 * own[best] + 0.2 * own[lead]
                paths.setdefault(lead, paths[best] + " (its page)")
        ranking = sorted(ids, key=lambda e: (-scores[e], e))[: self.settings.evidence]
        return Walk(ranking, rows, paths, topics, targets, note=note, scores=scores)

    def _text(self, question: str, staged: Any) -> Walk:
        ids = list(staged.rankings["fused"])
        scores = self._score(question, ids, staged.rows)
        ranking = sorted(ids, key=lambda e: (-scores[e], e))[: self.settings.evidence]
        return Walk(ranking, {}, {}, [], set(), scores=scores)

    # -- the critic -------------------------------------------------------------------------------------

    def _validate(self, plan: Plan, walk: Walk, result: QueryResult) -> Verdict:
        if walk.empty == "no entity":
            return Verdict(False, "no entity", "no entity is linked in the question to walk from")
        if walk.empty == "no edges":
            kind = "incorrect relation" if plan.relations is not None else "incorrect entity"
            return Verdict(False, kind, f"no edge leaves {', '.join(walk.topics)} along the chosen relations")
        if walk.empty == "no intersection":
            return Verdict(False, "no intersection", f"{', '.join(walk.topics)} reach no common entity")
        if result.unknown:
            feedback = "incorrect relation" if plan.relations is not None else "wrong module"
            return Verdict(
                False, feedback, f"the {plan.module} module's rows hold no answer the reader trusts"
            )
        if plan.module == "hybrid" and any(
            result.answer.casefold() == label.casefold() or result.answer_entity_id == entity_id
            for entity_id, label in plan.entities
        ):
            return Verdict(
                False, "incorrect relation", f"the answer '{result.answer}' is the topic entity itself"
            )
        if plan.module == "hybrid" and len(walk.topics) > 1:
            supported = set(result.supporting_evidence_ids)
            if supported and not supported & set(walk.paths):
                return Verdict(False, "answer outside intersection", "the answer's evidence is on no path")
        # last: every other check passed
        feedback = "incorrect relation" if plan.module == "hybrid" and plan.relations else "wrong module"
        if self.llm_validator is not None and self.settings.validator == "answer":
            return self._check_answer(result, walk, feedback)
        if self.llm_validator is not None:
            rows = self._rows(walk.ranking[: self.settings.validator_rows], walk)
            judged = self.llm_validator.judge(result.question, rows)
            said = f"validator: P(the top rows state the answer) = {judged.probability:.2f}"
            if judged.probability < self.settings.accept_probability:
                return Verdict(False, feedback, f"{said} < {self.settings.accept_probability}")
            return Verdict(True, detail=said)
        if result.confidence < self.settings.accept_confidence:
            return Verdict(
                False, feedback, f"confidence {result.confidence:.2f} < {self.settings.accept_confidence}"
            )
        return Verdict(True)

    def _check_answer(self, result: QueryResult, walk: Walk, feedback: str) -> Verdict:
        """The confidence floor, then the model's check of the answer against the rows it was read from
        (then the round's top rows): a confident reader can still have read the wrong entity's row."""
        if result.confidence < self.settings.accept_confidence:
            return Verdict(
                False, feedback, f"confidence {result.confidence:.2f} < {self.settings.accept_confidence}"
            )
        assert self.llm_validator is not None
        ids = list(dict.fromkeys([*result.supporting_evidence_ids, *walk.ranking]))
        rows = self._rows(ids[: self.settings.validator_rows], walk)
        judged = self.llm_validator.check(result.question, result.answer, rows)
        said = f"validator: P('{result.answer}' is what the question asks) = {judged.probability:.2f}"
        if judged.probability < self.settings.accept_probability:
            return Verdict(False, feedback, f"{said} < {self.settings.accept_probability}")
        return Verdict(True, detail=said)

    def _rows(self, ids: list[str], walk: Walk) -> list[EvidenceRow]:
        """The rows of ``ids`` in order: the walk's own, else the store's."""
        missing = [e for e in ids if e not in walk.rows]
        stored = {row.evidence_id: row for row in self.store.get(missing)} if missing else {}
        return [row for e in ids if (row := walk.rows.get(e) or stored.get(e)) is not None]

    # -- the loop ---------------------------------------------------------------------------------------

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        staged = self.pipeline.run(understanding.question, understanding)
        return self.refine(understanding, staged, self._first_plan(understanding), self.settings.rounds)

    def first_plan(self, understanding: Understanding, module: Module | None = None) -> Plan:
        """The router's first choice (or the given module's plan, for measuring one module alone)."""
        if module is None:
            return self._first_plan(understanding)
        return self._hybrid_plan(understanding) if module == "hybrid" else Plan(module)

    def refine(
        self, understanding: Understanding, staged: Any, plan: Plan | None, max_rounds: int
    ) -> QueryResult:
        """Rounds of module → reader → critic from ``plan``, on one retrieval (``staged``, left as found)."""
        question = understanding.question
        fused, fused_scores = list(staged.rankings["final"]), dict(staged.final_scores)
        rounds: list[RefinementRound] = []
        results: list[tuple[QueryResult, bool]] = []
        tried: set = set()
        shown: set[str] = set()  # rows an LLM reader has had in its prompt in an earlier round
        window: int | None = None  # rows the LLM reader reads of a ranking (None: the candidate reader)
        while plan is not None and len(rounds) < max_rounds:
            started = time.perf_counter()
            tried.add(plan.key())
            if plan.module == "hybrid" and not plan.entities:
                walk = Walk([], {}, {}, [], set(), empty="no entity")
            elif plan.module == "hybrid":
                walk = self._hybrid(question, plan)
                staged.rows.update(walk.rows)
                staged.added_by.update(dict.fromkeys(walk.rows, NAME))
            elif plan.module == "text":
                walk = self._text(question, staged)
            elif plan.module == "deeper":
                walk = Walk([e for e in fused if e not in shown], {}, {}, [], set(), scores=fused_scores)
            else:
                walk = Walk(fused, {}, {}, [], set(), scores=fused_scores)
            staged.rankings["final"], staged.final_scores = walk.ranking, walk.scores
            read = self.pipeline.read(staged)
            if getattr(read, "reading", None) is not None and read.reading.shown:
                window = read.reading.shown
                shown.update(walk.ranking[:window])
            if self.settings.cited_first:
                staged.rankings["final"] = cited_first(walk.ranking, read.choice.supporting)
            result = self.pipeline.result(staged, read)
            verdict = self._validate(plan, walk, result)
            top = staged.rankings["final"][:5]
            rounds.append(
                RefinementRound(
                    round=len(rounds) + 1,
                    module=plan.module,
                    entities=[f"{e} ({label})" for e, label in plan.entities],
                    relations=plan.relation_labels if plan.relations is not None else [],
                    paths=[walk.paths[e] for e in top if e in walk.paths],
                    top=top,
                    answer="unknown" if result.unknown else result.answer,
                    confidence=round(result.confidence, 3),
                    accepted=verdict.accepted,
                    feedback=verdict.feedback,
                    detail=verdict.detail,
                    note=walk.note,
                    ms=round((time.perf_counter() - started) * 1000, 3),
                )
            )
            results.append((result, verdict.accepted))
            if verdict.accepted:
                break
            unread = window is not None and any(e not in shown for e in fused)
            plan = self._next_plan(plan, verdict, understanding, tried, unread)
        staged.rankings["final"], staged.final_scores = fused, fused_scores
        accepted = [r for r, ok in results if ok]
        best = (
            accepted[0]
            if accepted
            else max((r for r, _ in results), key=lambda r: (not r.unknown, r.confidence))
        )
        return best.model_copy(update={"refinement": rounds, "validated": bool(accepted)})


__all__ = ["FEEDBACK", "NAME", "GraphCriticMode", "GraphCriticPipeline", "GraphCriticSettings", "cited_first"]
