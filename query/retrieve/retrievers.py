"""Stage 3: evidence from the KG, BM25 and dense retrieval, fused into one deduplicated pool.

Each retriever returns a ranked list of evidence ids with its own scores; reciprocal-rank fusion
(RRF) merges them without calibrating BM25 scores against cosines, and every pool member keeps each
retriever's rank and score as signals for the re-rankers. The KG retriever walks one hop from the
linked entities (their statements with qualifiers, and the evidence of their pages); it orders what it
finds by how well a statement's property and qualifier years match the intent, so "population of
Belgium in 2015" puts the P1082 statement of 2015 first among hundreds of Belgium facts.

The hop retriever follows the links of the best evidence found so far (the first fusion's head) one step
in the graph, to the lead windows of the linked pages: "who created the series in which Robert, played by
Nonso Anozie, appeared?" finds the filmography row by its words, and the answer in the lead of the page
that row's cell links to ("Prime Suspect … devised by Lynda La Plante"), which shares no word with the
question but the series' name. The second fusion adds that list to the others.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from pydantic import BaseModel, Field, field_validator

from index.bm25 import Bm25Index
from index.graph import GraphIndex
from index.vectors import VectorIndex
from query.registry import Registry
from query.retrieve.base import RETRIEVER_NAMES, Ranked, RetrievalQuery, Retriever
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from schemas.evidence import SOURCE_TYPES, SourceType
from schemas.query import Intent, LinkedMention


class RetrievalSettings(BaseModel):
    """How much each retriever fetches and how the lists are fused."""

    pool_size: int = Field(1000, ge=1, description="evidence kept after fusion")
    retrievers: list[str] = Field(
        default_factory=lambda: list(RETRIEVER_NAMES),
        description="retrievers run, by name (``query.retrieve.registry.RETRIEVERS``); each list is fused",
    )
    sources: list[SourceType] = Field(default_factory=lambda: list(SOURCE_TYPES))
    bm25_k: int = Field(1000, ge=1)
    dense_k: int = Field(300, ge=1, description="ANN candidates; dense also scores every pool member")
    kg_per_entity: int = Field(100, ge=1, description="evidence per linked entity, one hop")
    entities_per_mention: int = Field(1, ge=1, description="candidates per mention the KG walk follows")
    min_link_score: float = Field(0.05, ge=0.0, description="weaker links: not walked, not boosted")
    entity_boost: float = Field(2.0, ge=0.0, description="BM25 boost for evidence of linked entities")
    hop_seeds: int = Field(20, ge=0, description="head of the first fusion whose links the hop follows")
    hop_per_entity: int = Field(3, ge=1, description="lead windows read per linked page")
    hop_from: list[SourceType] = Field(
        default_factory=lambda: ["table", "infobox", "kg"],
        description="seed sources whose links the hop follows: a cell's link names the row's value, a "
        "passage's links are mostly asides",
    )
    rrf_k: int = Field(60, ge=1)
    weights: dict[str, float] = Field(
        default_factory=lambda: {"kg": 1.0, "bm25": 1.0, "dense": 0.5, "hop": 3.0},
        description="RRF weight per list; chosen on the first 600 OTT-QA dev questions (see the README)",
    )

    @field_validator("retrievers")
    @classmethod
    def _known_retrievers(cls, value: list[str]) -> list[str]:
        if not value:
            raise ValueError("retrievers must name at least one retriever")
        for name in value:
            RETRIEVERS.check(name)
        return value


def linked_entity_ids(links: list[LinkedMention], per_mention: int, min_score: float) -> list[str]:
    """The entities the engine trusts enough to walk and boost: top candidates of each mention."""
    seen: dict[str, None] = {}
    for link in links:
        for cand in link.candidates[:per_mention]:
            if cand.score >= min_score:
                seen.setdefault(cand.entity_id, None)
    return list(seen)


def lexical_query(question: str, intent: Intent) -> str:
    """The question plus the labels of properties the relation names outright ('population count')."""
    extra = [
        p.label for p in intent.properties[:2] if p.score >= 0.8 and p.label.lower() not in question.lower()
    ]
    return " ".join([question, *extra])


_YEAR = re.compile(r"\b(1[0-9]{3}|20[0-9]{2})\b")


class KgRetriever:
    """One hop around the linked entities in the Kùzu graph, ordered by fit to the intent."""

    name = "kg"
    after_fusion = False

    def __init__(self, graph: GraphIndex, store: EvidenceStore, settings: RetrievalSettings):
        self.graph, self.store, self.settings = graph, store, settings

    def run(self, query: RetrievalQuery) -> Ranked:
        return self.walk(query.intent, query.entity_ids)

    def walk(self, intent: Intent, entity_ids: list[str]) -> Ranked:
        ranked = Ranked(self.name)
        if not entity_ids:
            return ranked
        ids: dict[str, int] = {}
        for order, entity_id in enumerate(entity_ids):
            for evidence_id in self.graph.evidence_for_entity(entity_id, self.settings.kg_per_entity):
                ids.setdefault(evidence_id, order)
        rows = self.store.get(list(ids))
        wanted = {p.property: p.score for p in intent.properties}
        years = {str(y) for y in intent.time.years}
        allowed = set(self.settings.sources)
        scored = []
        for position, row in enumerate(rows):
            if row.source_type not in allowed:
                continue
            score = 1.0 / (1 + ids[row.evidence_id])  # earlier (better linked) entities first
            score += 2.0 * wanted.get(row.raw_provenance.get("property") or "", 0.0)
            if years and years & set(_YEAR.findall(row.text)):
                score += 1.0
            scored.append((score, -position, row.evidence_id))
        scored.sort(reverse=True)
        ranked.ids = [e for _, _, e in scored]
        ranked.scores = [s for s, _, _ in scored]
        return ranked


class HopRetriever:
    """One hop from ranked evidence along its links (Kùzu) to the lead windows of the linked pages.

    A seed's own page is not followed (its first entity is the page's, or a statement's subject), nor
    are the question's linked entities (the KG walk reads those). Windows are ranked by the rank of the
    first seed that links their page, then by their place in the lead.
    """

    name = "hop"
    after_fusion = True

    def __init__(self, graph: GraphIndex, store: EvidenceStore, settings: RetrievalSettings):
        self.graph, self.store, self.settings = graph, store, settings

    def run(self, query: RetrievalQuery) -> Ranked:
        return self.follow(query.seeds, query.exclude)

    def follow(self, seeds: list[EvidenceRow], exclude: set[str] | frozenset[str] = frozenset()) -> Ranked:
        """The lead windows of the pages ``seeds`` link to (also the table-sql mode's hop from one row)."""
        ranked = Ranked(self.name)
        first_seed: dict[str, int] = {}
        follow = set(self.settings.hop_from)
        for rank, row in enumerate(seeds):
            if row.source_type not in follow:
                continue
            for entity_id in row.entity_ids[1:]:
                if entity_id not in exclude:
                    first_seed.setdefault(entity_id, rank)
        pairs = self.graph.lead_evidence(list(first_seed))
        rows = {row.evidence_id: row for row in self.store.get(list(dict.fromkeys(e for _, e in pairs)))}
        by_entity: dict[str, list[EvidenceRow]] = {}
        for entity_id, evidence_id in pairs:
            if evidence_id in rows:
                by_entity.setdefault(entity_id, []).append(rows[evidence_id])
        allowed = set(self.settings.sources)
        found: dict[str, tuple[int, int]] = {}
        for entity_id, windows in by_entity.items():
            windows.sort(key=_lead_position)
            for position, row in enumerate(windows[: self.settings.hop_per_entity]):
                if row.source_type in allowed:
                    key = (first_seed[entity_id], position)
                    found[row.evidence_id] = min(found.get(row.evidence_id, key), key)
        order = sorted(found, key=lambda e: (found[e], e))
        ranked.ids = order
        ranked.scores = [1.0 / (1 + found[e][0]) for e in order]
        return ranked


def _lead_position(row: EvidenceRow) -> tuple[int, int, str]:
    prov = row.raw_provenance
    return (prov.get("passage_order") or 0, prov.get("window") or 0, row.evidence_id)


class Bm25Retriever:
    """Tantivy BM25 over the question plus the labels of properties it names outright, boosting the
    evidence of the linked entities."""

    name = "bm25"
    after_fusion = False

    def __init__(self, index: Bm25Index, settings: RetrievalSettings):
        self.index, self.settings = index, settings

    def run(self, query: RetrievalQuery) -> Ranked:
        return self.search(lexical_query(query.question, query.intent), query.entity_ids)

    def search(self, text: str, entity_ids: list[str], k: int | None = None) -> Ranked:
        sources = self.settings.sources if set(self.settings.sources) != set(SOURCE_TYPES) else None
        hits = self.index.search(
            text,
            k or self.settings.bm25_k,
            source_types=sources,
            boost_entities=entity_ids or None,
            entity_boost=self.settings.entity_boost,
        )
        return Ranked(self.name, [h.evidence_id for h in hits], [h.score for h in hits])


class DenseRetriever:
    """Nearest neighbours of the question's vector in LanceDB."""

    name = "dense"
    after_fusion = False

    def __init__(self, index: VectorIndex, settings: RetrievalSettings):
        self.index, self.settings = index, settings

    def run(self, query: RetrievalQuery) -> Ranked:
        if query.vector is None:
            raise ValueError("the dense retriever needs the question's vector (RetrievalQuery.vector)")
        sources = self.settings.sources if set(self.settings.sources) != set(SOURCE_TYPES) else None
        hits = self.index.search(query.vector, self.settings.dense_k, source_types=sources)
        return Ranked(self.name, [h.evidence_id for h in hits], [h.score for h in hits])


@dataclass
class FusedPool:
    """The pool after fusion: ids best first, fused scores, and each list's rank and score per id."""

    ids: list[str]
    fused: dict[str, float]
    ranks: dict[str, dict[str, int]]
    scores: dict[str, dict[str, float]]


def fuse(lists: list[Ranked], settings: RetrievalSettings) -> FusedPool:
    """Weighted reciprocal-rank fusion, deduplicated, cut to the pool size."""
    fused: dict[str, float] = {}
    ranks: dict[str, dict[str, int]] = {}
    scores: dict[str, dict[str, float]] = {}
    for ranked in lists:
        weight = settings.weights.get(ranked.name, 1.0)
        for rank, (evidence_id, score) in enumerate(zip(ranked.ids, ranked.scores, strict=True), start=1):
            if ranked.name in ranks.get(evidence_id, {}):
                continue  # a list that repeats an id counts it once, at its best rank
            fused[evidence_id] = fused.get(evidence_id, 0.0) + weight / (settings.rrf_k + rank)
            ranks.setdefault(evidence_id, {})[ranked.name] = rank
            scores.setdefault(evidence_id, {})[ranked.name] = score
    order = sorted(fused, key=lambda e: (-fused[e], e))[: settings.pool_size]
    return FusedPool(order, fused, ranks, scores)


@dataclass(frozen=True)
class RetrieverContext:
    """What a retriever may be built from: the opened index parts and the retrieval settings."""

    graph: GraphIndex
    store: EvidenceStore
    bm25: Bm25Index
    vectors: VectorIndex
    settings: RetrievalSettings


RETRIEVERS: Registry[RetrieverContext, Retriever] = Registry(
    "retriever",
    {
        "kg": lambda c: KgRetriever(c.graph, c.store, c.settings),
        "bm25": lambda c: Bm25Retriever(c.bm25, c.settings),
        "dense": lambda c: DenseRetriever(c.vectors, c.settings),
        "hop": lambda c: HopRetriever(c.graph, c.store, c.settings),
    },
)
"""Retrievers by the names ``RetrievalSettings.retrievers`` gives; a new one registers here."""
