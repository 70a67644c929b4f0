"""A batch planned on one host and answered on another that mounts the shared state elsewhere: what
travels between the DAG's tasks names paths under the state root relatively, so each worker resolves
them against its own root (issue 34: plans and jobs carry no absolute paths)."""

from __future__ import annotations

import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from index.shared_state import STATE_PREFIX
from index.versions import READER_STATE, VersionStore
from query.batch import steps
from tests.conftest import SAMPLES


def _paths(value: object) -> list[str]:
    """Every string in a JSON value that looks like a path."""
    if isinstance(value, dict):
        return [p for v in value.values() for p in _paths(v)]
    if isinstance(value, list):
        return [p for v in value for p in _paths(v)]
    return [value] if isinstance(value, str) and "/" in value else []


def test_a_batch_planned_under_one_mount_is_answered_and_combined_under_another(
    sample_index, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, built = sample_index
    first = tmp_path / "mount-a" / "state"
    store = VersionStore(first / "indexes")
    building = store.start("v1")
    building.rmdir()
    shutil.copytree(
        built.version_dir, building, copy_function=os.link, ignore=shutil.ignore_patterns(*READER_STATE)
    )
    store.publish(building, store.manifest(built.version_dir).model_copy(update={"version": "v1"}))
    questions = first / "questions.jsonl"
    questions.write_text("".join(SAMPLES.joinpath("questions.jsonl").read_text().splitlines(True)[:3]))

    monkeypatch.setenv("HQA_STATE_DIR", str(first))
    params = {"questions": str(questions), "chunk_size": 2, "reader": "candidates"}
    chunks = json.loads(json.dumps(steps.plan(params)))  # as XCom passes them
    assert len(chunks) == 2
    paths = _paths(chunks)
    assert paths and all(p.startswith(STATE_PREFIX) for p in paths), paths

    second = tmp_path / "mount-b" / "state"  # the other host: the same files, another mount point
    second.parent.mkdir()
    first.rename(second)
    monkeypatch.setenv("HQA_STATE_DIR", str(second))
    answered = [json.loads(json.dumps(steps.answer(c))) for c in chunks]
    assert all(p.startswith(STATE_PREFIX) for p in _paths(answered)), _paths(answered)
    summary = steps.combine(answered)

    out = Path(summary["out_path"])
    assert out.is_relative_to(second) and summary["questions"] == 3 and summary["errors"] == 0
    rows = pq.read_table(out).to_pylist()
    moved = second / questions.relative_to(first)
    expected = [json.loads(line)["id"] for line in moved.read_text().splitlines()]
    assert [r["question_id"] for r in rows] == expected
    assert VersionStore(second / "indexes").pins(second / "indexes" / "v1") == []  # unpinned on mount b
