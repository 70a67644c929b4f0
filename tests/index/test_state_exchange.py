"""The rebuild's steps on workers that share no folder, only a state URL on a real S3 server (moto's).

As in test_shared_state, the steps run in this process with the environment switched between them as it
would differ between workers; here each "worker" has a scratch of its own as ``HQA_STATE_DIR`` and the
two share nothing but ``HQA_REMOTE__STATE_URL``. What one worker's step wrote reaches the other only
through the object store. Expected values come from the in-process build of the samples (``hqa build``'s
library function) and from hashing and listing the bucket directly, not through the exchange's code.
"""

from __future__ import annotations

import hashlib
import json
import re
import time
import uuid
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from index import layout, rebuild
from index.shared_state import SharedStateMissing, local, run_name
from index.state_exchange import StateDamaged
from index.versions import VersionStore
from ingest.object_store import RemoteRoot
from tests.conftest import WIKIDATA_ITEMS
from tests.services import free_port

RUN_ID = "manual__2026-11-27T12:00:00+00:00"
RUN_AFTER = datetime(2026, 11, 27, 12, tzinfo=UTC)
STAGES = ("entities", "graph", "bm25", "vectors", "statements", "tables")


@pytest.fixture
def state_url(s3_bucket) -> str:
    return s3_bucket.url(f"state-{uuid.uuid4().hex[:8]}")


@pytest.fixture
def bucket_fs(s3_bucket) -> pafs.S3FileSystem:
    endpoint = s3_bucket.endpoint.removeprefix("http://")
    return pafs.S3FileSystem(endpoint_override=endpoint, scheme="http", region="us-east-1")


@pytest.fixture
def workers(monkeypatch, tmp_path, s3_bucket, state_url):
    """``switch(name)`` makes this process the worker ``name``: its own scratch, the common state URL."""
    monkeypatch.delenv("HQA_EMBEDDING_CACHE", raising=False)  # the cache lives in the state, exchanged
    monkeypatch.setenv("HQA_REMOTE__ENDPOINT", s3_bucket.endpoint)

    def switch(name: str, url: str = state_url) -> Path:
        scratch = tmp_path / name / "state"
        monkeypatch.setenv("HQA_STATE_DIR", str(scratch))
        monkeypatch.setenv("HQA_REMOTE__STATE_URL", url)
        return scratch

    return switch


def _objects(fs: pafs.S3FileSystem, url: str, folder: str) -> dict[str, int]:
    """Key (relative to the state URL) → size of every object under ``folder``, listed straight from S3."""
    base = url.removeprefix("s3://")
    infos = fs.get_file_info(pafs.FileSelector(f"{base}/{folder}", recursive=True, allow_not_found=True))
    return {i.path.removeprefix(base + "/"): i.size for i in infos if i.type == pafs.FileType.File}


def _pushed_paths(fs: pafs.S3FileSystem, url: str) -> set[str]:
    """Every path a change record names, read as plain JSON."""
    base = url.removeprefix("s3://")
    paths: set[str] = set()
    for key in _objects(fs, url, "log"):
        with fs.open_input_stream(f"{base}/{key}") as f:
            paths |= set(json.loads(f.read())["changes"])
    return paths


def _state_paths(fs: pafs.S3FileSystem, url: str) -> set[str]:
    """The paths the state holds: the change records read as plain JSON in name order, later wins."""
    base = url.removeprefix("s3://")
    state: set[str] = set()
    for key in sorted(_objects(fs, url, "log")):
        with fs.open_input_stream(f"{base}/{key}") as f:
            for path, entry in json.loads(f.read())["changes"].items():
                (state.add if entry is not None else state.discard)(path)
    return state


