"""``RemoteRoot`` over a file:// root (no server needed) and its URL checks."""

from __future__ import annotations

import bz2
import hashlib

import pytest

from ingest.object_store import RemoteError, RemoteRoot, is_remote
from schemas.settings import RemoteSettings
from tests.conftest import WIKIDATA_ITEMS


def test_files_go_up_and_come_back_byte_for_byte_in_chunks(tmp_path) -> None:
    """A .bz2 dump keeps its compressed bytes both ways (pyarrow would inflate it by its name)."""
    remote = RemoteRoot.open(f"file://{tmp_path / 'remote'}/", RemoteSettings(chunk_mb=1))
    expected = hashlib.sha256(WIKIDATA_ITEMS.read_bytes()).hexdigest()
    ticks: list[int] = []
    up = remote.upload(WIKIDATA_ITEMS, "dumps/items.json.bz2", ticks.append)
    assert (up.size, up.sha256) == (WIKIDATA_ITEMS.stat().st_size, expected)
    assert len(ticks) == -(-up.size // (1 << 20)) and sum(ticks) == up.size  # chunk by chunk
    assert (tmp_path / "remote" / "dumps" / "items.json.bz2").read_bytes() == WIKIDATA_ITEMS.read_bytes()
    back = tmp_path / "back.json.bz2"
    down = remote.download("dumps/items.json.bz2", back)
    assert (down.size, down.sha256) == (up.size, expected)
    assert bz2.decompress(back.read_bytes()).startswith(b"[")


def test_small_objects_are_replaced_whole_and_a_missing_one_is_named(tmp_path) -> None:
    remote = RemoteRoot.open(f"file://{tmp_path}")
    remote.write_bytes("current", b'{"version": "v1"}')
    remote.write_bytes("current", b'{"version": "v2"}')
    assert remote.read_bytes("current") == b'{"version": "v2"}'
    assert [p.name for p in tmp_path.iterdir()] == ["current"]  # no temporary file left beside it
    with pytest.raises(RemoteError, match=rf"file://{tmp_path}/nothing does not exist"):
        remote.read_bytes("nothing")
    with pytest.raises(RemoteError, match="does not exist"):
        remote.download("nothing", tmp_path / "x")


@pytest.mark.parametrize(
    ("url", "message"),
    [
        ("s3://", "names its bucket"),
        ("file://relative/path", "absolute path"),
        ("http://example.org/x", "not an s3:// or file:/// URL"),
    ],
)
def test_urls_that_name_no_root_are_refused(url: str, message: str) -> None:
    with pytest.raises(ValueError, match=message):
        RemoteRoot.open(url)


def test_remote_settings_check_their_urls() -> None:
    assert RemoteSettings(url="s3://bucket/prefix/").url == "s3://bucket/prefix"
    with pytest.raises(ValueError, match="s3://bucket/prefix or file:///abs/path"):
        RemoteSettings(url="bucket/prefix")
    with pytest.raises(ValueError, match="http:// or https://"):
        RemoteSettings(endpoint="127.0.0.1:9000")
    assert is_remote("s3://b/k") and is_remote("file:///x") and not is_remote("/data/dump.json.bz2")
