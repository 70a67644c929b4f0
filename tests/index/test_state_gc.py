"""Garbage collection in object storage (``index.state_gc``), on moto's S3 server and on a ``file://`` root.

The state is written through real ``StateExchange`` steps. What is expected is computed here: the bytes
each step wrote and their SHA-256, and the objects listed straight from the store (boto3 for S3, ``os.walk``
for a folder), never through the code under test. Covered: a superseded blob goes and the state pulls
the same afterwards; a young one stays; blobs uploaded or recorded while a collection reads the log are
kept, and a record naming a deleted blob fails loudly; a dry run deletes nothing and reports the same;
checkpoints beyond the kept ones go and the state reads the same; published versions are pruned to
``keep`` but never ``current``, and a node mid-sync of a deleted one fails and keeps its own.
"""

from __future__ import annotations

import hashlib
import os
import uuid
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path

import boto3
import pytest

from index import rebuild, remote_versions, state_gc
from index.remote_listing import CURRENT_KEY
from index.remote_versions import (
    SyncError,
    prune_remote_versions,
    remote_listing,
    sync_version,
    upload_version,
)
from index.state_exchange import StateExchange
from index.state_gc import CHECKPOINTS_KEPT, RunInProgress, collect_state_garbage
from index.state_log import ChangeLog, StateDamaged
from index.versions import VersionStore
from ingest.object_store import RemoteRoot
from query.cli.main import main
from schemas.build import Manifest
from schemas.settings import RemoteSettings

ROOTS = ("ingest", "indexes")


def sha(data: bytes) -> str:
    return hashlib.sha256(data).hexdigest()


@dataclass
class Store:
    """A root on one kind of object store, and its objects listed without hqa's code."""

    url: str
    settings: RemoteSettings
    listing: Callable[[str], dict[str, int]]

    def objects(self, folder: str) -> dict[str, int]:
        """Key (relative to the root) → size of every object under ``folder``."""
        return self.listing(folder)

    def blobs(self) -> set[str]:
        """The SHA-256 names of the blobs stored."""
        return {k.rsplit("/", 1)[-1] for k in self.objects("blobs")}

    def remote(self) -> RemoteRoot:
        return RemoteRoot.open(self.url, self.settings)


@pytest.fixture(params=["s3", "file"])
def store(request, tmp_path) -> Store:
    if request.param == "s3":
        bucket = request.getfixturevalue("s3_bucket")
        prefix = f"gc-{uuid.uuid4().hex[:8]}"
        client = boto3.client("s3", endpoint_url=bucket.endpoint, region_name="us-east-1")

        def listing(folder: str) -> dict[str, int]:
            found = {}
            pages = client.get_paginator("list_objects_v2").paginate(
                Bucket=bucket.bucket, Prefix=f"{prefix}/{folder}/"
            )
            for page in pages:
                for obj in page.get("Contents", []):
                    if not obj["Key"].endswith("/"):  # a folder marker, not an object of ours
                        found[obj["Key"].removeprefix(prefix + "/")] = obj["Size"]
            return found

        return Store(bucket.url(prefix), bucket.settings(), listing)
    root = tmp_path / "store"

    def walk(folder: str) -> dict[str, int]:
        found = {}
        for here, _, files in os.walk(root / folder):
            for name in files:
                path = Path(here) / name
                found[str(path.relative_to(root))] = path.stat().st_size
        return found

    return Store(f"file://{root}", RemoteSettings(), walk)


def exchange(store: Store, tmp_path: Path, name: str, **checkpoints) -> StateExchange:
    return StateExchange(tmp_path / name, store.remote(), ROOTS, **checkpoints)


def write(ex: StateExchange, files: dict[str, bytes], step: str = "write") -> None:
    """One step on ``ex`` that writes ``files`` (paths under the state root)."""
    with ex.step(step, ("ingest",)):
        for rel, data in files.items():
            (ex.root / rel).parent.mkdir(parents=True, exist_ok=True)
            (ex.root / rel).write_bytes(data)


def pulled(store: Store, tmp_path: Path) -> dict[str, str]:
    """Path → SHA-256 of every file a fresh scratch pulls."""
    fresh = exchange(store, tmp_path, f"fresh-{uuid.uuid4().hex[:6]}")
    with fresh.step("read", ROOTS):
        pass
    return {
        str(p.relative_to(fresh.root)): sha(p.read_bytes())
        for p in (fresh.root / "ingest").rglob("*")
        if p.is_file()
    }


