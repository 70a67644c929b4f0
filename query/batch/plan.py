"""Planning a batch: one index version pinned, the question file cut into chunk jobs.

The index version is resolved once, when planning, and pinned against ``prune`` (``VersionStore.pin``)
until the parts are combined, so a rebuild that publishes mid-run does not mix versions. The engine
config is resolved and checksummed here too: a job carries everything its worker needs as values, so
it may run in another process, working directory or machine.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, Field

from index.versions import VersionStore, resolve_index_dir
from query.batch.answerers import BATCH_ANSWERER, DEFAULT_K
from query.batch.questions import QuestionFile, read_questions
from schemas.settings import AirflowSettings

DEFAULT_CHUNK_SIZE: int = AirflowSettings.model_fields["qa_chunk_size"].default
"""Written once, in ``AirflowSettings``."""


class ChunkJob(BaseModel):
    """One range of a question file for one worker; everything it needs travels in the job as values."""

    questions_path: Path
    questions_sha256: str = Field(description="the file as planned: a chunk of a changed file fails")
    index_version_dir: Path = Field(description="resolved once when planning: every chunk uses this version")
    index_version: str
    answerer: str = BATCH_ANSWERER
    engine_config: Path | None = Field(
        None, description="engine config file of the planner's settings, resolved; None = the defaults"
    )
    engine_config_sha256: str | None = Field(None, description="that file as planned: a changed one fails")
    reader: Literal["llm", "candidates"] | None = Field(
        None, description="who reads the answers, overriding the engine config's reader; None = the config's"
    )
    k: int = Field(DEFAULT_K, ge=1, description="evidence kept per question")
    start: int = Field(ge=0, description="first entry, 0-based, rejected entries included")
    stop: int = Field(description="one past the last entry")
    total: int = Field(description="entries in the whole file, so a missing part is noticed")
    part: int = Field(ge=0)
    parts_dir: Path
    pin: str = Field(description="the name the planned version is pinned under, unpinned when combined")

    def mapped_paths(self, path: Callable[[str], str | None]) -> ChunkJob:
        """The job with its paths rewritten: ``index.shared_state.portable`` for a job that travels to
        other workers (``state:<relative>`` under the state root), ``local`` on the worker that runs it."""
        config = path(str(self.engine_config)) if self.engine_config is not None else None
        return self.model_copy(
            update={
                "questions_path": Path(path(str(self.questions_path)) or ""),
                "index_version_dir": Path(path(str(self.index_version_dir)) or ""),
                "engine_config": Path(config) if config is not None else None,
                "parts_dir": Path(path(str(self.parts_dir)) or ""),
            }
        )

    @property
    def part_path(self) -> Path:
        return self.parts_dir / f"part-{self.part:05d}.parquet"

    @property
    def sidecar_path(self) -> Path:
        """The ``ChunkResult`` of the finished part, which says what work the part holds (for resuming)."""
        return self.parts_dir / f"part-{self.part:05d}.json"


def plan_chunks(
    questions_path: Path,
    index_dir: Path,
    parts_dir: Path,
    chunk_size: int = DEFAULT_CHUNK_SIZE,
    k: int = DEFAULT_K,
    *,
    engine_config: Path | None = None,
    reader: Literal["llm", "candidates"] | None = None,
) -> list[ChunkJob]:
    """Cut the question file into jobs of ``chunk_size`` entries, all on the index version current now.

    ``index_dir`` is resolved here, once, so a rebuild that publishes mid-run does not mix versions.
    ``engine_config`` (the caller's ``HqaSettings.engine_config``; None = the engine's defaults) is
    resolved and checksummed here too, and travels in every job to the workers that answer them, with
    ``reader`` when the caller overrides the config's reader.
    """
    questions = read_questions(questions_path)
    return plan_questions(
        questions, resolve_index_dir(index_dir), Path(parts_dir), chunk_size, k, engine_config, reader
    )


def pin_holder(parts_dir: Path) -> str:
    """The name a batch run pins its index version under: one per parts folder, so a resumed run re-pins
    its own pin rather than adding one."""
    return "batch-" + hashlib.sha256(str(Path(parts_dir).resolve()).encode()).hexdigest()[:16]


def _check_chunk_size(chunk_size: int) -> None:
    if chunk_size < 1:
        raise ValueError(f"chunk_size must be at least 1, got {chunk_size}")


def engine_config_sha256(path: Path) -> str:
    """The checksum of an engine config file: a job fails when its file changed after planning."""
    try:
        return hashlib.sha256(path.read_bytes()).hexdigest()
    except OSError as exc:
        raise FileNotFoundError(
            f"engine config {path} cannot be read ({exc.strerror}): fix engine_config in the settings"
        ) from exc


def plan_questions(
    questions: QuestionFile,
    version_dir: Path,
    parts_dir: Path,
    chunk_size: int,
    k: int,
    engine_config: Path | None,
    reader: Literal["llm", "candidates"] | None = None,
) -> list[ChunkJob]:
    """The jobs of questions already read, on ``version_dir`` (resolved already), which is pinned here."""
    _check_chunk_size(chunk_size)
    store = VersionStore(version_dir.parent)
    version = store.manifest(version_dir).version
    # pinned until combine_parts: chunks may open the version long after rebuilds have published newer ones
    pin = pin_holder(parts_dir)
    store.pin(version_dir, pin)
    total = len(questions.entries)
    # resolved now: the workers that answer may run elsewhere, in another working directory
    config = Path(engine_config).resolve() if engine_config is not None else None
    config_sha256 = engine_config_sha256(config) if config is not None else None
    return [
        ChunkJob(
            questions_path=questions.path,
            questions_sha256=questions.sha256,
            index_version_dir=version_dir,
            index_version=version,
            engine_config=config,
            engine_config_sha256=config_sha256,
            reader=reader,
            k=k,
            start=start,
            stop=min(start + chunk_size, total),
            total=total,
            part=part,
            parts_dir=parts_dir,
            pin=pin,
        )
        for part, start in enumerate(range(0, total, chunk_size))
    ]


def parts_dir_for(out_path: Path) -> Path:
    """Where ``answer_file`` keeps the parts of ``out_path`` until they are combined (beside it, hidden)."""
    out_path = Path(out_path)
    return out_path.with_name(f".{out_path.name}.parts")
