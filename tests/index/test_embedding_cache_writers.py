"""Several writers adding to one embedding cache folder at once (tasks on several workers over a shared
folder), each in a process of its own, and a reader that sees every row each of them wrote."""

from __future__ import annotations

import multiprocessing
import os
from pathlib import Path

import numpy as np

from index.embedding_cache import EmbeddingCache

ROWS_PER_WRITER = 600
PART_ROWS = 7  # many small parts: writers interleave their writes many times over


def _vector(evidence_id: str) -> np.ndarray:
    """A vector that depends on the id alone, so any reader can check the one it gets."""
    seed = int(evidence_id.rsplit("-", 1)[1]) + 1000 * ord(evidence_id[0])
    return np.random.default_rng(seed).standard_normal(8).astype(np.float32)


def _ids(writer: str) -> list[str]:
    return [f"{writer}-{i}" for i in range(ROWS_PER_WRITER)]


def _write(root: str, writer: str, start: multiprocessing.synchronize.Event) -> None:  # type: ignore[name-defined]
    cache = EmbeddingCache(Path(root), "model", part_rows=PART_ROWS)
    start.wait()
    for evidence_id in _ids(writer):
        cache.add([evidence_id], _vector(evidence_id)[None, :])
    cache.close()


def test_writers_in_other_processes_lose_nothing_and_a_reader_merges_them(tmp_path: Path) -> None:
    context = multiprocessing.get_context("spawn")
    start = context.Event()
    writers = [context.Process(target=_write, args=(str(tmp_path), w, start)) for w in ("a", "b", "c")]
    for process in writers:
        process.start()
    start.set()  # all three write at the same time
    for process in writers:
        process.join(timeout=120)
        assert process.exitcode == 0
    reader = EmbeddingCache(tmp_path, "model")
    every = [i for w in ("a", "b", "c") for i in _ids(w)]
    assert reader.known_ids() == set(every)
    expected = np.vstack([_vector(i) for i in every])
    np.testing.assert_allclose(reader.get(every), expected, rtol=0, atol=1e-6)
    names = {p.name.split("-")[1] for p in reader.part_files()}
    assert len(names) == 3  # one writer id per process
    assert not list(reader.dir.glob(".part-*.tmp"))


def test_parts_written_before_writer_ids_are_still_read(tmp_path: Path) -> None:
    old = EmbeddingCache(tmp_path, "model", part_rows=2)
    old.add(["x-1", "x-2"], np.vstack([_vector("x-1"), _vector("x-2")]))
    (part,) = old.part_files()
    part.rename(part.with_name("part-000000.parquet"))  # the name the cache used to write
    new = EmbeddingCache(tmp_path, "model", part_rows=1)
    new.add(["x-3"], _vector("x-3")[None, :])
    assert [p.name.startswith("part-w") for p in new.part_files()] == [False, True]
    np.testing.assert_allclose(
        new.get(["x-3", "x-1"]), np.vstack([_vector("x-3"), _vector("x-1")]), atol=1e-6
    )


def test_a_part_renamed_away_during_the_stale_sweep_is_skipped(tmp_path: Path, monkeypatch) -> None:
    """CI on 4a04a66: a writer opened the cache while another renamed its finished part; the stale-part
    sweep stat()ed a name the listing had just given and died of FileNotFoundError."""
    folder = tmp_path / "model"
    folder.mkdir()
    gone = folder / ".part-wfeedfacecafe-000001.tmp"  # listed, renamed away before its stat
    old = folder / ".part-wdeadbeef0000-000001.tmp"  # an interrupted write of long ago
    old.write_bytes(b"x")
    listed = [gone, old]
    monkeypatch.setattr(Path, "glob", lambda self, pattern: iter(listed))
    os.utime(old, (0, 0))
    EmbeddingCache(tmp_path, "model", part_rows=PART_ROWS)
    assert not old.exists()
