"""Readers in other processes (standing in for other hosts) that hold a version through a lease file
alone, as on a shared file system where ``flock`` does not reach, and the ``current`` pointer file that
readers without symlinks follow."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import time
from pathlib import Path

from index.versions import CURRENT, CURRENT_FILE, LEASES, VersionStore
from tests.index.test_versions import _publish

REPO = Path(__file__).resolve().parents[2]
LEASE_S = 6.0
# a reader on another host: leases the version without flock, says so, and holds it until killed
READER = """
import sys, time
from pathlib import Path
from index.versions import VersionLease
lease = VersionLease(Path(sys.argv[1]), flock=False, lease_seconds=float(sys.argv[2]))
print(lease.lease_file, flush=True)
time.sleep(600)
"""


def _reader(version: Path) -> tuple[subprocess.Popen, Path]:
    env = {**os.environ, "PYTHONPATH": str(REPO)}
    process = subprocess.Popen(
        [sys.executable, "-c", READER, str(version), str(LEASE_S)], stdout=subprocess.PIPE, text=True, env=env
    )
    assert process.stdout is not None
    return process, Path(process.stdout.readline().strip())


def test_a_lease_file_from_another_process_keeps_its_version_until_it_expires(tmp_path: Path) -> None:
    store = VersionStore(tmp_path)
    first = _publish(store, "one")
    reader, lease_file = _reader(first)
    try:
        assert lease_file.parent == first / LEASES and lease_file.is_file()
        _publish(store, "two")
        time.sleep(LEASE_S * 1.5)  # past one lease period: only the reader's renewals keep it live
        assert store.leases(first, LEASE_S) == [lease_file.stem]
        assert store.prune(keep=1, lease_seconds=LEASE_S) == [] and first.is_dir()
    finally:
        reader.send_signal(signal.SIGKILL)  # dies without releasing: the lease file stays behind
        reader.wait()
    assert lease_file.is_file()
    time.sleep(LEASE_S + 1)
    assert store.leases(first, LEASE_S) == []
    assert store.prune(keep=1, lease_seconds=LEASE_S) == [first] and not first.exists()


def test_current_is_also_a_pointer_file_that_readers_without_symlinks_follow(tmp_path: Path) -> None:
    store = VersionStore(tmp_path / "published")
    _publish(store, "one")
    second = _publish(store, "two")
    assert (store.root / CURRENT_FILE).read_text() == f'{{"version": "{second.name}"}}'
    # a copy of the root where symlinks do not survive (an object-store sync, an SMB share)
    copy = tmp_path / "copy"
    shutil.copytree(store.root, copy, symlinks=True)
    (copy / CURRENT).unlink()
    assert VersionStore(copy).current() == (copy / second.name).resolve()
