"""What one exchange step does to a scratch folder and the state, on moto's S3 server: files, deletions
and symlinks travel, leftovers in a scratch are removed, a failed step pushes nothing, paths can be
dropped from the state without a download, and a record sorts after every record its step read even
when the writer's clock is behind. Checkpoints: a step after one reads only newer records and reaches
the state a full replay gives; writers at once leave one valid checkpoint; a damaged one is skipped.

Histories are written here by hand at the layout ``index.state_listing`` documents, and the expected
state is the log replayed here as plain JSON, not through the code under test."""

from __future__ import annotations

import gzip
import hashlib
import json
import logging
import os
import threading
import time
import uuid
from pathlib import Path

import pyarrow.fs as pafs
import pytest

from index.state_exchange import StateDamaged, StateExchange
from index.state_listing import new_record_name, record_time
from ingest.object_store import RemoteRoot

ROOTS = ("ingest", "indexes")


@pytest.fixture(params=["s3", "file"])
def exchange_for(request, tmp_path):
    """Exchanges over one state URL: a prefix in moto's bucket, or a local folder (``file://``)."""
    if request.param == "s3":
        bucket = request.getfixturevalue("s3_bucket")
        url, settings = bucket.url(f"semantics-{uuid.uuid4().hex[:8]}"), bucket.settings()
    else:
        url, settings = f"file://{tmp_path / 'state-store'}", None

    def make(name: str, **checkpoints) -> StateExchange:
        return StateExchange(tmp_path / name, RemoteRoot.open(url, settings), ROOTS, **checkpoints)

    return make


def test_files_deletions_and_links_travel_and_leftovers_go(exchange_for):
    a = exchange_for("a")
    with a.step("write", ("ingest",)):
        (a.root / "ingest" / "t").mkdir(parents=True)
        (a.root / "ingest" / "t" / "one.parquet").write_bytes(b"1" * 3000)
        (a.root / "ingest" / "t" / "two.parquet").write_bytes(b"2")
        (a.root / "indexes").mkdir()
        os.symlink("v1", a.root / "indexes" / "current")
    b = exchange_for("b")
    with b.step("delete", ROOTS) as session:
        session.pull([])  # pulls nothing, removes nothing
        assert (b.root / "ingest" / "t" / "one.parquet").read_bytes() == b"1" * 3000
        assert os.readlink(b.root / "indexes" / "current") == "v1"
        (b.root / "ingest" / "t" / "two.parquet").unlink()
    with pytest.raises(RuntimeError, match="the step failed"), a.step("fail", ROOTS):
        (a.root / "ingest" / "t" / "three.parquet").write_bytes(b"3")
        raise RuntimeError("the step failed")
    c = exchange_for("c")
    leftover = c.root / "ingest" / "old" / "stale.parquet"  # another run's, not in the state
    leftover.parent.mkdir(parents=True)
    leftover.write_bytes(b"stale")
    with c.step("read", ROOTS):
        files = sorted(str(p.relative_to(c.root)) for p in (c.root / "ingest").rglob("*") if p.is_file())
        assert files == ["ingest/t/one.parquet"]  # two deleted by b, three never pushed, stale removed
        assert not (c.root / "ingest" / "old").exists()
        assert os.readlink(c.root / "indexes" / "current") == "v1"
        one = Path("ingest/t/one.parquet")
        assert (c.root / one).stat().st_mtime_ns == (a.root / one).stat().st_mtime_ns
    d = exchange_for("d")
    with d.step("forget", ("indexes",)) as session:  # drops ingest/t from the state, never pulled here
        assert session.children(d.root / "ingest") == {"t"}
        session.forget([d.root / "ingest" / "t"])
    with c.step("read again", ROOTS):
        assert not (c.root / "ingest" / "t").exists()
        assert os.readlink(c.root / "indexes" / "current") == "v1"


def test_a_record_sorts_after_the_newest_one_its_step_read():
    ahead = 10**19  # a writer whose clock is centuries ahead of this host's
    name = new_record_name(after=ahead)
    assert record_time(name) == ahead + 1 and name > f"{ahead:020d}-zzz"


