"""Damaged index versions (issue 17): a Kùzu or LanceDB folder cut short or deleted inside a published
version is named when the engine opens it, an older version stays servable, and a rebuild heals it.

Each test damages its own copy of the sample index: a version whose files are hard links to the shared
one (no space, no time), where a file about to be cut short is first replaced by a private copy.
"""

from __future__ import annotations

import os
import shutil
from collections.abc import Callable
from pathlib import Path

import pytest

from index import layout
from index.build import build_index
from index.integrity import IndexDamaged, damaged_files
from index.reader import IndexReader
from index.versions import VersionStore
from query import Engine, EngineConfig
from query.cli.main import main as hqa
from query.evaluation.metrics import exact_match

ARISTOTLE = "What was the name of Aristotle's father?"


def link_version(src: Path, root: Path, name: str) -> Path:
    """Publish ``src`` again as version ``name`` under ``root``, its files hard links to ``src``'s."""
    store = VersionStore(root)
    building = store.start(name)
    ignore = shutil.ignore_patterns("*.lock", "manifest.json", ".pins")  # batch tests' pins stay behind
    shutil.copytree(src, building, dirs_exist_ok=True, copy_function=os.link, ignore=ignore)
    return store.publish(building, store.manifest(src).model_copy(update={"version": name}))


