"""Batch question answering as steps with JSON in and out: what the batch-QA DAG's tasks call.

``plan`` pins the index version that is current when the run starts and cuts the question file
into chunks; ``answer`` answers one chunk (mapped); ``combine`` writes the one answers Parquet.
Which answerer runs is decided by ``query.batch.answerers.open_answerer``, not here and not in the DAG,
so the DAG stays the same when the query engine replaces BM25-only answering.

What travels between tasks names paths under the state root as ``state:<relative>``
(``index.shared_state``): each worker resolves them against its own state root, so a chunk can be
answered, and the parts combined, on a host that mounts the shared state elsewhere.
"""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import Any, Literal

from pydantic import BaseModel, Field

from index.shared_state import local, portable
from index.versions import VersionStore, resolve_index_dir
from query.batch.answer import ChunkResult, answer_chunk, existing_part
from query.batch.combine import DEFAULT_MAX_FAILURE_RATE, combine_parts
from query.batch.plan import ChunkJob, parts_dir_for, plan_chunks
from schemas.settings import HqaSettings

Json = dict[str, Any]


class QaParams(BaseModel):
    """The batch-QA DAG's params; empty values fall back to the settings."""

    questions: str | None = Field(None, description="JSONL or Parquet of (id, question); default: settings")
    out: str | None = Field(None, description="answers Parquet; default <state>/answers/answers-<version>")
    index: str | None = Field(None, description="index root or version folder; default <state>/indexes")
    chunk_size: int | None = Field(None, ge=1, description="questions per mapped task; default: settings")
    config: str | None = Field(
        None, description="hqa settings file (TOML/YAML); its engine_config configures the workers' engine"
    )
    reader: Literal["llm", "candidates"] | None = Field(
        None, description="'llm' or 'candidates' (the fast path); default: the engine config's reader"
    )

    def settings(self) -> HqaSettings:
        return HqaSettings.load(Path(self.config) if self.config else None)


def param_defaults() -> dict[str, tuple[Any, str | None]]:
    return {name: (field.default, field.description) for name, field in QaParams.model_fields.items()}


def default_questions(settings: HqaSettings) -> Path:
    return settings.airflow.qa_questions or settings.samples_dir / "questions.jsonl"


def plan(params: Json) -> list[Json]:
    """Resolve the index version once, name the output after it, and cut the questions into chunks."""
    p = QaParams.model_validate(params)
    settings = p.settings()
    version_dir = resolve_index_dir(Path(p.index) if p.index else settings.index_dir)
    version = VersionStore(version_dir.parent).manifest(version_dir).version
    out = Path(p.out) if p.out else settings.answers_dir / f"answers-{version}.parquet"
    questions = Path(p.questions) if p.questions else default_questions(settings)
    jobs = plan_chunks(
        questions,
        version_dir,
        parts_dir_for(out),
        p.chunk_size or settings.airflow.qa_chunk_size,
        engine_config=settings.engine_config,  # each job carries it: workers read only the state root
        reader=p.reader,
    )
    limit = settings.answer_max_failure_rate
    state = settings.state_dir
    return [
        {
            "job": job.mapped_paths(lambda path: portable(path, state)).model_dump(mode="json"),
            "out": portable(out, state),
            "max_failure_rate": limit,
            "config": p.config,
        }
        for job in jobs
    ]


def answer(chunk: Json) -> Json:
    """Answer one chunk; a part an earlier try already finished for the same work is kept."""
    state = _state_dir(chunk)
    job = ChunkJob.model_validate(chunk["job"]).mapped_paths(lambda path: local(path, state))
    result = existing_part(job) or answer_chunk(job)
    travelling = _result_paths(result, lambda path: portable(path, state))
    return {**{k: v for k, v in chunk.items() if k != "job"}, "result": travelling.model_dump(mode="json")}


def combine(parts: list[Json]) -> Json:
    """One Parquet of all answers in question order, and the run's summary."""
    if not parts:
        raise ValueError("no answered chunks to combine")
    state = _state_dir(parts[0])
    results = [
        _result_paths(ChunkResult.model_validate(p["result"]), lambda path: local(path, state)) for p in parts
    ]
    limit = parts[0].get("max_failure_rate", DEFAULT_MAX_FAILURE_RATE)
    out = Path(local(parts[0]["out"], state) or "")
    return combine_parts(results, out, limit).model_dump(mode="json")


def _state_dir(chunk: Json) -> Path:
    """This worker's state root: from the run's settings file, read here (so its environment applies)."""
    return QaParams(config=chunk.get("config")).settings().state_dir


def _result_paths(result: ChunkResult, path: Callable[[str], str | None]) -> ChunkResult:
    return result.model_copy(
        update={"job": result.job.mapped_paths(path), "path": Path(path(str(result.path)) or "")}
    )
