"""The engine config of the caller's settings reaches the engine of every batch path: DAG steps and CLI."""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar

import pyarrow.parquet as pq
import pytest

import query.engine
from query.batch import steps
from query.batch.answer import answer_chunk, existing_part
from query.batch.plan import plan_chunks
from query.cli.main import main
from query.config import EngineConfig
from schemas.query import Intent, QueryResult, RouteStep
from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "questions.jsonl"


@pytest.fixture
def questions(tmp_path: Path) -> Path:
    path = tmp_path / "questions.jsonl"
    lines = QUESTIONS.read_text().splitlines()[:3]
    path.write_text(
        "\n".join([*lines, json.dumps({"id": "belgium", "question": "population of Belgium"})]) + "\n"
    )
    return path


@pytest.fixture
def settings_file(tmp_path: Path) -> Path:
    """An hqa settings file naming an engine config that differs from the defaults where a test can see it."""
    engine = tmp_path / "engine.toml"
    engine.write_text('modes = ["retrieve-read"]\nreader = "candidates"\n[answer]\nthreshold = 0.42\n')
    path = tmp_path / "hqa.toml"
    path.write_text(f"engine_config = {json.dumps(str(engine))}\n[airflow]\nqa_chunk_size = 2\n")
    return path


class RecordingEngine:
    """Stands in for the engine (no models loaded): keeps the config it was built with, answers 'unknown'."""

    configs: ClassVar[list[EngineConfig]] = []

    def __init__(self, reader, config: EngineConfig | None = None, *, state_dir: Path | None = None):
        self.config = config or EngineConfig()
        RecordingEngine.configs.append(self.config)
        self.name = "engine"
        self.index_version = reader.version

    def ask(self, question: str) -> QueryResult:
        mode = self.config.modes[-1]
        return QueryResult(
            question=question,
            answer="unknown",
            unknown=True,
            confidence=0.0,
            evidence=[],
            intent=Intent(
                question=question, answer_type="other", extractor=self.config.understand.intent.extractor
            ),
            reader="candidates",
            index_version=self.index_version,
            mode=mode,
            route=[RouteStep(mode=mode, outcome="answered", reason="recorded")],
        )

    def close(self) -> None:
        pass


@pytest.fixture
def recording_engine(monkeypatch: pytest.MonkeyPatch) -> type[RecordingEngine]:
    monkeypatch.setattr(RecordingEngine, "configs", [])
    monkeypatch.setattr(query.engine, "Engine", RecordingEngine)
    return RecordingEngine


def test_the_dag_steps_give_the_engine_the_config_of_their_settings_file(
    sample_index, questions: Path, settings_file: Path, recording_engine, tmp_path: Path
) -> None:
    _, result = sample_index
    out = tmp_path / "answers.parquet"
    params = {"questions": str(questions), "out": str(out), "index": str(result.version_dir)}
    chunks = steps.plan({**params, "config": str(settings_file)})
    assert len(chunks) == 2  # qa_chunk_size of the settings file
    summary = steps.combine([steps.answer(json.loads(json.dumps(c))) for c in chunks])  # as XCom passes them

    assert len(recording_engine.configs) == 2  # one engine per mapped task
    for config in recording_engine.configs:
        assert config.modes == ["retrieve-read"] and config.answer.threshold == 0.42
        assert config.rerank.stage2_keep == 30  # the job's k still applies on top of the file
    assert summary["questions"] == 4
    assert {r["mode"] for r in pq.read_table(out).to_pylist()} == {"retrieve-read"}


def test_the_reader_param_overrides_the_config_and_is_part_of_the_work(
    sample_index, questions: Path, settings_file: Path, recording_engine, tmp_path: Path
) -> None:
    _, result = sample_index
    out = tmp_path / "answers.parquet"
    params = {"questions": str(questions), "out": str(out), "index": str(result.version_dir)}
    chunks = steps.plan({**params, "config": str(settings_file), "reader": "llm"})
    steps.combine([steps.answer(json.loads(json.dumps(c))) for c in chunks])
    assert [c.reader for c in recording_engine.configs] == ["llm", "llm"]
    assert all(c.answer.threshold == 0.42 for c in recording_engine.configs)  # the file still applies
    (job,) = plan_chunks(questions, result.version_dir, tmp_path / "parts", reader="llm")
    answer_chunk(job)
    (fast,) = plan_chunks(questions, result.version_dir, tmp_path / "parts", reader="candidates")
    assert existing_part(job) is not None and existing_part(fast) is None  # another reader, other work
    assert job.reader == "llm" and fast.reader == "candidates"


def test_without_a_settings_file_the_engine_runs_its_defaults(
    sample_index, questions: Path, recording_engine, tmp_path: Path
) -> None:
    _, result = sample_index
    params = {
        "questions": str(questions),
        "out": str(tmp_path / "a.parquet"),
        "index": str(result.version_dir),
    }
    steps.combine([steps.answer(c) for c in steps.plan(params)])
    assert recording_engine.configs and all(c == EngineConfig() for c in recording_engine.configs)


def test_a_changed_engine_config_fails_its_chunks_and_is_not_resumed(
    sample_index, questions: Path, recording_engine, tmp_path: Path
) -> None:
    _, result = sample_index
    engine = tmp_path / "engine.yaml"
    engine.write_text("answer:\n  threshold: 0.3\n")
    (job,) = plan_chunks(questions, result.version_dir, tmp_path / "parts", engine_config=engine)
    assert job.engine_config == engine.resolve() and job.engine_config_sha256
    answer_chunk(job)
    assert existing_part(job) is not None

    engine.write_text("answer:\n  threshold: 0.9\n")
    with pytest.raises(ValueError, match="changed since the batch was planned") as raised:
        answer_chunk(job)
    assert str(engine.resolve()) in str(raised.value)
    (replanned,) = plan_chunks(questions, result.version_dir, tmp_path / "parts", engine_config=engine)
    assert existing_part(replanned) is None  # the part was made with the other config
    answer_chunk(replanned)
    assert [c.answer.threshold for c in recording_engine.configs] == [0.3, 0.9]


def test_hqa_answer_with_a_config_file_runs_the_engine_it_names(
    sample_index, questions: Path, settings_file: Path, tmp_path: Path
) -> None:
    _, result = sample_index
    out = tmp_path / "answers.parquet"
    argv = ["--config", str(settings_file), "answer", "--in", str(questions), "--out", str(out)]
    assert main([*argv, "--index", str(result.version_dir)]) == 0
    rows = pq.read_table(out).to_pylist()
    assert len(rows) == 4 and all(r["error"] is None for r in rows)
    # the real engine, configured by the file: only retrieve-read is routed, and its threshold applies
    assert all(r["mode"] == "retrieve-read" for r in rows)
    assert all([s["mode"] for s in r["route"]] == ["retrieve-read"] for r in rows)
    assert all(r["route"][0]["outcome"] == "answered" for r in rows)
    assert all(r["answer"] is None or r["confidence"] >= 0.42 for r in rows)
    assert {r["answerer"] for r in rows} == {"engine"}  # the file's candidate reader: no LLM was loaded
