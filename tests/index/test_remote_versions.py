"""Index versions uploaded to object storage and synced to a query node: against moto's S3 server on
127.0.0.1 (tests.object_store_server) with the real sample index, and a file:// remote for the rest."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from index.integrity import IndexDamaged
from index.reader import IndexReader
from index.remote_listing import CURRENT_KEY, FILE_LIST, RemoteFileList, version_key
from index.remote_versions import SyncError, sync_version, upload_version
from index.versions import MANIFEST, READER_STATE, VersionLease, VersionStore
from ingest.object_store import RemoteRoot
from ingest.sources import file_sha256
from query import Engine, EngineConfig
from tests.conftest import S3Bucket
from tests.query.test_engine import belgium_population_by_year, digits


def _copy_version(source: Path, store: VersionStore, version: str) -> Path:
    """The sample index published again under ``store`` as ``version`` (a second build, without building)."""
    building = store.start(version)
    shutil.copytree(source, building, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE))
    manifest = store.manifest(source).model_copy(update={"version": version})
    return store.publish(building, manifest)


def _counts(index_dir: Path) -> tuple:
    reader = IndexReader.open(index_dir)
    try:
        hits = [h.evidence_id for h in reader.bm25.search("Belgium population", 5)]
        return reader.bm25.count(), reader.vectors.count(), reader.graph.counts(), hits
    finally:
        reader.close()


@pytest.fixture(scope="module")
def s3_uploaded(sample_index, s3_bucket: S3Bucket) -> tuple[RemoteRoot, Path]:
    """The sample index uploaded once to the S3 server (its remote root, its local version folder)."""
    _, result = sample_index
    remote = RemoteRoot.open(s3_bucket.url("synced"), s3_bucket.settings())
    upload_version(result.version_dir, remote)
    return remote, Path(result.version_dir)


def test_upload_writes_every_file_then_the_list_then_current(s3_uploaded) -> None:
    remote, version_dir = s3_uploaded
    manifest = VersionStore(version_dir.parent).manifest(version_dir)
    pointer = json.loads(remote.read_bytes(CURRENT_KEY))
    assert pointer == {"version": manifest.version}
    listing = RemoteFileList.model_validate_json(remote.read_bytes(version_key(manifest.version, FILE_LIST)))
    assert set(listing.files) == {*manifest.files, MANIFEST}
    assert not any(part in READER_STATE for name in listing.files for part in Path(name).parts)
    for name, size in manifest.files.items():
        info = remote.info(version_key(manifest.version, name))
        assert info.type == pafs.FileType.File and info.size == size
        assert listing.files[name].sha256 == file_sha256(version_dir / name)


def test_synced_version_answers_like_the_original(s3_uploaded, tmp_path) -> None:
    """An empty query node syncs the version over S3 and the real engine gives the same answer."""
    remote, version_dir = s3_uploaded
    node = tmp_path / "node"
    result = sync_version(remote, node, keep_versions=2)
    manifest = VersionStore(version_dir.parent).manifest(version_dir)
    assert result.version == manifest.version and result.switched
    assert result.downloaded_files == len(manifest.files) + 1  # and the manifest
    assert result.downloaded_bytes >= sum(manifest.files.values())
    synced = VersionStore(node).current()
    assert synced == (node / manifest.version).resolve()
    assert VersionStore(node).manifest(synced) == manifest
    assert _counts(node) == _counts(version_dir)
    by_year = belgium_population_by_year()
    year = max(by_year)
    question = f"What was the population of Belgium in {year}?"
    with Engine.open(node, EngineConfig(reader="candidates")) as engine:
        answer = engine.ask(question)
    assert digits(answer.answer) == str(by_year[year]) and answer.index_version == manifest.version
    with Engine.open(version_dir, EngineConfig(reader="candidates")) as engine:
        assert engine.ask(question).answer == answer.answer

    again = sync_version(remote, node, keep_versions=2)
    assert (again.downloaded_files, again.downloaded_bytes, again.switched) == (0, 0, False)
    assert again.kept_files == result.downloaded_files


def test_a_damaged_or_missing_remote_file_fails_the_sync_and_keeps_current(
    sample_index, s3_bucket: S3Bucket, tmp_path
) -> None:
    """A node on version A syncs B: a remote file with other bytes, then one missing, is named in the error
    and A stays current; once B is uploaded again the sync completes, keeping the files it had checked."""
    _, result = sample_index
    builds = VersionStore(tmp_path / "builds")
    first = _copy_version(result.version_dir, builds, "v1")
    second = _copy_version(result.version_dir, builds, "v2")
    remote = RemoteRoot.open(s3_bucket.url("damaged"), s3_bucket.settings())
    node = tmp_path / "node"
    upload_version(first, remote)
    sync_version(remote, node, keep_versions=3)
    upload_version(second, remote)
    names = sorted(VersionStore(second.parent).manifest(second).files, key=lambda n: "tantivy" not in n)
    damaged, missing = names[0], names[1]
    key = remote.path(version_key("v2", damaged))
    original = (second / damaged).read_bytes()
    with remote.fs.open_output_stream(key, compression=None) as out:
        out.write(bytes([original[0] ^ 0xFF]) + original[1:])  # same size, other bytes

    with pytest.raises(SyncError, match=rf"{damaged}.*has {len(original):,} bytes with SHA-256"):
        sync_version(remote, node, keep_versions=3)
    assert VersionStore(node).current() == (node / "v1").resolve()
    assert not (node / "v2").exists()

    upload_version(second, remote)  # its complete list is there: only current is written again
    with remote.fs.open_output_stream(key, compression=None) as out:
        out.write(original)
    remote.fs.delete_file(remote.path(version_key("v2", missing)))
    with pytest.raises(SyncError, match=rf"{missing} of v2 cannot be downloaded: .*does not exist"):
        sync_version(remote, node, keep_versions=3)
    assert VersionStore(node).current() == (node / "v1").resolve()

    remote.upload(second / missing, version_key("v2", missing))
    resumed = sync_version(remote, node, keep_versions=3)
    assert resumed.switched and resumed.kept_files > 0
    assert VersionStore(node).current() == (node / "v2").resolve()
    assert _counts(node) == _counts(result.version_dir)


def test_upload_refuses_a_version_whose_files_changed_since_publishing(sample_index, tmp_path) -> None:
    _, result = sample_index
    builds = VersionStore(tmp_path / "builds")
    good = _copy_version(result.version_dir, builds, "v1")
    bad = _copy_version(result.version_dir, builds, "v2")
    remote = RemoteRoot.open(f"file://{tmp_path / 'remote'}")
    upload_version(good, remote)
    name = next(n for n in builds.manifest(bad).files if n.endswith(".parquet"))
    data = bytearray((bad / name).read_bytes())
    data[-1] ^= 0xFF
    (bad / name).write_bytes(bytes(data))
    with pytest.raises(IndexDamaged, match=rf"{name} has other bytes than its build published"):
        upload_version(bad, remote)
    assert json.loads(remote.read_bytes(CURRENT_KEY)) == {"version": "v1"}
    assert not remote.exists(version_key("v2", FILE_LIST))


def test_sync_prunes_old_versions_but_not_one_a_reader_holds(sample_index, tmp_path) -> None:
    """With a file:// remote: keep=1 drops the old version only once its reader lets go."""
    _, result = sample_index
    builds = VersionStore(tmp_path / "builds")
    remote = RemoteRoot.open(f"file://{tmp_path / 'remote'}")
    node = tmp_path / "node"
    upload_version(_copy_version(result.version_dir, builds, "v1"), remote)
    sync_version(remote, node, keep_versions=1)
    lease = VersionLease(node / "v1")
    upload_version(_copy_version(result.version_dir, builds, "v2"), remote)
    second = sync_version(remote, node, keep_versions=1)
    assert second.switched and second.pruned == [] and (node / "v1").is_dir()
    lease.release()
    assert sync_version(remote, node, keep_versions=1).pruned == ["v1"]
    assert [p.name for p in VersionStore(node).versions()] == ["v2"]


def test_a_file_list_cannot_name_a_file_outside_its_version() -> None:
    sha = "0" * 64
    with pytest.raises(ValueError, match="not a path inside a version folder"):
        RemoteFileList.model_validate({"version": "v1", "files": {"../x": {"size": 1, "sha256": sha}}})
    with pytest.raises(ValueError, match="not an index version name"):
        RemoteFileList.model_validate({"version": "../v1", "files": {}})
