"""What one exchange step does to a scratch folder and the state, on moto's S3 server: files, deletions
and symlinks travel, leftovers in a scratch are removed, a failed step pushes nothing, paths can be
dropped from the state without a download, and a record sorts after every record its step read even
when the writer's clock is behind."""

from __future__ import annotations

import os
import uuid
from pathlib import Path

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

    def make(name: str) -> StateExchange:
        return StateExchange(tmp_path / name, RemoteRoot.open(url, settings), ROOTS)

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
