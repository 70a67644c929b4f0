"""The rebuild's dump sources: local paths, file:// URIs and s3:// URLs, which ``discover`` stages."""

from __future__ import annotations

import hashlib

import pytest

from index import rebuild
from ingest.object_store import RemoteRoot
from tests.conftest import WIKIDATA_ITEMS, S3Bucket


def test_params_keep_s3_urls_and_turn_file_uris_into_paths() -> None:
    params = rebuild.RebuildParams.model_validate(
        {"wikidata": ["s3://dumps/items.json.bz2", "file:///data/api.json.bz2"], "ottqa": "s3://dumps/ottqa"}
    )
    assert params.wikidata == ["s3://dumps/items.json.bz2", "/data/api.json.bz2"]
    assert params.ottqa == "s3://dumps/ottqa"
    with pytest.raises(ValueError, match="local paths, file:// URIs and s3:// URLs"):
        rebuild.RebuildParams.model_validate({"wikipedia": ["https://dumps.example/x.xml.bz2"]})


def test_discover_plans_an_s3_dump_from_its_staged_copy_in_the_state_folder(
    s3_bucket: S3Bucket, tmp_path, monkeypatch
) -> None:
    """The job names the copy under the shared state root (portable), with the dump's own checksum."""
    remote = RemoteRoot.open(s3_bucket.url("discover"), s3_bucket.settings())
    remote.upload(WIKIDATA_ITEMS, WIKIDATA_ITEMS.name)
    monkeypatch.setenv("HQA_STATE_DIR", str(tmp_path))
    monkeypatch.setenv("HQA_REMOTE__ENDPOINT", s3_bucket.endpoint)
    jobs = rebuild.discover({"wikidata": [f"{remote.url}/{WIKIDATA_ITEMS.name}"]}, "test-run")
    assert len(jobs) == 1
    job = rebuild.RunJob.model_validate(jobs[0]).job
    assert job.source.startswith("state:ingest/_inputs/remote/") and job.source.endswith(WIKIDATA_ITEMS.name)
    assert job.sha256 == hashlib.sha256(WIKIDATA_ITEMS.read_bytes()).hexdigest()
