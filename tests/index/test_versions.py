"""Version folders, the atomic ``current`` pointer and pruning, with real manifests."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.versions import VersionStore, resolve_index_dir
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