def _rebuild(on, first: str, second: str, params: dict, run_id: str, run_after: datetime) -> dict:
    """Every step of one rebuild, alternating between the workers ``first`` and ``second``."""
    on(first)
    jobs = rebuild.discover(params, run_id)
    outcomes = [rebuild.ingest(params, job) for job in jobs[:1]]
    on(second)
    outcomes += [rebuild.ingest(params, job) for job in jobs[1:]]
    on(first)  # plans from ingest output the other wrote, which only the object store carries
    plan = rebuild.plan(params, outcomes, run_after)
    files = []
    for i, job in enumerate(rebuild.files_to_verbalize(plan)):
        on((first, second)[i % 2])
        files.append(rebuild.verbalize(params, plan, job))
    on(second)
    stages = [rebuild.evidence(plan, files, params)]
    for part in rebuild.evidence_parts(params, plan):
        on((first, second)[part % 2])
        rebuild.embed(params, plan, part)
    held = {}  # what each stage's worker holds of the build folder right after the stage
    for i, name in enumerate(STAGES):
        scratch = on((second, first)[i % 2])
        stages.append(rebuild.stage(params, plan, name))
        held[name] = {p.name for p in Path(local(plan["building"], scratch)).iterdir()}
    on(first)
    validation = rebuild.validate(params, plan)
    on(second)
    manifest = rebuild.publish(params, plan, stages, validation)
    on(first)
    report = rebuild.report(params, outcomes, plan, manifest)
    return {
        "jobs": jobs,
        "outcomes": outcomes,
        "plan": plan,
        "manifest": manifest,
        "report": report,
        "held": held,
    }


def _same_index(manifest: dict, cli) -> None:
    assert manifest["counts"] == cli.manifest.counts
    assert {n: s["fingerprint"] for n, s in manifest["stages"].items()} == {
        n: s.fingerprint for n, s in cli.manifest.stages.items()
    }
    assert set(manifest["validation"].values()) == {"ok"}


@pytest.mark.slow
def test_two_workers_sharing_only_a_state_url_build_the_in_process_index(
    workers, sample_index, state_url, bucket_fs
):
    a, b = "worker-a", "worker-b"
    scratch = {a: workers(a), b: workers(b)}
    run = _rebuild(workers, a, b, {}, RUN_ID, RUN_AFTER)
    plan, manifest = run["plan"], run["manifest"]

    travelling = json.dumps([run["jobs"], run["outcomes"], plan])  # what later steps resolve
    leaked = [m for s in scratch.values() for m in re.findall(re.escape(str(s)) + r'[^"]*', travelling)]
    assert not leaked, leaked[:5]
    store = VersionStore(scratch[b] / "indexes")
    assert store.current() == (scratch[b] / "indexes" / manifest["version"]).resolve()
    _, cli = sample_index
    _same_index(manifest, cli)
    assert run["report"]["published"] and Path(run["report"]["report"]).is_relative_to(scratch[a])
    # a stage pulls what it reads, not the other stages' outputs: statements ran on b, graph and vectors
    # on a (b built the entities, which the graph reads)
    assert [STAGES.index(s) % 2 for s in ("statements", "entities", "graph", "vectors")] == [0, 0, 1, 1]
    assert not {layout.GRAPH, layout.VECTORS} & run["held"]["statements"], run["held"]["statements"]
    assert layout.STATEMENTS in run["held"]["statements"] and layout.EVIDENCE in run["held"]["statements"]
    assert layout.ENTITIES in run["held"]["graph"]  # the graph reads the entities' table, built on b

    # what went through the bucket: the marker, ingest Parquet, evidence, embedding-cache parts, the index
    assert f"runs/{run_name(RUN_ID)}.json" in _objects(bucket_fs, state_url, "runs")
    pushed = _pushed_paths(bucket_fs, state_url)
    assert any(p.startswith("ingest/") and p.endswith(".parquet") for p in pushed)
    assert any(f"/evidence/{j['output']}" in p for p in pushed for j in plan["verbalize"])
    assert any(p.startswith("embeddings/") and "/part-" in p for p in pushed)
    assert any(p.startswith(f"indexes/{manifest['version']}/bm25/") for p in pushed)
    # each blob is named by the SHA-256 of its bytes: one published file, hashed here, is among them
    table = scratch[b] / "indexes" / manifest["version"] / "tables" / "table_rows.parquet"
    digest = hashlib.sha256(table.read_bytes()).hexdigest()
    assert _objects(bucket_fs, state_url, "blobs")[f"blobs/{digest[:2]}/{digest}"] == table.stat().st_size

    # a forced rebuild with the roles swapped: a publishes, never having pulled the first version, which
    # the state then drops (it keeps what the publisher holds) without a download
    second = _rebuild(workers, b, a, {"force": True}, RUN_ID + "-2", RUN_AFTER.replace(hour=13))
    _same_index(second["manifest"], cli)
    assert not (scratch[a] / "indexes" / manifest["version"]).exists()
    versions = {p.split("/")[1] for p in _state_paths(bucket_fs, state_url) if p.startswith("indexes/")}
    assert versions == {second["manifest"]["version"], "current", "current.json"}


