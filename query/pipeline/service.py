"""The retrieve → re-rank → read pipeline (after QUASAR) as a service the modes share.

``RetrieveReadPipeline`` holds the three stages — ``Retrieval`` (retrievers, fusion, the hop, features),
``Reranking`` (stage one, stage two) and the configured ``Reader`` — over one opened index version. Every
mode reaches it through the ``Pipeline`` protocol: the retrieve-read mode runs it end to end; table-sql
and graph-critic run the retrieval, then read a ranking of their own (``StagedRun.focused``), never
changing a run they were given.
"""

from __future__ import annotations

from typing import Protocol

import numpy as np

from query.pipeline.reranking import Reranking
from query.pipeline.result import staged_result
from query.pipeline.retrieval import Retrieval
from query.pipeline.staged import StagedRun
from query.read.base import Reader, Reading, ReadRequest
from query.rerank.stage_one import LinearRanker
from query.retrieve.evidence_store import EvidenceRow, EvidenceStore
from query.retrieve.retrievers import HopRetriever
from query.understand.understanding import Understanding
from schemas.query import QueryResult


class Pipeline(Protocol):
    """What a mode may ask of the pipeline (``RetrieveReadPipeline`` is the one implementation)."""

    store: EvidenceStore
    candidates: Reader
    index_version: str

    def run(self, understanding: Understanding) -> StagedRun:
        """Retrieval and both re-ranking stages, every ranking kept."""
        ...

    def read(self, staged: StagedRun, reader: Reader | None = None) -> Reading:
        """The answer from ``staged``'s final rows, by ``reader`` or the configured one."""
        ...

    def result(self, staged: StagedRun, read: Reading) -> QueryResult: ...

    def answer(self, understanding: Understanding) -> QueryResult:
        """Retrieve, re-rank and read: the retrieve-read mode."""
        ...

    def similarity(self, question: str, evidence_ids: list[str]) -> np.ndarray:
        """Cosine similarity of the question to each row's vector (0 for a row without one)."""
        ...

    def hop_from(self, rows: list[EvidenceRow]) -> list[str]:
        """Lead windows of the pages ``rows`` link to, best first."""
        ...


class RetrieveReadPipeline:
    """Retrieval → re-ranking → reading over one index version; threads may share it."""

    def __init__(
        self,
        retrieval: Retrieval,
        reranking: Reranking,
        reader: Reader,
        candidates: Reader,
        hop: HopRetriever,
        index_version: str,
    ):
        self.retrieval, self.reranking = retrieval, reranking
        self.reader, self.candidates, self.hop = reader, candidates, hop
        self.store = retrieval.store
        self.index_version = index_version

    def retrieve(self, understanding: Understanding) -> StagedRun:
        """Everything before re-ranking: the pool, its features, every retriever's list."""
        return self.retrieval.run(understanding)

    def rerank(
        self,
        staged: StagedRun,
        ranker: LinearRanker | None = None,
        pair_cache: dict[str, float] | None = None,
    ) -> StagedRun:
        return self.reranking.run(staged, ranker, pair_cache)

    def run(self, understanding: Understanding) -> StagedRun:
        return self.rerank(self.retrieve(understanding))

    def read(self, staged: StagedRun, reader: Reader | None = None) -> Reading:
        """Stage five: ``reader`` (default: the configured one) reads the final rows."""
        request = ReadRequest(
            staged.question, staged.intent, staged.links, staged.final_rows(), staged.reader_note
        )
        return (reader or self.reader).run(request)

    def result(self, staged: StagedRun, read: Reading) -> QueryResult:
        return staged_result(staged, read, self.index_version)

    def answer(self, understanding: Understanding) -> QueryResult:
        staged = self.run(understanding)
        return self.result(staged, self.read(staged))

    def similarity(self, question: str, evidence_ids: list[str]) -> np.ndarray:
        return self.retrieval.vectors.similarity(self.retrieval.encode(question), evidence_ids)

    def hop_from(self, rows: list[EvidenceRow]) -> list[str]:
        return self.hop.follow(rows).ids