def test_a_damaged_change_record_is_named(exchange_for):
    a = exchange_for("a")
    with a.step("write", ("ingest",)):
        (a.root / "ingest").mkdir()
        (a.root / "ingest" / "one.parquet").write_bytes(b"1")
    a.remote.write_bytes("log/99999999999999999999-damaged.json", b'{"step": "cut sh')
    b = exchange_for("b")
    with pytest.raises(StateDamaged, match="is not a change record") as failed, b.step("read", ROOTS):
        pass
    assert f"{a.remote.url}/log/99999999999999999999-damaged.json" in str(failed.value)


# --- checkpoints ---------------------------------------------------------------------------------------

HOUR = 3600


def _write_history(remote: RemoteRoot, count: int, flat: int = 0, spacing: int = 2000) -> list[str]:
    """``count`` change records of steps ``spacing`` seconds apart, the last an hour ago, each writing a
    file under ingest/h (overwriting earlier ones, every fifth also deleting one); the first ``flat`` in
    the layout before buckets (``log/<name>``). Returns their names, oldest first."""
    end = time.time_ns() - HOUR * 10**9
    names = []
    for i in range(count):
        stamp = end - (count - 1 - i) * spacing * 10**9
        name = f"{stamp:020d}-history-1-{i:08x}.json"
        data = f"version {i}".encode()
        sha = hashlib.sha256(data).hexdigest()
        remote.write_bytes(f"blobs/{sha[:2]}/{sha}", data)
        changes: dict = {f"ingest/h/f{i % 7}.parquet": {"kind": "file", "size": len(data), "sha256": sha}}
        if i % 5 == 4:
            changes[f"ingest/h/f{(i + 3) % 7}.parquet"] = None
        record = {"step": f"history {i}", "host": "history", "written": stamp / 1e9, "changes": changes}
        key = f"log/{name}" if i < flat else f"log/{name[:6]}/{name[6:8]}/{name}"
        remote.write_bytes(key, json.dumps(record).encode())
        names.append(name)
    return names


def _keys(remote: RemoteRoot, folder: str) -> list[str]:
    infos = remote.fs.get_file_info(
        pafs.FileSelector(remote.path(folder), recursive=True, allow_not_found=True)
    )
    return sorted(i.path.removeprefix(remote.base + "/") for i in infos if i.type == pafs.FileType.File)


def _replayed(remote: RemoteRoot, upto: str | None = None) -> dict[str, str]:
    """Path → SHA-256 of every file the log holds (records named up to ``upto``), replayed as plain JSON."""
    state: dict[str, str] = {}
    records = sorted((k.rsplit("/", 1)[-1], k) for k in _keys(remote, "log"))
    for name, key in records:
        if upto is not None and name > upto:
            break
        for path, entry in json.loads(remote.read_bytes(key))["changes"].items():
            if entry is None:
                state.pop(path, None)
            elif entry["kind"] == "file":
                state[path] = entry["sha256"]
    return state


def _scratch_files(root: Path) -> dict[str, str]:
    files = (p for p in (root / "ingest").rglob("*") if p.is_file())
    return {str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest() for p in files}


def _checkpoint_state(remote: RemoteRoot, key: str) -> dict[str, str]:
    state = json.loads(gzip.decompress(remote.read_bytes(key)))["state"]
    return {path: entry["sha256"] for path, entry in state.items() if entry["kind"] == "file"}


def _checkpoint_of(name: str) -> str:
    return f"checkpoints/{name[:6]}/{name[6:8]}/{name}.gz"


def test_a_step_after_a_checkpoint_reads_only_newer_records_and_reaches_the_full_replay(exchange_for):
    a = exchange_for("a", checkpoint_every=10)
    history = _write_history(a.remote, 24, flat=4)
    with a.step("read", ("ingest",)):
        assert _scratch_files(a.root) == _replayed(a.remote)
    assert (a.log.stats.checkpoint, a.log.stats.read) == (None, 24)  # no checkpoint yet: the whole log
    assert a.log.stats.written == _checkpoint_of(history[-1])  # all 24 are older than the settle time
    assert _checkpoint_state(a.remote, _checkpoint_of(history[-1])) == _replayed(a.remote)

    b = exchange_for("b", checkpoint_every=10)
    with b.step("write", ("ingest",)):
        (b.root / "ingest" / "h" / "new.parquet").write_bytes(b"new")
        (b.root / "ingest" / "h" / "f1.parquet").unlink()
    c = exchange_for("c", checkpoint_every=10)
    with c.step("read", ("ingest",)):
        assert _scratch_files(c.root) == _replayed(c.remote)
        assert "ingest/h/new.parquet" in _scratch_files(c.root)
    stats = c.log.stats
    assert stats.checkpoint == _checkpoint_of(history[-1])
    assert (stats.read, stats.fetched) == (1, 1)  # b's record, nothing older
    # listed: the 4 flat records (listed with log/'s days, never read again) and the checkpoint's slot on:
    # its own last record and b's (history records are 2000 s apart, a slot spans 1000 s)
    assert stats.listed == 4 + 2
    assert stats.written is None  # one record past the checkpoint: not due