def test_a_worker_with_another_state_url_fails_at_once_naming_the_object_it_cannot_see(
    workers, s3_bucket, tmp_path
):
    workers("worker-a")
    jobs = rebuild.discover({}, RUN_ID)
    wrong = s3_bucket.url("no-such-state")
    scratch = workers("worker-b", wrong)
    with pytest.raises(SharedStateMissing, match=r"ingest on .* cannot see the shared state") as failed:
        rebuild.ingest({}, jobs[0])
    assert f"{wrong}/runs/{run_name(RUN_ID)}.json" in str(failed.value)
    assert "HQA_REMOTE__STATE_URL" in str(failed.value)
    assert not scratch.exists()  # failed before writing anything


def test_a_worker_that_cannot_reach_the_state_url_fails_at_once_naming_it(workers, monkeypatch, state_url):
    workers("worker-a")
    jobs = rebuild.discover({}, RUN_ID)
    scratch = workers("worker-b")
    monkeypatch.setenv("HQA_REMOTE__ENDPOINT", f"http://127.0.0.1:{free_port()}")  # nothing listens
    started = time.monotonic()
    with pytest.raises(SharedStateMissing, match=r"ingest on .* cannot reach the shared state") as failed:
        rebuild.ingest({}, jobs[0])
    assert state_url in str(failed.value)
    assert time.monotonic() - started < 30
    assert not scratch.exists()


def _damage_test_run(workers) -> tuple[list, Path]:
    """discover and every ingest on worker a; returns the outcomes and a's scratch."""
    scratch = workers("worker-a")
    jobs = rebuild.discover({}, RUN_ID)
    return [rebuild.ingest({}, job) for job in jobs], scratch


def _blob_of(path: Path, url: str) -> str:
    digest = hashlib.sha256(path.read_bytes()).hexdigest()
    return f"{url.removeprefix('s3://')}/blobs/{digest[:2]}/{digest}"


def test_a_damaged_object_is_detected_and_named(workers, state_url, bucket_fs):
    outcomes, scratch = _damage_test_run(workers)
    parquet = next(p for p in sorted((scratch / "ingest").rglob("*.parquet")))
    key = _blob_of(parquet, state_url)
    with bucket_fs.open_output_stream(key) as out:
        out.write(b"not the bytes that were pushed")
    workers("worker-b")
    with pytest.raises(StateDamaged, match="is damaged") as failed:
        rebuild.plan({}, outcomes, RUN_AFTER)
    assert f"s3://{key}" in str(failed.value)


def test_a_missing_object_is_named(workers, state_url, bucket_fs):
    outcomes, scratch = _damage_test_run(workers)
    parquet = next(p for p in sorted((scratch / "ingest").rglob("*.parquet")))
    key = _blob_of(parquet, state_url)
    bucket_fs.delete_file(key)
    workers("worker-b")
    with pytest.raises(StateDamaged, match="does not exist") as failed:
        rebuild.plan({}, outcomes, RUN_AFTER)
    assert f"s3://{key}" in str(failed.value) and str(parquet.relative_to(scratch)) in str(failed.value)


def test_an_s3_dump_is_staged_by_each_ingest_worker_not_pushed_to_the_state(
    workers, s3_bucket, state_url, bucket_fs
):
    dumps = RemoteRoot.open(s3_bucket.url("dumps"), s3_bucket.settings())
    dumps.upload(WIKIDATA_ITEMS, WIKIDATA_ITEMS.name)
    params = {"wikidata": [f"{dumps.url}/{WIKIDATA_ITEMS.name}"]}
    workers("worker-a")
    jobs = rebuild.discover(params, RUN_ID)
    b = workers("worker-b")
    outcome = rebuild.ingest(params, jobs[0])  # b has no copy: it stages its own, with the same stamp
    copy = b / rebuild.RunJob.model_validate(jobs[0]).job.source.removeprefix("state:")
    digest = hashlib.sha256(WIKIDATA_ITEMS.read_bytes()).hexdigest()
    assert hashlib.sha256(copy.read_bytes()).hexdigest() == digest
    summary = rebuild.RunOutcome.model_validate(outcome).outcome
    assert not summary.skipped and summary.summary.outputs
    assert not any(p.startswith("ingest/_inputs/remote") for p in _pushed_paths(bucket_fs, state_url))
    assert f"blobs/{digest[:2]}/{digest}" not in _objects(bucket_fs, state_url, "blobs")
    assert any(p.startswith("ingest/entities/") for p in _pushed_paths(bucket_fs, state_url))
