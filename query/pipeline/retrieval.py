"""Retrieval into one pool: every configured retriever, fused, then the retrievers that follow the first
fusion's head (the hop), fused again, and the pool's features for stage one.

The retrievers run in their configured order behind one protocol (``query.retrieve.base.Retriever``);
those with ``after_fusion`` read the first fusion's head as seeds. The question is embedded once: dense
retrieval and the pool's dense feature share the vector.
"""

from __future__ import annotations

from dataclasses import replace

import numpy as np

from index.embedder import Embedder
from query.pipeline.staged import StagedRun
from query.rerank.stage_one import FeatureContext, features
from query.retrieve.base import Ranked, RetrievalQuery, Retriever
from query.retrieve.evidence_store import EvidenceStore, VectorMatrix
from query.retrieve.retrievers import RetrievalSettings, fuse, linked_entity_ids
from query.timing import timed
from query.understand.understanding import Understanding

FUSED = "fused"


class Retrieval:
    """The retrieve stage of the pipeline; holds no mutable state, so threads may share it."""

    def __init__(
        self,
        retrievers: list[Retriever],
        store: EvidenceStore,
        embedder: Embedder,
        vectors: VectorMatrix,
        settings: RetrievalSettings,
    ):
        self.retrievers, self.store, self.embedder = retrievers, store, embedder
        self.vectors, self.settings = vectors, settings

    def encode(self, question: str) -> np.ndarray:
        """The question's vector, by the model the index was built with."""
        return self.embedder.encode([question], on_progress=lambda _n: None)[0]

    def run(self, understanding: Understanding) -> StagedRun:
        """Retrievers, fusion, the hop, and the pool's features: everything before re-ranking."""
        question, intent, links = understanding.question, understanding.intent, understanding.links
        timings = dict(understanding.timings)
        settings = self.settings
        entity_ids = linked_entity_ids(links, settings.entities_per_mention, settings.min_link_score)
        with timed(timings, "embed_question"):
            vector = self.encode(question)
        query = RetrievalQuery(question, intent, entity_ids, vector, exclude=frozenset(entity_ids))
        retrieved: dict[str, Ranked] = {}
        for retriever in (r for r in self.retrievers if not r.after_fusion):
            with timed(timings, f"retrieve_{retriever.name}"):
                retrieved[retriever.name] = retriever.run(query)
        with timed(timings, "fusion"):
            pool = fuse(list(retrieved.values()), settings)
        after = [r for r in self.retrievers if r.after_fusion]
        if after and settings.hop_seeds:
            for retriever in after:
                with timed(timings, f"retrieve_{retriever.name}"):
                    seeds = self.store.get(pool.ids[: settings.hop_seeds])
                    retrieved[retriever.name] = retriever.run(replace(query, seeds=seeds))
            with timed(timings, "fusion"):
                pool = fuse(list(retrieved.values()), settings)
        with timed(timings, "fusion"):
            rows = {row.evidence_id: row for row in self.store.get(pool.ids)}
            pool.ids = [e for e in pool.ids if e in rows]
        with timed(timings, "features"):
            dense = self.vectors.similarity(vector, pool.ids)
            context = FeatureContext.of(intent, links)
            matrix = features([rows[e] for e in pool.ids], pool, dense, context)
        return StagedRun(
            question, intent, links, retrieved, pool, rows, matrix, {FUSED: list(pool.ids)}, timings=timings
        )
