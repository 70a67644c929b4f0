"""Planning a batch on the real sample index: the planned version pinned until its parts are combined."""

from __future__ import annotations

import shutil
from pathlib import Path

from index.versions import READER_STATE, VersionStore
from query.batch.answer import answer_chunk
from query.batch.combine import combine_parts
from query.batch.plan import pin_holder, plan_chunks
from tests.query.batch.conftest import MixedQuestions


def test_a_planned_version_outlives_rebuilds_until_its_parts_are_combined(
    sample_index, mixed: MixedQuestions, tmp_path: Path
) -> None:
    """Issue 17: a batch pins the version it planned on. Without the pin, two rebuilds with
    keep_versions 1 before the chunks ran deleted it, and every chunk failed to open its index."""
    _, result = sample_index
    store = VersionStore(tmp_path / "indexes")
    manifest = store.manifest(result.version_dir)
    building = store.start("v1")
    shutil.copytree(
        result.version_dir, building, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE)
    )
    planned = store.publish(building, manifest.model_copy(update={"version": "v1"}))
    parts_dir = tmp_path / "parts"
    jobs = plan_chunks(mixed.path, store.root, parts_dir, chunk_size=5, reader="candidates")
    assert {j.index_version_dir for j in jobs} == {planned.resolve()}
    assert store.pins(planned) == [pin_holder(parts_dir)]
    for name in ("v2", "v3"):  # rebuilds publish and prune while the chunks wait
        store.publish(store.start(name), manifest.model_copy(update={"version": name}))
        store.prune(keep=1)
    assert planned.is_dir() and not (store.root / "v2").exists()
    summary = combine_parts([answer_chunk(j) for j in jobs], tmp_path / "answers.parquet")
    assert summary.index_version == "v1" and summary.questions == len(mixed.ids)
    assert store.pins(planned) == []  # combined: the pin is gone, and the next prune takes the version
    assert store.prune(keep=1) == [planned] and not planned.exists()
