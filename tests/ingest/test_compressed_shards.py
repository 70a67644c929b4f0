"""Byte shards of compressed Wikidata dumps: the union of N shards equals one shard's output exactly.

The real sample dump is re-compressed into small bz2 blocks (``bzip2 -1``: 100 kB) and streams, and into
gzip members read through rapidgzip checkpoints a few hundred kB apart, so that N shards really split it:
each shard reaches its start through the file's block index, built once per file and reused.
"""

from __future__ import annotations

import bz2
import gzip
import json
import os
from itertools import pairwise
from pathlib import Path

import polars as pl
import pytest

import ingest.seek_index as seek_module
from ingest.checksums import ChecksumCache
from ingest.pipeline import IngestInputs, run_ingest
from ingest.seek_index import read_from, seek_index
from ingest.shard_plan import IngestOptions, plan_shards, seek_dir
from ingest.shards import Shard
from ingest.sources import file_sha256
from schemas.settings import HqaSettings
from tests.conftest import WIKIDATA_API, WIKIDATA_ITEMS

SHARD_BYTES = 300_000
TABLES = ("entities", "statements", "properties")


@pytest.fixture(scope="module")
def raw() -> bytes:
    """Both sample dumps' lines as one dump in the official layout (what a shard splits)."""
    lines = []
    for path in (WIKIDATA_ITEMS, WIKIDATA_API):
        lines += [
            ln for ln in bz2.decompress(path.read_bytes()).split(b"\n") if ln.strip() not in (b"[", b"]", b"")
        ]
    return b"[\n" + b"\n".join(ln.rstrip(b",") + b"," for ln in lines).rstrip(b",") + b"\n]\n"


def _raw_ids(raw: bytes) -> list[str]:
    """Entity ids read with the standard library, independently of the code under test."""
    return [json.loads(ln.rstrip(b",")).get("id") for ln in raw.split(b"\n") if ln.startswith(b"{")]


def _bz2_streams(raw: bytes, streams: int) -> bytes:
    """Several bz2 streams of 100 kB blocks, as multistream dumps are published."""
    step = len(raw) // streams + 1
    return b"".join(bz2.compress(raw[i : i + step], 1) for i in range(0, len(raw), step))


def _gzip_members(raw: bytes, members: int) -> bytes:
    step = len(raw) // members + 1
    return b"".join(gzip.compress(raw[i : i + step], 6) for i in range(0, len(raw), step))


@pytest.fixture(scope="module", params=["bz2-blocks", "bz2-streams", "gzip", "gzip-members"])
def dump(request: pytest.FixtureRequest, raw: bytes, tmp_path_factory: pytest.TempPathFactory) -> Path:
    folder = tmp_path_factory.mktemp(request.param)
    kind = request.param
    if kind == "bz2-blocks":
        data, name = bz2.compress(raw, 1), "items.json.bz2"
    elif kind == "bz2-streams":
        data, name = _bz2_streams(raw, 3), "items.json.bz2"
    elif kind == "gzip":
        data, name = gzip.compress(raw, 6), "items.json.gz"
    else:
        data, name = _gzip_members(raw, 4), "items.json.gz"
    path = folder / name
    path.write_bytes(data)
    return path


@pytest.fixture(autouse=True)
def _small_gzip_checkpoints(monkeypatch: pytest.MonkeyPatch) -> None:
    """Checkpoints every 128 kB of the gzip file, so a 1.4 MB sample has ~10 places to start from."""
    monkeypatch.setattr(seek_module, "GZIP_CHECKPOINT_BYTES", 128 << 10)


def _options(workers: int = 2) -> IngestOptions:
    return IngestOptions.from_settings(HqaSettings(workers=workers))


def _tables(out: Path) -> dict[str, list[str]]:
    """Every row of each table as canonical JSON, sorted: equal lists are equal multisets of rows (the two
    samples share some entities, so no column is a key)."""
    return {table: sorted(pl.read_parquet(out / table).write_ndjson().splitlines()) for table in TABLES}


def _ingest(dump: Path, out: Path, shard_bytes: int | None, props: Path) -> list:
    report = run_ingest(
        IngestInputs(wikidata=[dump]), out, property_table=props, options=_options(), shard_bytes=shard_bytes
    )
    return report.outcomes


