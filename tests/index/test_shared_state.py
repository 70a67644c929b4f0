"""The rebuild's steps on workers that mount the shared state at different paths, or not at all.

The steps run in this process, one after another, with ``HQA_STATE_DIR`` changed between them as it
would differ between workers: plans and jobs must carry no path under the state root (a worker resolves
them against its own mount), and a worker that does not see the state the run started in must fail at
once, naming the file it could not see.
"""

from __future__ import annotations

import json
import shutil
from datetime import UTC, datetime
from pathlib import Path

import pytest

from index import rebuild
from index.shared_state import SharedStateMissing, marker_path, run_name
from index.versions import VersionStore

RUN_ID = "manual__2026-11-26T12:00:00+00:00"
RUN_AFTER = datetime(2026, 11, 26, 12, tzinfo=UTC)


@pytest.fixture
def worker(monkeypatch, sample_index):
    """Switch this process to a worker whose shared state is mounted at ``path``."""
    index_settings, _ = sample_index
    # the sample index's cache holds every sample embedding: these builds embed nothing
    monkeypatch.setenv("HQA_EMBEDDING_CACHE", str(index_settings.embedding_cache_dir))

    def mount(path: Path) -> Path:
        monkeypatch.setenv("HQA_STATE_DIR", str(path))
        return path

    return mount


def _ingest_and_plan(params: dict) -> tuple[list, list, dict]:
    jobs = rebuild.discover(params, RUN_ID)
    outcomes = [rebuild.ingest(params, job) for job in jobs]
    return jobs, outcomes, rebuild.plan(params, outcomes, RUN_AFTER)


def _index(params: dict, plan: dict) -> dict:
    files = [rebuild.verbalize(params, plan, job) for job in rebuild.files_to_verbalize(plan)]
    stages = [rebuild.evidence(plan, files, params)]
    for name in ("entities", "graph", "bm25", "vectors", "statements", "tables"):
        stages.append(rebuild.stage(params, plan, name))
    validation = rebuild.validate(params, plan)
    return rebuild.publish(params, plan, stages, validation)


@pytest.mark.slow
def test_a_run_moved_to_another_mount_after_planning_builds_the_same_index(worker, tmp_path, sample_index):
    first = worker(tmp_path / "mount-a" / "state")
    params: dict = {}
    jobs, outcomes, plan = _ingest_and_plan(params)
    travelling = json.dumps([jobs, outcomes, plan])
    assert str(first) not in travelling and str(first.resolve()) not in travelling
    assert plan["building"].startswith("state:indexes/") and plan["ingest_dir"] == "state:ingest"
    assert all(j["path"].startswith("state:ingest/") for j in plan["verbalize"])
    # the same shared folder, mounted elsewhere on the next worker; the old path no longer exists
    second = worker(tmp_path / "mount-b" / "state")
    second.parent.mkdir()
    shutil.move(first, second)
    manifest = _index(params, plan)
    store = VersionStore(second / "indexes")
    assert store.current() == (second / "indexes" / manifest["version"]).resolve()
    _, cli = sample_index
    assert manifest["counts"] == cli.manifest.counts
    assert {n: s["fingerprint"] for n, s in manifest["stages"].items()} == {
        n: s.fingerprint for n, s in cli.manifest.stages.items()
    }
    report = rebuild.report(params, outcomes, plan, manifest)
    assert report["published"] and Path(report["report"]).is_relative_to(second)


def test_a_worker_without_the_shared_state_fails_at_once_naming_what_it_cannot_see(worker, tmp_path):
    worker(tmp_path / "worker-1")
    jobs = rebuild.discover({}, RUN_ID)
    assert (tmp_path / "worker-1" / ".runs" / f"{run_name(RUN_ID)}.json").is_file()
    other = worker(tmp_path / "worker-2")
    missing = marker_path(other, run_name(RUN_ID))
    with pytest.raises(SharedStateMissing, match=r"ingest on .* cannot see the shared state") as failed:
        rebuild.ingest({}, jobs[0])
    assert str(missing) in str(failed.value) and "HQA_STATE_DIR" in str(failed.value)
    assert not (other / "ingest").exists()  # failed before writing anything
    # the ingest ran on the worker that sees the state; plan lands on the one that does not
    worker(tmp_path / "worker-1")
    outcome = rebuild.ingest({}, jobs[-1])
    worker(other)
    with pytest.raises(SharedStateMissing, match=r"plan on .* cannot see the shared state"):
        rebuild.plan({}, [outcome], RUN_AFTER)