FIRST, SECOND, OTHER = b"first bytes " * 300, b"second bytes " * 200, b"never rewritten " * 50


def two_writes(store: Store, tmp_path: Path) -> StateExchange:
    """ingest/t/one.parquet written twice (FIRST, then SECOND) and ingest/t/two.parquet once."""
    a = exchange(store, tmp_path, "a")
    write(a, {"ingest/t/one.parquet": FIRST, "ingest/t/two.parquet": OTHER}, "first")
    write(a, {"ingest/t/one.parquet": SECOND}, "second")
    assert store.blobs() == {sha(FIRST), sha(SECOND), sha(OTHER)}
    return a


# --- blobs ----------------------------------------------------------------------------------------------


def test_a_superseded_blob_is_deleted_and_the_state_pulls_the_same(store, tmp_path):
    two_writes(store, tmp_path)
    expected = {"ingest/t/one.parquet": sha(SECOND), "ingest/t/two.parquet": sha(OTHER)}
    assert pulled(store, tmp_path) == expected
    records = store.objects("log")

    report = collect_state_garbage(store.remote(), grace_hours=0)

    assert store.blobs() == {sha(SECOND), sha(OTHER)}
    assert (report.blobs_deleted, report.blobs_deleted_bytes) == (1, len(FIRST))
    assert (report.blobs_kept, report.blobs_kept_bytes, report.blobs_young) == (
        2,
        len(SECOND) + len(OTHER),
        0,
    )
    assert store.objects("log") == records  # every change record kept
    assert pulled(store, tmp_path) == expected
    again = collect_state_garbage(store.remote(), grace_hours=0)
    assert (again.blobs_deleted, again.blobs_kept) == (0, 2)


def test_a_blob_younger_than_the_grace_period_is_kept(store, tmp_path):
    two_writes(store, tmp_path)
    with pytest.raises(RunInProgress, match="younger than the grace period"):
        collect_state_garbage(store.remote(), grace_hours=1)
    assert store.blobs() == {sha(FIRST), sha(SECOND), sha(OTHER)}

    report = collect_state_garbage(store.remote(), grace_hours=1, force=True)

    assert store.blobs() == {sha(FIRST), sha(SECOND), sha(OTHER)}
    assert (report.blobs_deleted, report.blobs_young, report.blobs_kept) == (0, 1, 3)


class HookedLog(ChangeLog):
    """The collection's log, with something done just before and just after its first read of the log
    (after its listing of the blobs): another process uploading or pushing meanwhile."""

    before: Callable[[], None] | None = None
    after: Callable[[], None] | None = None

    def view(self):
        hook, HookedLog.before = HookedLog.before, None
        if hook:
            hook()
        seen = super().view()
        hook, HookedLog.after = HookedLog.after, None
        if hook:
            hook()
        return seen


def test_blobs_uploaded_or_named_while_the_log_is_read_are_kept(store, tmp_path, monkeypatch):
    a = two_writes(store, tmp_path)
    early, late = b"uploaded before the listing, named after it " * 10, b"uploaded after the listing " * 10
    remote = store.remote()
    remote.write_bytes(f"blobs/{sha(early)[:2]}/{sha(early)}", early)  # a push's upload, record to come

    def meanwhile() -> None:
        # the record naming ``early`` (its push finds the blob there and skips it), and an upload of
        # ``late`` whose record is not written yet
        write(a, {"ingest/t/early.parquet": early}, "named meanwhile")
        remote.write_bytes(f"blobs/{sha(late)[:2]}/{sha(late)}", late)

    HookedLog.before = meanwhile
    monkeypatch.setattr(state_gc, "ChangeLog", HookedLog)
    report = collect_state_garbage(remote, grace_hours=0)

    assert store.blobs() == {sha(SECOND), sha(OTHER), sha(early), sha(late)}
    assert report.blobs_deleted == 1  # FIRST only: late was not listed, early is named
    assert pulled(store, tmp_path)["ingest/t/early.parquet"] == sha(early)


