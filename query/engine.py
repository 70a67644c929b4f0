"""The query engine: it opens one index version, understands each question once, routes it to a reasoning
mode and returns the mode's answer.

Everything that answers lives below it: the understanding (``query.understand``: intent, linked
entities), the retrieve → re-rank → read pipeline (``query.pipeline``) and the modes with their router
(``query.modes``). The engine only builds them from one ``EngineConfig`` and hands each mode what it may
use (``ModeContext``): the KG lookup answers from a typed statement when the question names an entity
and a property the index holds; table-sql computes over a table built for the question; graph-critic
walks the graph under a critic; retrieve-read runs the pipeline and always answers.

``Engine.open(index_dir)`` opens one index version and keeps it for its life; ``ask`` answers one
question, ``ask_many`` several on a thread pool (every stage reads shared, read-only state; the
model-backed stages lock around their model). llama.cpp's Python API evaluates one sequence per model,
so with the LLM reader ``ask_many`` overlaps one question's retrieval with another's reading rather
than batching readings.
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterable, Iterator
from concurrent.futures import ThreadPoolExecutor
from dataclasses import replace
from pathlib import Path

import numpy as np

from index.reader import IndexReader
from query.config import EngineConfig
from query.llm.backends import LlmUnavailable
from query.llm.chat import Llm
from query.modes import ModeContext, Router, build_modes
from query.pipeline import Reranking, Retrieval, RetrieveReadPipeline
from query.read.candidates import CandidateAnswerer
from query.read.entity_kinds import EntityKinds
from query.read.readers import CANDIDATES, READERS, CandidateReader, ReaderContext
from query.rerank.pair_scorers import open_pair_scorer
from query.rerank.stage_one import LinearRanker
from query.retrieve.evidence_store import EvidenceStore, VectorMatrix
from query.retrieve.retrievers import RETRIEVERS, HopRetriever, RetrieverContext
from query.understand.linking import EntityLinker, EntityTable
from query.understand.properties import PropertyLabels
from query.understand.understanding import INTENT_EXTRACTORS, IntentContext, Understander, Understanding
from schemas.answers import StageTiming
from schemas.query import QueryResult
from schemas.settings import DEFAULT_STATE_DIR, bundled_property_table

__all__ = ["Engine", "EngineConfig"]

log = logging.getLogger(__name__)


class Engine:
    def __init__(
        self,
        reader: IndexReader,
        config: EngineConfig | None = None,
        *,
        state_dir: Path | None = None,
        llm: Llm | None = None,
    ):
        """``state_dir``: where the bundled models are assembled (``<state>/models``); the CLI and the DAGs
        pass their settings' state folder, library callers may (default: the repository's ``.state``).

        ``llm``: the instruct model, opened by the caller and shared (a ``LiveEngine`` keeps one for every
        version it opens: the model does not depend on the index); this engine then neither loads nor
        closes one. None: the engine loads its own when the config wants one."""
        self.config = config or EngineConfig()
        self.state_dir = Path(state_dir) if state_dir is not None else DEFAULT_STATE_DIR
        self.reader = reader
        self.index_version = reader.version
        self._threads: ThreadPoolExecutor | None = None  # ask_many's, made on its first use
        self._thread_count = 0
        self._pool_lock = threading.Lock()
        self.properties = PropertyLabels.load(self.config.property_table or bundled_property_table())
        self.entities = EntityTable.from_reader(reader)
        self.understander = self._understander()
        self._owns_llm = llm is None
        if llm is not None or not self.config.wants_llm:
            self.llm, llm_error = llm, None
        else:
            self.llm, llm_error = open_llm(self.config, self.state_dir)
        self.pipeline = self._pipeline(llm_error)
        context = ModeContext(
            self.pipeline,
            reader.statements if reader.has_statements else None,
            self.properties,
            reader.graph,
            reader.aliases,
            tables=reader.tables if reader.has_tables else None,
            llm=self.llm,
            kg_lookup=self.config.kg_lookup,
            table_sql=self.config.table_sql,
            graph_critic=self.config.graph_critic,
            kg_plan=self.config.kg_plan,
            entities=self.entities,
            in_text=reader.bm25.occurs,
        )
        self.router = Router(build_modes(self.config.modes, context))
        self._context = context
        self._candidate_router: Router | None = None  # the fallback route, made on its first use
        # load the question encoder and the vector matrix now: not inside the first question's timings
        self.pipeline.retrieval.encode("warm-up")
        self.pipeline.retrieval.vectors.similarity(
            np.zeros(self.pipeline.retrieval.embedder.dimension, np.float32), []
        )

    @classmethod
    def open(
        cls,
        index_dir: Path,
        config: EngineConfig | None = None,
        *,
        state_dir: Path | None = None,
        llm: Llm | None = None,
    ) -> Engine:
        """Open the ``current`` version under ``index_dir`` (or the version folder itself)."""
        reader = IndexReader.open(Path(index_dir))
        try:
            return cls(reader, config, state_dir=state_dir, llm=llm)
        except Exception:
            reader.close()
            raise

    def _understander(self) -> Understander:
        settings = self.config.understand
        context = IntentContext(self.reader.aliases, self.properties, self.entities, settings.intent)
        extractor = INTENT_EXTRACTORS.create(settings.intent.extractor, context)
        linker = EntityLinker(self.reader.aliases, self.entities, settings.linking)
        return Understander(extractor, linker, settings.linking.k)

    def _pipeline(self, llm_error: str | None) -> RetrieveReadPipeline:
        """The retrieve → re-rank → read pipeline over this version, as the config describes it."""
        config, reader = self.config, self.reader
        store = EvidenceStore.open(reader.path)
        parts = RetrieverContext(reader.graph, store, reader.bm25, reader.vectors, config.retrieval)
        retrievers = [RETRIEVERS.create(name, parts) for name in config.retrieval.retrievers]
        embedder = reader.vectors.embedder()
        vectors = VectorMatrix(reader.vectors.all_vectors)
        retrieval = Retrieval(retrievers, store, embedder, vectors, config.retrieval)
        rerank = config.rerank
        ranker = LinearRanker.load(rerank.ranker) if rerank.ranker else LinearRanker()
        pair_scorer = open_pair_scorer(rerank.stage2) if rerank.stage2 is not None else None
        reranking = Reranking(rerank, ranker, pair_scorer)
        kinds = EntityKinds(reader.statements if reader.has_statements else None, self.entities.item_of_page)
        answerer = CandidateAnswerer(config.answer, specificity=reader.bm25.specificity, kinds=kinds)
        candidates = CandidateReader(answerer, self.label)
        readers = ReaderContext(candidates, self.llm, config.llm.backend, llm_error, config.llm_reader)
        chosen = READERS.create(config.reader, readers)
        hop = HopRetriever(reader.graph, store, config.retrieval)  # table-sql's hop from one row
        return RetrieveReadPipeline(retrieval, reranking, chosen, candidates, hop, self.index_version)

    def label(self, entity_id: str) -> str | None:
        info = self.entities.get(entity_id)
        return info.label if info is not None else None

    @property
    def name(self) -> str:
        return "engine" if self.llm is None else f"engine+llm:{self.llm.name}"

    # -- public API ---------------------------------------------------------------------------------

    def understand(self, question: str) -> Understanding:
        """Intent and linked entities: what every mode starts from. An empty question, or one that is not
        Unicode, is refused here with a ``ValueError`` before any index is read."""
        return self.understander.run(question)

    def ask(self, question: str, *, reader: str | None = None) -> QueryResult:
        """The router's answer: the first configured mode, in order of their estimates, that answers.

        ``reader="candidates"`` answers without the instruct model even when one is configured (a server
        whose LLM queue is full falls back so); any other value, or None, is the configured reader."""
        started = time.perf_counter()
        router = self._fallback_router() if reader == CANDIDATES and self.llm is not None else self.router
        result = router.run(self.understand(question))
        total = StageTiming(stage="total", ms=round((time.perf_counter() - started) * 1000, 3))
        return result.model_copy(update={"timings": [*result.timings, total]})

    def _fallback_router(self) -> Router:
        """The same modes over the same opened index, read by the candidate reader and with no model:
        built once, sharing every index part and the retrieval with the configured route."""
        with self._pool_lock:
            if self._candidate_router is None:
                p = self.pipeline
                pipeline = RetrieveReadPipeline(
                    p.retrieval, p.reranking, p.candidates, p.candidates, p.hop, p.index_version
                )
                context = replace(self._context, pipeline=pipeline, llm=None)
                self._candidate_router = Router(build_modes(self.config.modes, context))
            return self._candidate_router

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

    def close(self) -> None:
        with self._pool_lock:
            if self._threads is not None:
                self._threads.shutdown(wait=True)
                self._threads = None
        if self.llm is not None and self._owns_llm:
            self.llm.close()
        self.reader.close()

    def __enter__(self) -> Engine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def open_llm(config: EngineConfig, state_dir: Path) -> tuple[Llm | None, str | None]:
    """The configured model, loaded now (not inside the first question's timings), or None and why. A
    model that cannot load leaves the candidate reader answering; every result then says why."""
    try:
        return Llm.open(config.llm.in_state_dir(state_dir)), None
    except LlmUnavailable as exc:
        log.warning("the LLM reader is unavailable, the candidate reader answers instead: %s", exc)
        return None, str(exc)
