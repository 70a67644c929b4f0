"""The graph-critic's retrieval modules: each ranks evidence for one round of the mode.

- *hybrid*: the ego-graph of the topic entities in Kùzu along the chosen relations (``GraphIndex.ego``:
  statements by property, page links by column header or infobox key; capped per hop, and said when
  cut), intersected when there are several topics; the documents are the rows on the topics' pages that
  carry those edges and the lead windows of the pages they reach, ranked by similarity to the question
  (dense cosine plus the share of the question's words they hold);
- *text*: the retrieved pool (BM25 and dense) ranked by similarity to the question alone;
- *fused* (the single pass as it is) and *deeper* (its ranking without the rows the reader was already
  shown) need no module of their own: the mode reads them from the pipeline's run.
"""

from __future__ import annotations

from dataclasses import dataclass, field

from index.graph import EgoEdge, GraphIndex
from query.modes.graph_critic.plans import Plan
from query.modes.graph_critic.settings import GraphCriticSettings
from query.pipeline import Pipeline, StagedRun
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from query.text import content_words


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


def _words(text: str) -> set[str]:
    return set(content_words(text))


class Modules:
    """The hybrid and text modules; safe for concurrent use."""

    def __init__(
        self, pipeline: Pipeline, store: EvidenceStore, graph: GraphIndex, settings: GraphCriticSettings
    ):
        self.pipeline, self.store, self.graph, self.settings = pipeline, store, graph, settings

    def score(self, question: str, ids: list[str], rows: dict[str, EvidenceRow]) -> dict[str, float]:
        """Dense cosine plus ``word_weight`` times the share of the question's words a row holds."""
        if not ids:
            return {}
        dense = self.pipeline.similarity(question, ids)
        asked = _words(question)
        share = [len(asked & _words(rows[e].text)) / max(1, len(asked)) for e in ids]
        return {
            e: float(d) + self.settings.word_weight * s for e, d, s in zip(ids, dense, share, strict=True)
        }

    def hybrid(self, question: str, plan: Plan) -> Walk:
        """The ego-graph of the topic entities along the plan's relations, intersected for several
        topics: the rows on the topics' pages that carry those edges and the lead windows of the pages
        they reach, ranked by similarity to the question."""
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
        own = self.score(question, ids, rows)
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

    def text(self, question: str, staged: StagedRun) -> Walk:
        """The retrieved pool ranked by similarity to the question alone."""
        ids = list(staged.rankings["fused"])
        scores = self.score(question, ids, staged.rows)
        ranking = sorted(ids, key=lambda e: (-scores[e], e))[: self.settings.evidence]
        return Walk(ranking, {}, {}, [], set(), scores=scores)
