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

The package: ``plans`` is the router, ``modules`` the modules, ``critic`` the critic (with
``llm_validator``, its model-backed validator), ``settings`` the bounds; this module runs the rounds.
"""

from __future__ import annotations

import time

from index.graph import GraphIndex
from query.llm.chat import Llm
from query.modes.base import Declined, Understanding
from query.modes.graph_critic.critic import Critic
from query.modes.graph_critic.modules import Modules, Walk
from query.modes.graph_critic.plans import Plan, PlanRouter
from query.modes.graph_critic.settings import NAME, GraphCriticSettings, Module
from query.pipeline import Pipeline, StagedRun
from schemas.query import QueryResult, RefinementRound


def cited_first(ranking: list[str], supporting: list[str]) -> list[str]:
    """``ranking`` with the rows the answer was read from moved to its head, in their cited order."""
    head = [e for e in dict.fromkeys(supporting) if e in ranking]
    return head + [e for e in ranking if e not in head]


class GraphCriticMode:
    name = NAME

    def __init__(
        self,
        pipeline: Pipeline,
        graph: GraphIndex,
        settings: GraphCriticSettings | None = None,
        llm: Llm | None = None,
    ):
        self.pipeline = pipeline
        self.settings = settings or GraphCriticSettings()
        self.router = PlanRouter(graph, self.settings)
        self.modules = Modules(pipeline, pipeline.store, graph, self.settings)
        self.critic = Critic(pipeline.store, self.settings, llm)

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        topics = self.router.topics(understanding, skip=0)
        if not topics:
            return 0.0, "no entity linked in the question: nothing to walk from"
        names = ", ".join(label for _, label in topics)
        return self.settings.estimate, f"topic entities to walk from: {names}"

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        staged = self.pipeline.run(understanding)
        return self.refine(understanding, staged, self.router.first(understanding), self.settings.rounds)

    def first_plan(self, understanding: Understanding, module: Module | None = None) -> Plan:
        """The router's first choice (or the given module's plan, for measuring one module alone)."""
        if module is None:
            return self.router.first(understanding)
        return self.router.hybrid(understanding) if module == "hybrid" else Plan(module)

    def _walk(self, question: str, plan: Plan, current: StagedRun, fused: StagedRun, shown: set[str]) -> Walk:
        """The round's module run: its ranking, rows and paths."""
        if plan.module == "hybrid" and not plan.entities:
            return Walk([], {}, {}, [], set(), empty="no entity")
        if plan.module == "hybrid":
            return self.modules.hybrid(question, plan)
        if plan.module == "text":
            return self.modules.text(question, current)
        ranking = [e for e in fused.final if e not in shown] if plan.module == "deeper" else list(fused.final)
        return Walk(ranking, {}, {}, [], set(), scores=dict(fused.final_scores))

    def refine(
        self, understanding: Understanding, staged: StagedRun, plan: Plan | None, max_rounds: int
    ) -> QueryResult:
        """Rounds of module → reader → critic from ``plan``, on one retrieval (``staged``, left as found)."""
        question = understanding.question
        current = staged
        rounds: list[RefinementRound] = []
        results: list[tuple[QueryResult, bool]] = []
        tried: set = set()
        shown: set[str] = set()  # rows an LLM reader has had in its prompt in an earlier round
        window: int | None = None  # rows the LLM reader reads of a ranking (None: the candidate reader)
        while plan is not None and len(rounds) < max_rounds:
            started = time.perf_counter()
            tried.add(plan.key())
            walk = self._walk(question, plan, current, staged, shown)
            current = current.focused(walk.ranking, rows=walk.rows, by=NAME, scores=walk.scores)
            read = self.pipeline.read(current)
            if read.reading is not None and read.reading.shown:
                window = read.reading.shown
                shown.update(walk.ranking[:window])
            shown_to_user = current
            if self.settings.cited_first:
                shown_to_user = current.focused(cited_first(walk.ranking, read.choice.supporting))
            result = self.pipeline.result(shown_to_user, read)
            verdict = self.critic.validate(plan, walk, result)
            top = shown_to_user.final[:5]
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
            unread = window is not None and any(e not in shown for e in staged.final)
            plan = self.router.next(plan, verdict.feedback, understanding, tried, unread)
        accepted = [r for r, ok in results if ok]
        best = (
            accepted[0]
            if accepted
            else max((r for r, _ in results), key=lambda r: (not r.unknown, r.confidence))
        )
        return best.model_copy(update={"refinement": rounds, "validated": bool(accepted)})
