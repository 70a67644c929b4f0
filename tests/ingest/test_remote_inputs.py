"""Dumps read from object storage: the sample dumps uploaded to moto's S3 server on 127.0.0.1, staged and
ingested, give what the local files give; each is downloaded and hashed once."""

from __future__ import annotations

import hashlib
from pathlib import Path

import pytest

from ingest import checksums
from ingest.object_store import RemoteRoot
from ingest.ottqa import PASSAGE_FILE, TABLE_FILE
from ingest.pipeline import run_ingest, sample_inputs
from ingest.remote_inputs import stage_inputs, staging_dir
from ingest.shard_plan import IngestOptions, plan_shards
from schemas.ingest import IngestSummary
from tests.conftest import SAMPLES, S3Bucket


@pytest.fixture(scope="module")
def dump_urls(s3_bucket: S3Bucket) -> dict[str, list[str]]:
    """The bundled sample dumps, uploaded under ``dumps/`` (OTT-QA as a folder of its two files)."""
    remote = RemoteRoot.open(s3_bucket.url("dumps"), s3_bucket.settings())
    local = sample_inputs(SAMPLES)
    urls: dict[str, list[str]] = {"wikidata": [], "wikipedia": []}
    for reader in ("wikidata", "wikipedia"):
        for path in getattr(local, reader):
            remote.upload(path, f"{reader}/{path.name}")
            urls[reader].append(f"{remote.url}/{reader}/{path.name}")
    assert local.ottqa is not None
    for name in (TABLE_FILE, PASSAGE_FILE):
        remote.upload(local.ottqa / name, f"ottqa/{name}")
    urls["ottqa"] = [f"{remote.url}/ottqa"]
    return urls


def _stage(urls: dict[str, list[str]], out: Path, s3_bucket: S3Bucket):
    return stage_inputs(
        urls["wikidata"], urls["wikipedia"], urls["ottqa"][0], out_dir=out, settings=s3_bucket.settings()
    )


def _sha(path: Path) -> str:
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _by_input(summaries: list[IngestSummary]) -> dict[tuple[str, str, str], IngestSummary]:
    return {(s.reader, Path(s.source).name, s.shard): s for s in summaries}


def _outputs(summary: IngestSummary, out_dir: Path) -> dict[str, tuple[int, str]]:
    """Each output file (relative name) with its rows and a SHA-256 of its bytes."""
    return {str(Path(o.path).relative_to(out_dir)): (o.rows, _sha(Path(o.path))) for o in summary.outputs}


def test_dumps_staged_from_s3_ingest_like_the_local_files(
    dump_urls, s3_bucket, sample_ingest, settings, tmp_path, monkeypatch
) -> None:
    out = tmp_path / "ingest"
    staged = _stage(dump_urls, out, s3_bucket)
    local = sample_inputs(SAMPLES)
    assert len(staged.downloaded) == len(local.wikidata) + len(local.wikipedia) + 2 and not staged.reused
    copies = [*staged.inputs.wikidata, *staged.inputs.wikipedia]
    assert all(p.is_relative_to(staging_dir(out)) for p in copies)
    assert [p.name for p in staged.inputs.wikidata] == [p.name for p in local.wikidata]

    hashed: list[Path] = []
    original = checksums.file_sha256
    monkeypatch.setattr(checksums, "file_sha256", lambda p, *a, **k: hashed.append(p) or original(p, *a, **k))
    inputs = staged.inputs
    jobs = plan_shards(inputs.wikidata, inputs.wikipedia, inputs.ottqa, out_dir=out, threads=2)
    assert hashed == []  # the download hashed each dump: planning reads none of them again
    assert local.ottqa is not None
    ottqa = ":".join(_sha(local.ottqa / name) for name in (TABLE_FILE, PASSAGE_FILE))
    assert {j.sha256 for j in jobs} == {_sha(p) for p in [*local.wikidata, *local.wikipedia]} | {ottqa}

    options = IngestOptions.from_settings(settings.model_copy(update={"workers": 2}))
    report = run_ingest(inputs, out, property_table=settings.property_table, options=options)
    remote_runs, local_runs = _by_input(report.summaries), _by_input(sample_ingest.summaries)
    assert remote_runs.keys() == local_runs.keys()
    for key, summary in remote_runs.items():
        expected = local_runs[key]
        same = ("source_sha256", "source_bytes", "records_read", "records_written", "quarantined", "counts")
        assert {f: getattr(summary, f) for f in same} == {f: getattr(expected, f) for f in same}, key
        assert _outputs(summary, out) == _outputs(expected, sample_ingest.out_dir), key


def test_a_second_staging_downloads_nothing_and_a_changed_object_is_fetched_again(
    dump_urls, s3_bucket, tmp_path
) -> None:
    out = tmp_path / "ingest"
    first = _stage(dump_urls, out, s3_bucket)
    again = _stage(dump_urls, out, s3_bucket)
    assert again.downloaded == [] and sorted(again.reused) == sorted(first.downloaded)
    assert again.inputs == first.inputs

    url = dump_urls["wikipedia"][0]
    remote = RemoteRoot.open(url, s3_bucket.settings())
    smaller = SAMPLES / "wikipedia" / "enwiki-table-markup.xml.bz2"
    remote.upload(smaller, "")  # the object is replaced (other size, newer time)
    try:
        changed = _stage(dump_urls, out, s3_bucket)
        assert changed.downloaded == [url]
        assert changed.inputs.wikipedia[-1].read_bytes() == smaller.read_bytes()
    finally:
        remote.upload(SAMPLES / "wikipedia" / Path(url).name, "")

    only = stage_inputs(dump_urls["wikidata"][:1], [], None, out_dir=out, settings=s3_bucket.settings())
    assert only.downloaded == [] and [p.name for p in staging_dir(out).iterdir()] == [
        only.inputs.wikidata[0].parent.name
    ]  # the copies of dumps no longer given are deleted


def test_a_missing_object_is_named(s3_bucket, tmp_path) -> None:
    url = s3_bucket.url("dumps/wikidata/no-such-dump.json.bz2")
    with pytest.raises(FileNotFoundError, match="dump not found: s3://hqa-test/dumps/wikidata/no-such-dump"):
        stage_inputs([url], [], None, out_dir=tmp_path, settings=s3_bucket.settings())
