"""Version folders, the atomic ``current`` pointer and pruning, with real manifests."""

from __future__ import annotations

import fcntl
import os
import shutil
from datetime import UTC, datetime, timedelta
from pathlib import Path

import numpy as np
import pytest

from index.reader import IndexReader
from index.versions import (
    BUILDING_PREFIX,
    LEASE,
    MANIFEST,
    PIN_HOURS,
    PINS,
    PRUNING_PREFIX,
    READER_STATE,
    VersionGone,
    VersionLease,
    VersionStore,
    open_version,
    resolve_index_dir,
)
from schemas.build import Manifest


def _publish(store: VersionStore, payload: str) -> Path:
    version = store.new_version_name()
    building = store.start(version)
    (building / "data.txt").write_text(payload)
    manifest = Manifest(
        version=version,
        created_at="2026-01-01T00:00:00+00:00",
        hqa_version="0",
        inputs=[],
        settings={},
        libraries={},
        stages={},
        counts={"rows": len(payload)},
        seconds=0.0,
    )
    return store.publish(building, manifest)


def test_current_moves_only_on_publish(tmp_path):
    store = VersionStore(tmp_path)
    assert store.current() is None
    with pytest.raises(FileNotFoundError):
        resolve_index_dir(tmp_path)
    first = _publish(store, "one")
    assert store.current() == first.resolve()
    building = store.start(store.new_version_name())
    (building / "data.txt").write_text("half")
    assert store.current() == first.resolve()  # an unfinished build is invisible
    store.abandon(building)
    assert not building.exists()


def test_publishing_a_folder_of_hard_links_leaves_the_linked_version_s_manifest_alone(tmp_path):
    """A building folder made of hard links to a published version's files (a reused version): the new
    manifest replaces the link, it is not written through it into the other version."""
    store = VersionStore(tmp_path)
    first = _publish(store, "one")
    before = (first / MANIFEST).read_text()
    version = store.new_version_name()
    building = store.start(version)
    building.rmdir()
    shutil.copytree(first, building, copy_function=os.link, ignore=shutil.ignore_patterns(LEASE))
    assert (building / MANIFEST).stat().st_ino == (first / MANIFEST).stat().st_ino
    manifest = store.manifest(first).model_copy(update={"version": version})
    second = store.publish(building, manifest)
    assert (first / MANIFEST).read_text() == before
    assert store.manifest(first).version == first.name and store.manifest(second).version == version


def test_reader_keeps_its_version_while_current_moves(tmp_path):
    store = VersionStore(tmp_path)
    _publish(store, "one")
    reader_dir = resolve_index_dir(tmp_path)
    second = _publish(store, "two")
    assert (reader_dir / "data.txt").read_text() == "one"
    assert resolve_index_dir(tmp_path) == second.resolve()
    assert (resolve_index_dir(tmp_path) / "data.txt").read_text() == "two"
    assert store.manifest(second).counts == {"rows": 3}


def test_prune_keeps_newest_and_never_current(tmp_path):
    store = VersionStore(tmp_path)
    paths = [_publish(store, str(i)) for i in range(4)]
    removed = store.prune(keep=2)
    assert removed == paths[:2]
    assert store.versions() == paths[2:]
    with pytest.raises(ValueError, match="keep"):
        store.prune(keep=0)


def test_a_version_a_reader_holds_is_not_pruned_until_it_lets_go(tmp_path):
    """Issue 17: prune deleted old versions whatever readers had them open; with keep=1 a rebuild deleted
    the folder an engine was still answering from."""
    store = VersionStore(tmp_path)
    first = _publish(store, "one")
    directory, lease = open_version(tmp_path)
    assert directory == first.resolve() and store.held() == [first]
    second = _publish(store, "two")
    assert store.prune(keep=1) == []
    assert (first / "data.txt").read_text() == "one" and store.versions() == [first, second]
    lease.release()
    assert store.held() == [] and store.prune(keep=1) == [first]
    assert store.versions() == [second] and not any(
        p.name.startswith(".") for p in tmp_path.iterdir() if p.is_dir()
    )


def test_a_version_being_pruned_cannot_be_leased_and_the_root_opens_the_newer_one(tmp_path):
    store = VersionStore(tmp_path)
    first = _publish(store, "one")
    second = _publish(store, "two")
    pruning = os.open(first / LEASE, os.O_RDONLY)
    fcntl.flock(pruning, fcntl.LOCK_EX)  # what prune holds while it deletes
    try:
        with pytest.raises(VersionGone):
            VersionLease(first)
        directory, lease = open_version(tmp_path)
        assert directory == second.resolve()
        lease.release()
    finally:
        os.close(pruning)


def test_a_pinned_version_is_kept_until_unpinned_or_its_pin_is_stale(tmp_path):
    store = VersionStore(tmp_path)
    old, _, _ = (_publish(store, p) for p in ("one", "two", "three"))
    assert store.pin(old, "batch-a") == old / PINS / "batch-a.json"
    assert store.pins(old) == ["batch-a"]
    assert old not in store.prune(keep=1) and old.is_dir()
    store.unpin(old, "batch-a")
    store.pin(old, "batch-b")
    stale = (datetime.now(UTC) - timedelta(hours=PIN_HOURS + 1)).timestamp()
    os.utime(old / PINS / "batch-b.json", (stale, stale))  # a job that died a day ago
    assert store.pins(old) == [] and store.prune(keep=1) == [old]


def test_half_published_and_half_pruned_folders_are_not_versions(tmp_path):
    store = VersionStore(tmp_path)
    published = _publish(store, "one")
    for name in (f"{BUILDING_PREFIX}v1", f"{PRUNING_PREFIX}v0"):
        shutil.copytree(published, tmp_path / name)
    assert store.versions() == [published]
    store.prune(keep=1)
    assert not (tmp_path / f"{PRUNING_PREFIX}v0").exists()  # a prune that died while deleting is finished


def test_real_indexes_stay_readable_while_a_rebuild_prunes_their_version(sample_index, tmp_path):
    """Tantivy, LanceDB and Kùzu of a version opened by a reader keep answering after a newer version is
    published with keep=1, and the old folder goes at the first prune after the reader closes."""
    _, result = sample_index
    store = VersionStore(tmp_path)
    first = store.start("v1")
    shutil.copytree(
        result.version_dir, first, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE)
    )
    first = store.publish(first, store.manifest(result.version_dir).model_copy(update={"version": "v1"}))
    reader = IndexReader.open(tmp_path)
    counts = (reader.bm25.count(), reader.vectors.count(), reader.graph.counts())
    second = store.start("v2")
    shutil.copytree(
        result.version_dir, second, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE)
    )
    store.publish(second, store.manifest(result.version_dir).model_copy(update={"version": "v2"}))
    store.prune(keep=1)
    assert first.is_dir()
    assert (reader.bm25.count(), reader.vectors.count(), reader.graph.counts()) == counts
    assert reader.bm25.search("Belgium", 3)
    assert len(reader.vectors.search(np.ones(reader.vectors.stats.dimension), 3)) == 3
    assert reader.statements.count() > 0  # a part first opened after the prune
    reader.close()
    assert store.prune(keep=1) == [first] and not first.exists()
