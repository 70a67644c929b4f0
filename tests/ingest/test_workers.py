"""Parser pools are sized by their caller: the settings (HQA_WORKERS, the slot's share of the cores) or the
DAG run's ``workers`` param, never by the library asking the machine."""

from __future__ import annotations

import os
import subprocess
import sys
from pathlib import Path

import pytest

from index.rebuild import RebuildParams
from ingest.shard_plan import IngestOptions
from ingest.workers import worker_pool
from schemas.settings import AirflowSettings, HqaSettings


def test_a_pool_has_exactly_the_processes_asked_for() -> None:
    assert worker_pool(1) is None  # in-process
    pool = worker_pool(2)
    try:
        assert pool is not None and len({pool.apply(os.getpid) for _ in range(8)} - {os.getpid()}) >= 1
        assert pool._processes == 2  # type: ignore[attr-defined]
    finally:
        pool.terminate()
    with pytest.raises(ValueError, match="workers must be >= 1"):
        worker_pool(0)


CALLER = """
import os, sys
with open(sys.argv[1], "a") as marks:  # a caller's main runs this each time it is imported
    marks.write(f"{os.getpid()}\\n")
from ingest.workers import worker_pool
if __name__ == "__main__":
    pool = worker_pool(2)
    workers = {pool.apply(os.getpid) for _ in range(8)} - {os.getpid()}
    pool.terminate()
    print(len(workers))
"""


def test_workers_do_not_run_the_callers_main_again(tmp_path: Path) -> None:
    """A forkserver child runs its parent's script again before its first task; the parser workers need
    none of it, and a CLI or benchmark that imports every backend paid seconds per worker for it."""
    script, marks = tmp_path / "caller.py", tmp_path / "marks.txt"
    script.write_text(CALLER)
    env = {**os.environ, "PYTHONPATH": str(Path(__file__).resolve().parents[2])}
    done = subprocess.run(
        [sys.executable, str(script), str(marks)], env=env, capture_output=True, text=True, timeout=120
    )
    assert done.returncode == 0, done.stderr
    assert int(done.stdout) >= 1  # the tasks did run in worker processes
    assert len(marks.read_text().split()) == 1  # the caller's own run only


def test_auto_workers_are_the_affinity_cores_shared_by_the_slots(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("HQA_WORKERS", raising=False)
    cores = len(os.sched_getaffinity(0))
    assert HqaSettings().parser_workers == cores
    shared = HqaSettings(airflow=AirflowSettings(worker_concurrency=cores + 1))
    assert shared.parser_workers == 1  # never zero, however many tasks share the machine
    monkeypatch.setattr(os, "sched_getaffinity", lambda pid: {0, 1, 2, 3, 4, 5, 6, 7})
    assert HqaSettings(airflow=AirflowSettings(worker_concurrency=2)).parser_workers == 4
    assert HqaSettings(workers=3).parser_workers == 3


def test_the_environment_and_the_dag_param_reach_the_readers(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HQA_WORKERS", "3")
    options = IngestOptions.from_settings(HqaSettings.load())
    assert options.wikidata.workers == options.wikipedia.workers == 3
    params = RebuildParams(workers=5)
    assert params.ingest_options(params.settings()).wikidata.workers == 5  # the run's param wins
    assert RebuildParams().settings().parser_workers == 3
    with pytest.raises(ValueError):
        RebuildParams(workers=0)
