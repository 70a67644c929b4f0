"""Atomic writes: the new file appears whole, a failed write leaves the old one and no temporary."""

from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from ingest.files import atomic_path, temporary_path, write_json_atomic, write_text_atomic


def test_a_write_replaces_the_file_and_leaves_nothing_beside_it(tmp_path: Path) -> None:
    target = tmp_path / "report.md"
    target.write_text("old")
    write_text_atomic(target, "new ✓")
    assert target.read_text(encoding="utf-8") == "new ✓"
    assert [p.name for p in tmp_path.iterdir()] == ["report.md"]


def test_a_failed_write_keeps_the_old_file_and_removes_the_temporary(tmp_path: Path) -> None:
    target = tmp_path / "part-00001.json"
    target.write_text('{"rows": 3}')
    seen: list[Path] = []
    with pytest.raises(RuntimeError, match="disk full"), atomic_path(target) as tmp:
        tmp.write_text('{"rows": ')  # half written when the writer fails
        seen.append(tmp)
        raise RuntimeError("disk full")
    assert target.read_text() == '{"rows": 3}'
    assert not seen[0].exists()
    assert [p.name for p in tmp_path.iterdir()] == ["part-00001.json"]


def test_a_writer_that_writes_nothing_leaves_no_file(tmp_path: Path) -> None:
    target = tmp_path / "plot.png"
    with pytest.raises(FileNotFoundError), atomic_path(target):
        pass  # os.replace finds no temporary: the caller learns it wrote nothing
    assert list(tmp_path.iterdir()) == []


def test_json_that_cannot_be_written_does_not_touch_the_target(tmp_path: Path) -> None:
    target = tmp_path / "stamp.json"
    write_json_atomic(target, {"sha256": "ab", "size": 3})
    assert json.loads(target.read_text()) == {"sha256": "ab", "size": 3}
    assert target.read_text().endswith("}\n")
    with pytest.raises(TypeError):
        write_json_atomic(target, {"when": object()})
    assert json.loads(target.read_text()) == {"sha256": "ab", "size": 3}
    write_json_atomic(target, {"a": 1}, indent=None)
    assert target.read_text() == '{"a": 1}'


def test_temporary_names_differ_between_threads_and_hide_beside_the_target(tmp_path: Path) -> None:
    target = tmp_path / "report.json"
    names: list[Path] = []
    threads = [threading.Thread(target=lambda: names.append(temporary_path(target))) for _ in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert len(set(names)) == 8
    assert all(n.parent == tmp_path and n.name.startswith(".report.json.") for n in names)


def test_concurrent_writers_each_leave_a_whole_file(tmp_path: Path) -> None:
    target = tmp_path / "sidecar.json"
    texts = [json.dumps({"writer": i, "pad": "x" * 100_000}) for i in range(6)]
    threads = [threading.Thread(target=write_text_atomic, args=(target, text)) for text in texts]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert target.read_text() in texts
    assert [p.name for p in tmp_path.iterdir()] == ["sidecar.json"]