def test_a_record_naming_a_blob_deleted_meanwhile_fails_the_collection(store, tmp_path, monkeypatch):
    """The race the module's docstring describes: a push finds an old unnamed blob present, skips its
    upload, and writes its record after the collection read the log. Not prevented (collecting while a
    rebuild runs is not supported), but never silent."""
    a = two_writes(store, tmp_path)

    def push_first_again() -> None:
        write(a, {"ingest/t/back.parquet": FIRST}, "FIRST's bytes again")

    HookedLog.after = push_first_again
    monkeypatch.setattr(state_gc, "ChangeLog", HookedLog)
    with pytest.raises(StateDamaged, match=r"names blobs the collection deleted: ingest/t/back\.parquet"):
        collect_state_garbage(store.remote(), grace_hours=0)
    assert sha(FIRST) not in store.blobs()


def test_a_dry_run_deletes_nothing_and_reports_what_a_real_run_deletes(store, tmp_path):
    checkpoints = {"checkpoint_every": 1, "checkpoint_settle_seconds": 0}
    a = exchange(store, tmp_path, "a", **checkpoints)
    for i in range(4):
        write(a, {"ingest/t/one.parquet": f"version {i}".encode() * 100}, f"step {i}")
    before = {f: store.objects(f) for f in ("blobs", "log", "checkpoints")}

    dry = collect_state_garbage(store.remote(), grace_hours=0, dry_run=True)

    assert {f: store.objects(f) for f in before} == before
    real = collect_state_garbage(store.remote(), grace_hours=0)
    ignored = {"dry_run", "seconds"}
    assert dry.model_dump(exclude=ignored) == real.model_dump(exclude=ignored)
    assert (real.blobs_deleted, real.checkpoints_deleted) == (3, 3 - CHECKPOINTS_KEPT)
    assert real.blobs_deleted_bytes == sum(len(f"version {i}".encode() * 100) for i in range(3))
    assert len(store.objects("blobs")) == len(before["blobs"]) - 3


# --- checkpoints ----------------------------------------------------------------------------------------


def test_checkpoints_beyond_the_kept_ones_go_and_the_state_reads_the_same(store, tmp_path):
    a = exchange(store, tmp_path, "a", checkpoint_every=1, checkpoint_settle_seconds=0)
    written = {}
    for i in range(5):
        written[f"ingest/t/f{i % 3}.parquet"] = data = f"step {i} ".encode() * 40
        write(a, {f"ingest/t/f{i % 3}.parquet": data}, f"step {i}")
    expected = {path: sha(data) for path, data in written.items()}
    checkpoints = sorted(store.objects("checkpoints"))
    assert len(checkpoints) == 4  # each step from the second on folds the records before it
    damaged = f"checkpoints/999999/99/{'9' * 20}-damaged-1-00000000.json.gz"  # newest, unreadable
    store.remote().write_bytes(damaged, b"not gzip")

    report = collect_state_garbage(store.remote(), grace_hours=0)

    assert sorted(store.objects("checkpoints")) == checkpoints[-CHECKPOINTS_KEPT:]
    assert (report.checkpoints_kept, report.checkpoints_deleted, report.checkpoints_damaged) == (2, 3, 1)
    assert len(store.objects("log")) == 5
    assert pulled(store, tmp_path) == expected
    if store.url.startswith("file://"):  # the emptied bucket folders went too
        assert not (Path(store.url.removeprefix("file://")) / "checkpoints" / "999999").exists()


def test_blobs_without_any_change_record_are_not_collected(store):
    remote = store.remote()
    remote.write_bytes(f"blobs/ab/ab{'0' * 62}", b"x")
    with pytest.raises(StateDamaged, match="no change record"):
        collect_state_garbage(remote, grace_hours=0)
    assert store.blobs() == {f"ab{'0' * 62}"}


# --- published versions ---------------------------------------------------------------------------------


def publish(store: VersionStore, version: str) -> Path:
    """A tiny published version: one data file whose bytes name the version."""
    building = store.start(version)
    data = f"the data of {version}\n".encode() * 100
    (building / "data.bin").write_bytes(data)
    manifest = Manifest(
        version=version,
        created_at="2026-01-01T00:00:00Z",
        hqa_version="test",
        inputs=[],
        settings={},
        libraries={},
        stages={},
        counts={},
        seconds=0.0,
        files={"data.bin": len(data)},
        checksums={"data.bin": sha(data)},
    )
    return store.publish(building, manifest)


