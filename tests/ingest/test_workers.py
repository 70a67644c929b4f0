"""Parser pools are sized by their caller: the settings (HQA_WORKERS, the slot's share of the cores) or the
DAG run's ``workers`` param, never by the library asking the machine."""

from __future__ import annotations

import os

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