def overwrite_middle(path: Path) -> None:
    """Overwrite 64 bytes in the middle of ``path`` (a private copy): the size stays, the bytes change."""
    copy = path.with_name(f".{path.name}.copy")
    shutil.copyfile(path, copy)
    with copy.open("r+b") as f:
        f.seek(copy.stat().st_size // 2)
        old = f.read(64)
        f.seek(-len(old), os.SEEK_CUR)
        f.write(bytes(b ^ 0xFF for b in old))
    os.replace(copy, path)


def cut_in_half(path: Path) -> None:
    """Truncate ``path`` to half its length, on a private copy: the shared index keeps its file."""
    copy = path.with_name(f".{path.name}.copy")
    shutil.copyfile(path, copy)
    os.replace(copy, path)
    os.truncate(path, path.stat().st_size // 2)


def lance_data_file(version: Path) -> Path:
    return next((version / layout.VECTORS).glob("evidence.lance/data/*.lance"))


def _relative(version: Path, path: Path) -> str:
    return str(path.relative_to(version))


def _cut_graph(v: Path) -> str:
    cut_in_half(v / layout.GRAPH_DB)
    return layout.GRAPH_DB


def _delete_graph(v: Path) -> str:
    shutil.rmtree(v / layout.GRAPH)
    return layout.GRAPH_DB


def _cut_lance(v: Path) -> str:
    data = lance_data_file(v)
    cut_in_half(data)
    return _relative(v, data)


def _delete_lance_data(v: Path) -> str:
    data = lance_data_file(v)
    data.unlink()
    return _relative(v, data)


def _delete_vectors(v: Path) -> str:
    shutil.rmtree(v / layout.VECTORS)
    return f"{layout.VECTORS}/"


DAMAGES: dict[str, Callable[[Path], str]] = {
    "kuzu file cut in half": _cut_graph,
    "kuzu folder deleted": _delete_graph,
    "lance data file cut in half": _cut_lance,
    "lance data file deleted": _delete_lance_data,
    "lance folder deleted": _delete_vectors,
}
"""Each damage, applied to a version folder, returns the (start of the) path the error must name."""


@pytest.fixture
def shared_untouched(sample_index):
    """After the test, the shared sample index still has every file at its published size."""
    _, result = sample_index
    yield result
    assert not damaged_files(result.version_dir, result.manifest.files)


@pytest.mark.parametrize("damage", DAMAGES)
def test_a_damaged_kuzu_or_lance_folder_is_named_when_the_engine_opens(
    shared_untouched, tmp_path: Path, damage: str
) -> None:
    """Before: Kùzu's "Reading past the end of the file", Lance's "failed to fill whole buffer" or "Not
    found" — raw RuntimeErrors raised inside the engine, the Lance ones only when it read the vectors."""
    root = tmp_path / "indexes"
    version = link_version(shared_untouched.version_dir, root, "v2")
    named = DAMAGES[damage](version)
    with pytest.raises(IndexDamaged) as raised:
        Engine.open(root, EngineConfig(reader="candidates"))
    message = str(raised.value)
    assert str(version) in message and named in message and "`hqa build`" in message, message


def test_damage_that_keeps_the_size_is_still_an_index_error_naming_the_path(
    shared_untouched, tmp_path: Path
) -> None:
    """A Tantivy segment whose footer is overwritten keeps its size; the library refuses it (before: a
    bare ValueError "Footer magic byte mismatch") and the engine says which folder and what to do."""
    version = link_version(shared_untouched.version_dir, tmp_path / "indexes", "v2")
    store = next((version / layout.BM25).glob("*.store"))
    copy = store.with_name(".store.copy")
    shutil.copyfile(store, copy)
    with copy.open("r+b") as f:
        f.seek(-16, os.SEEK_END)
        f.write(b"\0" * 16)
    os.replace(copy, store)
    with pytest.raises(IndexDamaged, match="Footer magic byte mismatch") as raised:
        Engine.open(version, EngineConfig(reader="candidates"))
    assert str(version / layout.BM25) in str(raised.value) and "`hqa build`" in str(raised.value)


def test_when_current_is_damaged_the_previous_version_still_answers(shared_untouched, tmp_path: Path) -> None:
    root = tmp_path / "indexes"
    older = link_version(shared_untouched.version_dir, root, "v1")
    current = link_version(shared_untouched.version_dir, root, "v2")
    cut_in_half(current / layout.GRAPH_DB)
    with pytest.raises(IndexDamaged) as raised:
        Engine.open(root, EngineConfig(reader="candidates"))
    assert f"hqa ask --index {older}" in str(raised.value)  # the error says which folder still serves
    with Engine.open(older, EngineConfig(reader="candidates")) as engine:  # a version folder opens as is
        answer = engine.ask(ARISTOTLE)
    assert answer.index_version == "v1" and exact_match(answer.answer, ["Nicomachus"]) == 1.0


def test_hqa_verify_finds_overwritten_bytes_that_the_check_at_open_cannot_see(
    shared_untouched, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """Issue 17: bytes overwritten in the Kùzu file keep its size, so opening the version does not notice
    (and Kùzu may crash the process on them). ``hqa verify`` hashes every file against the manifest."""
    root = tmp_path / "indexes"
    good = link_version(shared_untouched.version_dir, root, "v1")
    assert hqa(["verify", "--index", str(root)]) == 0
    assert "ok" in capsys.readouterr().out
    damaged = link_version(shared_untouched.version_dir, root, "v2")
    overwrite_middle(damaged / layout.GRAPH_DB)
    manifest = VersionStore(root).manifest(damaged)
    assert not damaged_files(damaged, manifest.files)  # the sizes all match
    assert hqa(["verify", "--index", str(root), "--all"]) == 1
    out = " ".join(capsys.readouterr().out.split())
    assert "damaged" in out and "SHA-256 changed" in out and "`hqa build`" in out, out
    assert layout.GRAPH_DB.split("/")[-1] in out and f"hqa ask --index {good}" in out
    assert hqa(["verify", "--index", str(good)]) == 0  # one version folder, checked alone


@pytest.mark.parametrize("damage", ["cut in half", "bytes overwritten"])
def test_a_rebuild_builds_the_damaged_stage_again_and_links_the_rest(
    sample_index, sample_ingest, shared_untouched, tmp_path: Path, damage: str
) -> None:
    """Before: with its inputs unchanged ``hqa build`` found the damaged current version up to date and
    made nothing; had it built, it would have hard-linked the damaged Kùzu file into the new version (an
    overwritten one until checksums were kept: its size is right)."""
    settings, _ = sample_index
    settings = settings.model_copy(update={"state_dir": tmp_path / "state"})
    damaged = link_version(shared_untouched.version_dir, settings.index_dir, "v1")
    (cut_in_half if damage == "cut in half" else overwrite_middle)(damaged / layout.GRAPH_DB)
    result = build_index(settings, ingest_dir=sample_ingest.out_dir)
    assert result.built and result.manifest.version != "v1"
    stages = result.manifest.stages
    assert stages["graph"].reused_from is None
    assert {n for n, s in stages.items() if s.reused_from == "v1"} == set(stages) - {"graph"}
    healed, shared = IndexReader.open(settings.index_dir), IndexReader(shared_untouched.version_dir)
    try:
        assert healed.version == result.manifest.version
        assert healed.graph.counts() == shared.graph.counts()
    finally:
        healed.close()
        shared.close()
