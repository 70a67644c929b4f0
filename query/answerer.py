"""What answers a question: one narrow interface, so batch jobs do not care which answerer is behind it.

Until the query engine exists, questions are answered by BM25 retrieval alone: the record carries
the top-k evidence and no answer. ``open_answerer`` is the one place that picks the answerer; the
engine replaces ``Bm25Answerer`` there, and batch jobs, DAGs and tests keep calling the same functions.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from pathlib import Path
from typing import Protocol

from index.reader import IndexReader
from schemas.answers import AnswerRecord, Question, StageTiming

DEFAULT_K = 30


class Answerer(Protocol):
    """Answers one question at a time against one index version (not thread-safe yet)."""

    name: str
    index_version: str

    def answer(self, question: Question) -> AnswerRecord: ...

    def close(self) -> None: ...


class Bm25Answerer:
    """Top-k BM25 evidence for the question, no answer: the baseline the engine has to beat.

    It owns ``reader`` and closes it with ``close()``.
    """

    name = "bm25"

    def __init__(self, reader: IndexReader, k: int = DEFAULT_K):
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        self.reader = reader
        self.k = k
        self.index_version = reader.version

    def answer(self, question: Question) -> AnswerRecord:
        started = time.perf_counter()
        hits = self.reader.bm25.search(question.question, self.k)
        ms = (time.perf_counter() - started) * 1000
        return AnswerRecord(
            question_id=question.id,
            question=question.question,
            evidence_ids=[h.evidence_id for h in hits],
            evidence_scores=[h.score for h in hits],
            evidence_source_types=[h.source_type for h in hits],
            timings=[StageTiming(stage="bm25", ms=ms)],
            index_version=self.index_version,
            answerer=self.name,
        )

    def close(self) -> None:
        self.reader.close()


_ANSWERERS: dict[str, Callable[[IndexReader, int], Answerer]] = {Bm25Answerer.name: Bm25Answerer}

BATCH_ANSWERER = Bm25Answerer.name
"""The answerer batch jobs use; recorded in each batch plan so parts made by another one are not reused."""


def open_answerer(index_dir: Path, k: int = DEFAULT_K, *, name: str = BATCH_ANSWERER) -> Answerer:
    """THE place that decides what answers batch questions: BM25 retrieval alone, for now.

    The query-engine issue switches ``BATCH_ANSWERER`` to the engine (registered here beside
    ``Bm25Answerer``); callers keep calling ``open_answerer`` and get ``AnswerRecord``s as before.
    ``index_dir`` is an index root (its ``current`` version is resolved once) or a version folder.
    """
    factory = _ANSWERERS.get(name)
    if factory is None:
        raise ValueError(f"unknown answerer {name!r}; known: {sorted(_ANSWERERS)}")
    reader = IndexReader.open(index_dir)
    try:
        return factory(reader, k)
    except Exception:
        reader.close()
        raise
