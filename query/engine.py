"""The query engine: question → intent → linked entities → a router over reasoning modes → answer.

Understanding (intent, linking) is done once per question and shared by every mode. The router
(``query.modes``) orders the configured modes by their own estimates and keeps the first that answers:
the KG lookup answers from a typed statement when the question names an entity and a property the
index holds; the retrieve → re-rank → read pipeline defined here answers everything else. Its pool is
fused twice: BM25, dense and the KG walk first, then once more with the hop list that follows the links
of the first fusion's head.

The answer is read from the final evidence by the LLM reader (``reader = "llm"``, the default: an
instruct model answers from numbered rows, checked against them) or by the candidate reader
(``"candidates"``, the fast path, and the LLM reader's fallback).

``Engine.open(index_dir)`` opens one index version and keeps it for its life; ``ask`` answers one
question, ``ask_many`` several on a thread pool (every stage reads shared, read-only state; the
model-backed stages lock around their model). llama.cpp's Python API evaluates one sequence per model,
so with the LLM reader ``ask_many`` overlaps one question's retrieval with another's reading rather
than batching readings. ``run`` returns every intermediate ranking, which the
evaluation harness uses to measure each stage from one pass.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from index.embedder import Embedder
from index.reader import IndexReader
from query.config import EngineConfig
from query.llm.backends import LlmUnavailable
from query.llm.chat import Llm
from query.modes import ModeContext, Router, Understanding, build_modes
from query.read.candidates import AnswerChoice, CandidateAnswerer
from query.read.llm_reader import LlmReader
from query.rerank.pair_scorers import PairScorer, open_pair_scorer
from query.rerank.stage_one import FEATURES, FeatureContext, LinearRanker, features, stage_one, standardize
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore, VectorMatrix
from query.retrieve.retrievers import (
    Bm25Retriever,
    DenseRetriever,
    FusedPool,
    HopRetriever,
    KgRetriever,
    Ranked,
    fuse,
    lexical_query,
    linked_entity_ids,
)
from query.understand.intent import INTENT_EXTRACTORS
from query.understand.linking import EntityLinker, EntityTable
from query.understand.properties import PropertyLabels
from schemas.answers import StageTiming, question_text
from schemas.query import Intent, LinkedMention, LlmReading, QueryResult
from schemas.settings import HqaSettings

__all__ = ["Engine", "EngineConfig", "Reading", "StagedRun"]

log = logging.getLogger(__name__)

CANDIDATES = "candidates"


@dataclass
class StagedRun:
    """Everything one question went through; each ranking is a list of evidence ids, best first."""

    question: str
    intent: Intent
    links: list[LinkedMention]
    retrieved: dict[str, Ranked]
    pool: FusedPool
    rows: dict[str, EvidenceRow]
    features: np.ndarray  # one row per pool id, in pool order
    rankings: dict[str, list[str]] = field(default_factory=dict)
    final_scores: dict[str, float] = field(default_factory=dict)
    timings: dict[str, float] = field(default_factory=dict)
    added_by: dict[str, str] = field(default_factory=dict)  # rows a mode added past the pool → that mode
    reader_note: str | None = None  # what a mode tells the LLM reader about the first rows (table-sql's pick)


class Engine:
    def __init__(
        self, reader: IndexReader, config: EngineConfig | None = None, settings: HqaSettings | None = None
    ):
        """``settings``: the caller's loaded settings (``--config``, environment); they place the
        property table and the model cache. Without them the environment's defaults are read."""
        self.config = config or EngineConfig()
        hqa = settings or HqaSettings()
        self.state_dir = hqa.state_dir
        self.reader = reader
        self.index_version = reader.version
        self._threads: ThreadPoolExecutor | None = None  # ask_many's, made on its first use
        self._thread_count = 0
        self._pool_lock = threading.Lock()
        version_dir = reader.path
        properties = PropertyLabels.load(self.config.property_table or hqa.property_table)
        self.entities = EntityTable.from_reader(reader)
        self.properties = properties
        extractor = INTENT_EXTRACTORS[self.config.intent]
        self.intent_extractor = extractor(reader.aliases, properties, entities=self.entities)
        self.linker = EntityLinker(reader.aliases, self.entities, k=self.config.link_k)
        self.store = EvidenceStore.open(version_dir)
        settings = self.config.retrieval
        self.kg = KgRetriever(reader.graph, self.store, settings)
        self.bm25 = Bm25Retriever(reader.bm25, settings)
        self.dense = DenseRetriever(reader.vectors, settings)
        self.hop = HopRetriever(reader.graph, self.store, settings)
        self.embedder = Embedder.for_index(reader.vectors.stats.embedding_model)
        self.vectors = VectorMatrix(reader.vectors.all_vectors)
        rerank = self.config.rerank
        self.ranker = LinearRanker.load(rerank.ranker) if rerank.ranker else LinearRanker()
        self.pair_scorer: PairScorer | None = (
            open_pair_scorer(rerank.stage2, **rerank.stage2_settings) if rerank.stage2 else None
        )
        self.answerer = CandidateAnswerer(self.config.answer, specificity=reader.bm25.specificity)
        self.llm_reader: LlmReader | None = None
        self.llm_unavailable: str | None = None
        if self.config.reader == "llm":
            self.llm_reader = self._open_llm_reader(hqa)
        statements = reader.statements if reader.has_statements else None
        context = ModeContext(
            self,
            self.store,
            statements,
            properties,
            self.index_version,
            self.config.kg_lookup,
            tables=reader.tables if reader.has_tables else None,
            table_sql=self.config.table_sql,
            llm=self.llm_reader.llm if self.llm_reader is not None else None,
            graph=reader.graph,
            aliases=reader.aliases,
            graph_critic=self.config.graph_critic,
        )
        self.router = Router(build_modes(self.config.modes, context))
        # load the question encoder and the vector matrix now: not inside the first question's timings
        self.embedder.encode(["warm-up"], on_progress=lambda _n: None)
        self.vectors.similarity(np.zeros(self.embedder.dimension, dtype=np.float32), [])

    @classmethod
    def open(
        cls, index_dir: Path, config: EngineConfig | None = None, settings: HqaSettings | None = None
    ) -> Engine:
        """Open the ``current`` version under ``index_dir`` (or the version folder itself)."""
        reader = IndexReader.open(Path(index_dir))
        try:
            return cls(reader, config, settings)
        except Exception:
            reader.close()
            raise

    def _open_llm_reader(self, hqa: HqaSettings) -> LlmReader | None:
        """The configured model, loaded now (not inside the first question's timings). A model that
        cannot load leaves the candidate reader answering; every result then says why."""
        try:
            llm = Llm.open(self.config.llm.in_state_dir(hqa.state_dir))
        except LlmUnavailable as exc:
            self.llm_unavailable = str(exc)
            log.warning("the LLM reader is unavailable, the candidate reader answers instead: %s", exc)
            return None
        return LlmReader(llm, self.config.llm_reader)

    def label(self, entity_id: str) -> str | None:
        info = self.entities.get(entity_id)
        return info.label if info is not None else None

    @property
    def name(self) -> str:
        return "engine" if self.llm_reader is None else f"engine+{self.llm_reader.name}"

    # -- stages -------------------------------------------------------------------------------------

    def understand(self, question: str) -> Understanding:
        """Intent and linked entities: what every mode starts from. An empty question, or one that is not
        Unicode, is refused here with a ``ValueError`` (``schemas.answers.question_text``), before any
        index is read."""
        question_text(question)
        timings: dict[str, float] = {}
        with _timed(timings, "intent"):
            intent = self.intent_extractor.run(question)
        with _timed(timings, "linking"):
            links = self.linker.run(question, intent.mentions, k=self.config.link_k)
        return Understanding(question, intent, links, timings)

    def run(self, question: str, understanding: Understanding | None = None) -> StagedRun:
        """Intent, linking, retrieval, fusion and both re-ranking stages, with every ranking kept."""
        staged = self.retrieve(question, understanding)
        self.rerank(staged)
        return staged

    def retrieve(self, question: str, understanding: Understanding | None = None) -> StagedRun:
        """Intent, linking, the retrievers, fusion and the pool's features: everything before re-ranking."""
        understanding = understanding or self.understand(question)
        timings = dict(understanding.timings)
        intent, links = understanding.intent, understanding.links
        settings = self.config.retrieval
        entity_ids = linked_entity_ids(links, settings.entities_per_mention, settings.min_link_score)
        retrieved: dict[str, Ranked] = {}
        if "kg" in settings.retrievers:
            with _timed(timings, "retrieve_kg"):
                retrieved["kg"] = self.kg.run(intent, entity_ids)
        if "bm25" in settings.retrievers:
            with _timed(timings, "retrieve_bm25"):
                retrieved["bm25"] = self.bm25.run(lexical_query(question, intent), entity_ids)
        with _timed(timings, "embed_question"):
            query_vector = self.embedder.encode([question], on_progress=lambda _n: None)[0]
        if "dense" in settings.retrievers:
            with _timed(timings, "retrieve_dense"):
                retrieved["dense"] = self.dense.run(query_vector)
        with _timed(timings, "fusion"):
            pool = fuse(list(retrieved.values()), settings)
        if "hop" in settings.retrievers and settings.hop_seeds:
            with _timed(timings, "retrieve_hop"):
                seeds = self.store.get(pool.ids[: settings.hop_seeds])
                retrieved["hop"] = self.hop.run(seeds, exclude=set(entity_ids))
            with _timed(timings, "fusion"):
                pool = fuse(list(retrieved.values()), settings)
        with _timed(timings, "fusion"):
            rows = {row.evidence_id: row for row in self.store.get(pool.ids)}
            pool.ids = [e for e in pool.ids if e in rows]
        with _timed(timings, "features"):
            dense = self.vectors.similarity(query_vector, pool.ids)
            ctx = FeatureContext.of(intent, links)
            matrix = features([rows[e] for e in pool.ids], pool, dense, ctx)
        staged = StagedRun(question, intent, links, retrieved, pool, rows, matrix, timings=timings)
        staged.rankings["fused"] = list(pool.ids)
        return staged

    def rerank(
        self,
        staged: StagedRun,
        ranker: LinearRanker | None = None,
        pair_cache: dict[str, float] | None = None,
    ) -> None:
        """Stage one (features → linear score over the fused top 100) and stage two (pair scorer, keep 30).

        Each ranking in ``staged.rankings`` covers the whole pool: a stage re-orders its head and leaves
        the tail in the previous stage's order, so answer presence can be read at any depth.
        ``pair_cache`` (evidence id → pair score) lets a caller re-rank the same question again
        without scoring a text twice.
        """
        rerank = self.config.rerank
        ids = staged.rankings["fused"]
        with _timed(staged.timings, "rerank1"):
            if rerank.stage1 and ids:
                ids, scores = stage_one(ranker or self.ranker, staged.features, ids, rerank.stage1_keep)
                stage1_scores = dict(zip(ids, (float(x) for x in scores), strict=False))
            else:
                stage1_scores = {e: staged.pool.fused[e] for e in ids[: rerank.stage1_keep]}
            staged.rankings["rerank1"] = ids
        kept = ids[: rerank.stage1_keep]
        final = {e: stage1_scores[e] for e in kept}
        if self.pair_scorer is not None and kept:
            with _timed(staged.timings, "rerank2"):
                cache = pair_cache if pair_cache is not None else {}
                todo = [e for e in kept if e not in cache]
                if todo:
                    scored = self.pair_scorer.score(staged.question, [staged.rows[e].text for e in todo])
                    cache.update(zip(todo, (float(x) for x in scored), strict=True))
                pair = np.array([cache[e] for e in kept], dtype=np.float32)
                first = standardize(np.array([stage1_scores[e] for e in kept], dtype=np.float32))
                mixed = (1 - rerank.stage2_weight) * first + rerank.stage2_weight * standardize(pair)
                order = np.argsort(-mixed, kind="stable")
                kept = [kept[i] for i in order]
                final = {kept[j]: float(mixed[i]) for j, i in enumerate(order)}
            staged.rankings["rerank2"] = kept + ids[rerank.stage1_keep :]
        staged.final_scores = final
        staged.rankings["final"] = kept[: rerank.stage2_keep]

    def read(self, staged: StagedRun, reader: LlmReader | str | None = None) -> Reading:
        """Stage five: the answer from the final evidence. ``reader``: an LLM reader, "candidates", or
        None for the configured one. The candidate reader always runs: it is the LLM reader's fallback."""
        evidence = [staged.rows[e] for e in staged.rankings["final"]]
        llm_reader = self.llm_reader if reader is None else (None if reader == CANDIDATES else reader)
        with _timed(staged.timings, "answer"):
            choice = self.answerer.run(staged.intent, staged.links, evidence, self.label)
        if isinstance(llm_reader, LlmReader):
            with _timed(staged.timings, "read_llm"):
                read = llm_reader.read(staged.question, evidence, choice, note=staged.reader_note)
            return Reading(read.choice, llm_reader.name, read.reading)
        if reader is None and self.llm_unavailable is not None:
            unavailable = LlmReading(
                model=self.config.llm.backend, outcome="unavailable", error=self.llm_unavailable
            )
            return Reading(choice, self.answerer.name, unavailable)
        return Reading(choice, self.answerer.name, None)

    def similarity(self, question: str, evidence_ids: list[str]) -> np.ndarray:
        """Cosine similarity of the question to each row's vector (0 for a row without one)."""
        query_vector = self.embedder.encode([question], on_progress=lambda _n: None)[0]
        return self.vectors.similarity(query_vector, evidence_ids)

    def hop_from(self, rows: list[EvidenceRow]) -> list[str]:
        """Lead passages of the pages ``rows`` link to, best first (the table-sql mode's hop)."""
        return self.hop.run(rows).ids

    # -- public API ---------------------------------------------------------------------------------

    def retrieve_and_read(self, understanding: Understanding) -> QueryResult:
        """The retrieve → re-rank → read pipeline on an understood question (the ``retrieve-read`` mode)."""
        staged = self.run(understanding.question, understanding)
        return self.result(staged, self.read(staged))

    def ask(self, question: str) -> QueryResult:
        """The router's answer: the first configured mode, in order of their estimates, that answers."""
        started = time.perf_counter()
        result = self.router.run(self.understand(question))
        total = StageTiming(stage="total", ms=round((time.perf_counter() - started) * 1000, 3))
        return result.model_copy(update={"timings": [*result.timings, total]})

    def ask_many(self, questions: Iterable[str], workers: int = 1) -> Iterator[QueryResult]:
        """Answers in input order; ``workers`` threads share this engine.

        The threads are the engine's own, kept between calls: a pool per call started new threads every
        batch, each opening per-thread resources (a Kùzu connection) again.
        """
        if workers <= 1:
            yield from (self.ask(q) for q in questions)
            return
        yield from self._pool(workers).map(self.ask, questions)

    def _pool(self, workers: int) -> ThreadPoolExecutor:
        """The engine's pool of at least ``workers`` threads; a larger request replaces it (the old pool
        finishes what it was given, then its threads end)."""
        with self._pool_lock:
            if self._threads is None or self._thread_count < workers:
                if self._threads is not None:
                    self._threads.shutdown(wait=False)
                self._threads = ThreadPoolExecutor(max_workers=workers, thread_name_prefix="hqa-ask")
                self._thread_count = workers
            return self._threads

    def result(self, staged: StagedRun, read: Reading) -> QueryResult:
        choice = read.choice
        evidence = []
        # the features' rows follow pool.ids; pool.ranks may also name rows the store could not return
        # (dropped from ids) — a mode's own rows (a hop, a graph walk) may be among those
        position = {e: i for i, e in enumerate(staged.pool.ids)}
        for evidence_id in staged.rankings["final"]:
            row = staged.rows[evidence_id]
            signals = {}
            if evidence_id in position:
                i = position[evidence_id]
                signals = {k: round(float(v), 4) for k, v in zip(FEATURES, staged.features[i], strict=True)}
                signals = {k: v for k, v in signals.items() if v}
            ranks = {
                name: ranking.index(evidence_id) + 1
                for name, ranking in staged.rankings.items()
                if name != "final" and evidence_id in ranking
            }
            pooled = staged.pool.ranks.get(evidence_id, {})
            ranks.update(pooled)
            evidence.append(
                row.scored(
                    staged.final_scores.get(evidence_id, 0.0),
                    signals=signals,
                    ranks=ranks,
                    retrieved_by=sorted(pooled) or [staged.added_by.get(evidence_id, "mode")],
                )
            )
        return QueryResult(
            question=staged.question,
            answer=choice.answer,
            answer_entity_id=choice.entity_id,
            unknown=choice.unknown,
            confidence=choice.confidence,
            evidence=evidence,
            supporting_evidence_ids=choice.supporting,
            candidates=choice.candidates,
            intent=staged.intent,
            links=staged.links,
            timings=[StageTiming(stage=k, ms=round(v, 3)) for k, v in staged.timings.items()],
            reader=read.reader,
            index_version=self.index_version,
            reading=read.reading,
            unit=read.reading.unit if read.reading is not None else None,
        )

    def close(self) -> None:
        with self._pool_lock:
            if self._threads is not None:
                self._threads.shutdown(wait=True)
                self._threads = None
        if self.llm_reader is not None:
            self.llm_reader.llm.close()
        self.reader.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


@dataclass
class Reading:
    """Stage five's outcome: the answer choice, who read it, and the LLM reader's account if it read."""

    choice: AnswerChoice
    reader: str
    reading: LlmReading | None = None


@contextmanager
def _timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + (time.perf_counter() - started) * 1000