def versions_of(store: Store) -> dict[str, int]:
    """Version → bytes stored, listed directly."""
    out: dict[str, int] = {}
    for key, size in store.objects("versions").items():
        version = key.split("/")[1]
        out[version] = out.get(version, 0) + size
    return out


def test_versions_beyond_keep_are_pruned_never_current_and_a_node_mid_sync_keeps_its_own(
    store, tmp_path, monkeypatch
):
    builds = VersionStore(tmp_path / "builds")
    local = {v: publish(builds, v) for v in ("v1", "v2", "v3", "v4")}
    remote, node = store.remote(), tmp_path / "node"
    upload_version(local["v1"], remote)
    sync_version(remote, node, keep_versions=3)
    upload_version(local["v2"], remote)
    stale = remote_listing(remote)  # the node starts syncing v2 ...
    upload_version(local["v3"], remote)
    upload_version(local["v4"], remote)
    upload_version(local["v1"], remote)  # a rollback: current names the oldest again
    sizes = versions_of(store)

    report = prune_remote_versions(remote, keep=2, grace_hours=0)

    assert set(versions_of(store)) == {"v1", "v3", "v4"}
    assert (report.current, report.kept, report.deleted) == ("v1", ["v1", "v3", "v4"], ["v2"])
    assert report.deleted_bytes == sizes["v2"]
    # ... and finds v2 gone: a clear SyncError, its own current unchanged
    monkeypatch.setattr(remote_versions, "remote_listing", lambda _: stale)
    with pytest.raises(SyncError, match=r"data\.bin of v2 cannot be downloaded: .*does not exist"):
        sync_version(remote, node, keep_versions=3)
    assert VersionStore(node).current() == (node / "v1").resolve()
    monkeypatch.undo()
    fresh = sync_version(remote, tmp_path / "fresh", keep_versions=3)  # the current syncs as before
    assert (fresh.version, fresh.switched) == ("v1", True)
    assert sha((tmp_path / "fresh" / "v1" / "data.bin").read_bytes()) == sha(
        (local["v1"] / "data.bin").read_bytes()
    )

    young = prune_remote_versions(remote, keep=1, grace_hours=1)  # v3 was uploaded seconds ago
    assert (young.deleted, young.young) == ([], ["v3"])
    last = prune_remote_versions(remote, keep=1, grace_hours=0, dry_run=True)
    assert last.deleted == ["v3"] and set(versions_of(store)) == {"v1", "v3", "v4"}
    prune_remote_versions(remote, keep=1, grace_hours=0)
    assert set(versions_of(store)) == {"v1", "v4"}  # current and the newest
    assert remote.read_bytes(CURRENT_KEY) == b'{"version":"v1"}'


# --- the command and the rebuild's task -----------------------------------------------------------------


def test_hqa_index_gc_refuses_while_a_run_is_recent_unless_forced(store, tmp_path, monkeypatch):
    two_writes(store, tmp_path)
    monkeypatch.setenv("HQA_STATE_DIR", str(tmp_path / "cli"))
    monkeypatch.setenv("HQA_REMOTE__STATE_URL", store.url)
    if store.settings.endpoint:
        monkeypatch.setenv("HQA_REMOTE__ENDPOINT", store.settings.endpoint)
    everything = {sha(FIRST), sha(SECOND), sha(OTHER)}

    assert main(["index", "gc"]) == 1  # the records are seconds old: a run may be under way
    assert main(["index", "gc", "--dry-run"]) == 0
    assert main(["index", "gc", "--force"]) == 0  # forced, but FIRST is younger than the default grace
    assert store.blobs() == everything
    monkeypatch.setenv("HQA_REMOTE__GC_GRACE_HOURS", "0")
    assert main(["index", "gc"]) == 0
    assert store.blobs() == everything - {sha(FIRST)}


def test_the_rebuild_task_is_a_no_op_without_object_storage(monkeypatch, tmp_path, caplog):
    monkeypatch.setenv("HQA_STATE_DIR", str(tmp_path))
    for name in ("HQA_REMOTE__STATE_URL", "HQA_REMOTE__URL"):
        monkeypatch.delenv(name, raising=False)
    with caplog.at_level("INFO", "index.rebuild"):
        assert rebuild.gc({}) == {"state": None, "versions": None}
    assert "nothing in object storage to collect" in caplog.text
