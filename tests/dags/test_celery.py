"""The rebuild DAG on a real CeleryExecutor cluster: PostgreSQL, Redis, the API server, scheduler, DAG
processor and two Celery workers (concurrency 1) on 127.0.0.1, the DAG triggered as in production.

One cluster serves both tests; each starts its own two workers. With a state folder per worker (nothing
shared) a task on the worker that does not see the run's state fails at once with the error naming the
marker it could not see, and nothing is published. With a state folder per worker and one S3 state URL
(moto's server) shared between them, the run succeeds, both workers run tasks, no task is delivered twice,
and the index equals the in-process build of the samples (counts and stage fingerprints): the workers
exchange their state only through the bucket, and every path a task receives is relative to the state root
(the two scratch roots differ). The same run over one shared state folder is the measured
``benchmarks/results/scale/celery.json`` (``benchmarks/scale/celery_run.py``); it is not repeated here,
where it cost two minutes more of the suite and tested nothing the bucket run and the in-process shared
folder tests (``tests/index/test_shared_state.py``, ``tests/dags/test_dags.py``) do not.
"""

from __future__ import annotations

import shutil
import uuid

import pytest

from index.versions import VersionStore
from tests import object_store_server
from tests.cluster import Cluster, Worker
from tests.services import running, services_root

pytestmark = pytest.mark.slow
RUN_TIMEOUT_S = 1800.0


def assert_same_index(manifest, sample_index) -> None:
    """The published version equals the in-process ``hqa build --samples``: counts, every stage's
    fingerprint, and a validation that passed."""
    _, in_process = sample_index
    assert manifest.counts == in_process.manifest.counts
    assert {n: s.fingerprint for n, s in manifest.stages.items()} == {
        n: s.fingerprint for n, s in in_process.manifest.stages.items()
    }
    assert set(manifest.validation.values()) == {"ok"}


@pytest.fixture(scope="module")
def cluster(tmp_path_factory, sample_index):
    """Services and Airflow's components, with the sample index's settings for the workers."""
    index_settings, _ = sample_index
    root = tmp_path_factory.mktemp("cluster")
    env = {
        # the sample index's cache holds every sample embedding: the workers embed nothing
        "HQA_EMBEDDING_CACHE": str(index_settings.embedding_cache_dir),
        "HQA_INDEX__EMBEDDING_MODEL": index_settings.index.embedding_model,
    }
    # PostgreSQL runs as its own user, which cannot enter pytest's private temporary folders (nor a
    # clone in a private folder): its data goes where it can
    folder = services_root()
    try:
        with running(folder) as services:
            airflow = Cluster(home=root / "airflow", services=services, extra_env=env)
            try:
                airflow.start()
                airflow.wait_for_dag()
                yield airflow
            finally:
                airflow.stop()
    finally:
        shutil.rmtree(folder, ignore_errors=True)


def _run(cluster: Cluster, workers: list[Worker]) -> tuple[str, str, list[dict]]:
    run_id = f"manual__celery-{uuid.uuid4().hex[:8]}"
    cluster.start_workers(workers)
    try:
        cluster.trigger(run_id)
        state = cluster.wait_for_run(run_id, RUN_TIMEOUT_S)
    finally:
        cluster.stop([w.name for w in workers])
    return run_id, state, cluster.task_instances(run_id)


def test_workers_without_shared_state_fail_at_once_naming_what_they_cannot_see(cluster, tmp_path):
    workers = [Worker("worker-1", tmp_path / "state-1"), Worker("worker-2", tmp_path / "state-2")]
    run_id, state, tis = _run(cluster, workers)
    assert state == "failed"
    discover = next(t for t in tis if t["task_id"] == "discover")
    assert discover["state"] == "success"
    elsewhere = [t for t in tis if t["hostname"] not in {None, "", discover["hostname"]}]
    assert elsewhere, f"every task ran on {discover['hostname']}: {tis}"
    failed = [t for t in elsewhere if t["state"] == "failed"]
    assert failed and {t["try_number"] for t in failed} == {1}
    for t in failed:
        log = cluster.task_log(run_id, t["task_id"], t["map_index"])
        assert "SharedStateMissing" in log and "cannot see the shared state" in log, log[-3000:]
        other = tmp_path / ("state-2" if t["hostname"] == "worker-2" else "state-1")
        assert str(other / ".runs") in log
    assert not any(t["task_id"] == "publish" and t["state"] == "success" for t in tis)
    for folder in ("state-1", "state-2"):
        assert not (tmp_path / folder / "indexes" / "current").exists()


def test_two_celery_workers_sharing_only_an_s3_state_url_build_the_in_process_index(
    cluster, tmp_path, sample_index, s3_bucket
):
    url = s3_bucket.url(f"celery-state-{uuid.uuid4().hex[:8]}")
    remote = {"HQA_REMOTE__STATE_URL": url, "HQA_REMOTE__ENDPOINT": s3_bucket.endpoint}
    env = {**remote, **object_store_server.CREDENTIALS}
    workers = [
        # the embedding cache in each worker's scratch too: exchanged through the bucket like the rest
        Worker(name, tmp_path / name, {**env, "HQA_EMBEDDING_CACHE": str(tmp_path / name / "embeddings")})
        for name in ("worker-1", "worker-2")
    ]
    run_id, state, tis = _run(cluster, workers)
    failed = [t for t in tis if t["state"] != "success"]
    logs = [cluster.task_log(run_id, t["task_id"], t["map_index"])[-3000:] for t in failed[:2]]
    assert state == "success", (failed, logs)
    assert {t["hostname"] for t in tis} == {"worker-1", "worker-2"}, tis
    assert all(t["try_number"] == 1 for t in tis)
    publish = next(t for t in tis if t["task_id"] == "publish")
    store = VersionStore(tmp_path / publish["hostname"] / "indexes")
    manifest = store.manifest(store.current())
    assert_same_index(manifest, sample_index)
    # the other worker's scratch holds only what its own tasks pulled and wrote: no published version
    other = next(w for w in workers if w.name != publish["hostname"])
    assert not (other.state_dir / "indexes" / "current").exists()