def test_the_union_of_n_shards_equals_one_shard(dump: Path, raw: bytes, tmp_path: Path) -> None:
    props = HqaSettings().property_table
    whole = _ingest(dump, tmp_path / "whole", None, props)
    assert [o.job.shard for o in whole] == ["all"]
    sharded = _ingest(dump, tmp_path / "sharded", SHARD_BYTES, props)
    shards = [Shard.parse(o.job.shard) for o in sharded]
    assert len(shards) == -(-dump.stat().st_size // SHARD_BYTES) >= 4
    assert shards[0].start == 0 and shards[-1].end is None
    assert all(a.end == b.start for a, b in pairwise(shards))  # a partition
    assert sum(o.summary.records_written > 0 for o in sharded) >= 3  # the entities really are spread
    expected = _tables(tmp_path / "whole")
    union = _tables(tmp_path / "sharded")
    ids = pl.read_parquet(tmp_path / "sharded" / "entities")["id"].to_list()
    assert sorted(ids) == sorted(_raw_ids(raw))  # nothing lost, nothing twice
    for table in TABLES:
        assert len(union[table]) > 0 and union[table] == expected[table], table
    assert sum(o.summary.counts["statements"] for o in sharded) == whole[0].summary.counts["statements"]
    assert all(o.summary.source_sha256 == file_sha256(dump) for o in sharded + whole)


def test_the_block_index_is_built_once_and_reused_by_every_shard(
    dump: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    builds = []
    for name in ("_build_bz2", "_build_gzip"):
        real = getattr(seek_module, name)

        def counted(*args, real=real):  # type: ignore[no-untyped-def]
            builds.append(args[0])
            return real(*args)

        monkeypatch.setattr(seek_module, name, counted)
    out = tmp_path / "out"
    jobs = plan_shards([dump], [], None, out_dir=out, shard_bytes=SHARD_BYTES, threads=2)
    assert len(builds) == 1 and len(jobs) >= 4
    run_ingest(
        IngestInputs(wikidata=[dump]),
        out,
        property_table=HqaSettings().property_table,
        options=_options(),
        shard_bytes=SHARD_BYTES,
    )
    assert len(builds) == 1  # planning again and every shard loaded the saved index
    index = seek_index(dump, jobs[0].sha256, seek_dir(out))
    assert index is not None and index.checkpoints >= 4
    unpack = bz2.decompress if index.kind == "bz2" else gzip.decompress
    assert index.decompressed_bytes == len(unpack(dump.read_bytes()))


def test_reading_from_an_offset_gives_the_decompressed_bytes_there(
    dump: Path, raw: bytes, tmp_path: Path
) -> None:
    sha = file_sha256(dump)
    index = seek_index(dump, sha, tmp_path)
    assert index is not None
    for offset in (0, 1, 99_999, 100_000, len(raw) // 2, len(raw) - 5, len(raw)):
        got = b"".join(read_from(dump, index, tmp_path, offset, block=1 << 16))
        assert got == raw[offset:], offset


def test_a_cut_archive_is_one_shard_and_its_damage_quarantined(raw: bytes, tmp_path: Path) -> None:
    for name, data in (("cut.json.bz2", bz2.compress(raw, 1)), ("cut.json.gz", gzip.compress(raw, 6))):
        path = tmp_path / name
        path.write_bytes(data[: len(data) * 2 // 3])
        jobs = plan_shards([path], [], None, out_dir=tmp_path / "out", shard_bytes=SHARD_BYTES)
        assert [j.shard for j in jobs] == ["all"], name
        report = run_ingest(
            IngestInputs(wikidata=[path]),
            tmp_path / "out",
            property_table=HqaSettings().property_table,
            options=_options(1).model_copy(
                update={"wikidata": _options(1).wikidata.model_copy(update={"max_error_rate": None})}
            ),
            shard_bytes=SHARD_BYTES,
        )
        summary = report.outcomes[0].summary
        assert summary.quarantined >= 1 and 0 < summary.records_written < len(_raw_ids(raw)), name


def test_checksums_are_computed_once_per_file_and_again_when_it_changes(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    dump = tmp_path / "items.json.bz2"
    dump.write_bytes(WIKIDATA_ITEMS.read_bytes())
    cache = ChecksumCache(tmp_path / "sums")
    first = cache.sha256(dump)
    assert first == file_sha256(dump)
    jobs = plan_shards([dump], [], None, out_dir=tmp_path / "ingest")  # its own cache: hashed once here

    def no_hashing(*args, **kwargs):  # type: ignore[no-untyped-def]
        raise AssertionError("an unchanged file was hashed again")

    monkeypatch.setattr("ingest.checksums.file_sha256", no_hashing)
    assert cache.sha256(dump) == first
    assert plan_shards([dump], [], None, out_dir=tmp_path / "ingest") == jobs
    monkeypatch.undo()
    stat = dump.stat()
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns + 1_000_000_000))  # rewritten: a new mtime
    with open(dump, "r+b") as f:
        f.seek(-1, 2)
        f.write(b"\0")
    os.utime(dump, ns=(stat.st_atime_ns, stat.st_mtime_ns + 2_000_000_000))
    assert cache.sha256(dump) != first
    changed = plan_shards([dump], [], None, out_dir=tmp_path / "ingest")
    assert changed[0].sha256 != jobs[0].sha256 == first