def test_records_younger_than_the_settle_time_are_not_folded(exchange_for):
    a = exchange_for("a", checkpoint_every=5, checkpoint_settle_seconds=6 * HOUR)
    history = _write_history(a.remote, 24)  # one every 2000 s up to an hour ago
    with a.step("read", ("ingest",)):
        pass
    settled = [n for n in history if int(n[:20]) <= time.time_ns() - 6 * HOUR * 10**9]
    assert 5 <= len(settled) < len(history)
    assert a.log.stats.written == _checkpoint_of(settled[-1])
    b = exchange_for("b")
    with b.step("read", ("ingest",)):
        assert _scratch_files(b.root) == _replayed(b.remote)
    assert b.log.stats.read == len(history) - len(settled)


def test_checkpoint_writers_at_once_leave_one_valid_checkpoint(exchange_for):
    first = exchange_for("first")
    history = _write_history(first.remote, 12)
    workers = [exchange_for(name, checkpoint_every=5) for name in ("a", "b")]
    together = threading.Barrier(2)
    failures: list[BaseException] = []

    def step(exchange: StateExchange) -> None:
        try:
            with exchange.step("write", ("ingest",)):
                (exchange.root / "ingest" / "h" / f"{exchange.root.name}.parquet").write_bytes(b"x")
                together.wait(timeout=30)  # both push, then fold, at the same moment
        except BaseException as exc:  # asserted in the test's thread
            failures.append(exc)

    threads = [threading.Thread(target=step, args=(w,)) for w in workers]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not failures, failures
    # both folded the same records (theirs are younger than the settle time): the same object, once
    assert [w.log.stats.written for w in workers] == [_checkpoint_of(history[-1])] * 2
    assert _keys(first.remote, "checkpoints") == [_checkpoint_of(history[-1])]
    assert _checkpoint_state(first.remote, _checkpoint_of(history[-1])) == _replayed(
        first.remote, history[-1]
    )
    reader = exchange_for("reader")
    with reader.step("read", ("ingest",)):
        assert _scratch_files(reader.root) == _replayed(reader.remote)
    assert {"ingest/h/a.parquet", "ingest/h/b.parquet"} <= set(_scratch_files(reader.root))
    assert reader.log.stats.read == 2


def test_a_damaged_checkpoint_is_skipped_for_an_older_one_or_the_records(exchange_for, caplog):
    a = exchange_for("a", checkpoint_every=5)
    history = _write_history(a.remote, 12)
    with a.step("read", ("ingest",)):
        pass
    good = _checkpoint_of(history[-1])
    assert a.log.stats.written == good
    newer = _checkpoint_of(f"{time.time_ns():020d}-elsewhere-1-00000000.json")
    a.remote.write_bytes(newer, b"not gzip at all")
    b = exchange_for("b", checkpoint_every=5)
    with caplog.at_level(logging.WARNING, "index.state_log"), b.step("read", ("ingest",)):
        assert _scratch_files(b.root) == _replayed(b.remote)
    assert (b.log.stats.damaged, b.log.stats.checkpoint) == ([newer], good)
    assert f"{a.remote.url}/{newer}: " in caplog.text and "ignored" in caplog.text

    cut = a.remote.read_bytes(good)[:-9]  # the good one cut short: no checkpoint left, the whole log read
    a.remote.write_bytes(good, cut)
    c = exchange_for("c", checkpoint_every=5)
    with c.step("read", ("ingest",)):
        assert _scratch_files(c.root) == _replayed(c.remote)
    assert (c.log.stats.damaged, c.log.stats.checkpoint, c.log.stats.read) == ([newer, good], None, 12)
    # the fold of the same records is written again in place of the damaged one (the bytes its name means)
    assert c.log.stats.written == good
    assert _checkpoint_state(a.remote, good) == _replayed(a.remote, history[-1])
