"""What answers a question: one narrow interface, so batch jobs do not care which answerer is behind it.

``open_answerer`` is the one place that picks the answerer. Batch jobs (the CLI's ``hqa answer`` and
the batch-QA DAG) use the query engine; ``Bm25Answerer`` stays as the baseline: the top-k BM25
evidence and no answer.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING, Any, Protocol

from index.reader import IndexReader
from query.registry import Registry
from schemas.answers import AnswerRecord, Question, RouteRecord, StageTiming

if TYPE_CHECKING:
    from query.config import EngineConfig

DEFAULT_K = 30


class Answerer(Protocol):
    """Answers questions against one index version."""

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


class EngineAnswerer:
    """The query engine behind the batch interface: answer, confidence, the final k evidence rows and the
    route (which reasoning mode answered, and what every mode did).

    ``config`` is the caller's: ``open_answerer`` loads the file its settings name (``engine_config``,
    ``HQA_ENGINE_CONFIG``), so batch jobs and DAG runs change engine settings without a code change.
    None = the engine's defaults. ``k`` sets how many evidence rows the last re-ranking keeps.
    """

    name = "engine"

    def __init__(
        self,
        reader: IndexReader,
        k: int = DEFAULT_K,
        config: EngineConfig | None = None,
        *,
        state_dir: Path | None = None,
    ):
        from query.config import EngineConfig  # the engine loads models: only when it is asked for
        from query.engine import Engine

        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        config = config or EngineConfig()
        rerank = config.rerank.model_copy(update={"stage2_keep": k})
        self.engine = Engine(reader, config.model_copy(update={"rerank": rerank}), state_dir=state_dir)
        self.index_version = reader.version

    def answer(self, question: Question) -> AnswerRecord:
        result = self.engine.ask(question.question)
        return AnswerRecord(
            question_id=question.id,
            question=question.question,
            answer=None if result.unknown else result.answer,
            answer_entity_id=result.answer_entity_id,
            unit=None if result.unknown else result.unit,
            confidence=result.confidence,
            evidence_ids=[e.evidence_id for e in result.evidence],
            evidence_scores=[e.score for e in result.evidence],
            evidence_source_types=[e.source_type for e in result.evidence],
            timings=result.timings,
            mode=result.mode,
            route=[
                RouteRecord(mode=s.mode, outcome=s.outcome, reason=s.reason, ms=s.ms) for s in result.route
            ],
            sql=result.table.sql if result.table is not None else None,
            table=result.table.model_dump_json() if result.table is not None else None,
            refinement=(
                "[" + ",".join(r.model_dump_json() for r in result.refinement) + "]"
                if result.refinement
                else None
            ),
            validated=result.validated,
            reading=result.reading.model_dump_json() if result.reading is not None else None,
            index_version=self.index_version,
            answerer=self.engine.name,
        )

    def close(self) -> None:
        self.engine.close()


@dataclass(frozen=True)
class AnswererContext:
    """What an answerer is opened with: the index, k evidence rows, the engine config file (or None) and
    overrides of it, and the state folder the engine assembles its models in (None: the default)."""

    reader: IndexReader
    k: int
    engine_config: Path | None
    overrides: dict[str, Any]
    state_dir: Path | None = None


def _open_engine(context: AnswererContext) -> Answerer:
    from query.config import EngineConfig

    config = EngineConfig.load(context.engine_config, **context.overrides)
    return EngineAnswerer(context.reader, context.k, config, state_dir=context.state_dir)


ANSWERERS: Registry[AnswererContext, Answerer] = Registry(
    "answerer",
    {
        # no engine behind BM25: an engine config does not apply
        Bm25Answerer.name: lambda c: Bm25Answerer(c.reader, c.k),
        EngineAnswerer.name: _open_engine,
    },
)

BATCH_ANSWERER = EngineAnswerer.name
"""The answerer batch jobs use; recorded in each batch plan so parts made by another one are not reused."""


def open_answerer(
    index_dir: Path,
    k: int = DEFAULT_K,
    *,
    name: str = BATCH_ANSWERER,
    engine_config: Path | None = None,
    reader: str | None = None,
    state_dir: Path | None = None,
) -> Answerer:
    """THE place that decides what answers batch questions: the query engine by default.

    ``index_dir`` is an index root (its ``current`` version is resolved once) or a version folder.
    ``engine_config`` is the engine config file of the caller's settings (``HqaSettings.engine_config``);
    None = the engine's defaults; ``reader`` overrides its reader. This function reads no settings.
    """
    ANSWERERS.check(name)
    index = IndexReader.open(index_dir)
    try:
        overrides = {"reader": reader} if reader else {}
        return ANSWERERS.create(name, AnswererContext(index, k, engine_config, overrides, state_dir))
    except Exception:
        index.close()
        raise
