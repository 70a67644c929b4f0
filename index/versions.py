"""Versioned index folders with an atomic ``current`` pointer.

A build writes into ``<root>/.building-<version>``, renames it to ``<root>/<version>`` when complete,
and then replaces the ``current`` symlink in one ``rename`` (atomic on POSIX). A reader resolves
``current`` once, when it opens, and keeps reading that folder, so a rebuild never changes an open
reader's data under it; old versions are pruned to a configured number, never the current one and
never one a reader still holds.

A batch job that plans on a version and opens it later, maybe on other workers, pins it instead
(``pin``: a file in the version's ``.pins`` folder, removed when the job combines its parts): ``prune``
skips a pinned version until the pin is removed or older than ``PIN_HOURS`` (a job that died).

A reader holds its version with a shared ``flock`` on the version's lease file (``VersionLease``) for as
long as it is open; ``prune`` takes the lock exclusively without waiting, and skips the version when it
cannot. A version being pruned is first renamed out of the way, so a reader that resolved ``current`` just
before finds it gone, resolves again and opens the newer one. ``flock`` locks belong to an open file, not
a process: readers in the process that prunes are respected too, and a reader that dies drops its lock.
"""

from __future__ import annotations

import errno
import fcntl
import json
import os
import secrets
import shutil
import socket
import threading
import weakref
from datetime import UTC, datetime
from pathlib import Path

from ingest.files import write_text_atomic
from schemas.build import Manifest

CURRENT = "current"
MANIFEST = "manifest.json"
LEASE = ".readers.lock"
BUILDING_PREFIX = ".building-"
PRUNING_PREFIX = ".pruning-"
PINS = ".pins"
PIN_HOURS = 24.0  # a pin older than this belongs to a job that died: prune no longer honours it
LEASES = ".leases"
CURRENT_FILE = "current.json"
# A reader's lease file not renewed for this long belongs to a reader that died or lost the mount; a
# holder renews it three times as often. Expiry compares the file's mtime (the file server's clock on
# NFS) with the pruning host's clock: keep the hosts' clocks in sync (NTP) well within this margin.
LEASE_SECONDS = 600.0
# What readers and batch jobs leave in a version folder. A copy of the folder is another version and must
# not carry them: a live lease file copied along kept the copy from ever being pruned.
READER_STATE = (LEASE, LEASES, PINS)
OPEN_ATTEMPTS = 5  # a version pruned between resolving and leasing it is retried with the newer current


class VersionLease:
    """A reader's shared lock on one version folder: ``prune`` leaves the folder alone until it is released.

    Taken without waiting: the only exclusive holder is a prune that is deleting the version, and then the
    reader should move on to the newer one rather than wait for it to vanish.
    """

    def __init__(self, version_dir: Path, *, flock: bool = True, lease_seconds: float = LEASE_SECONDS):
        self.path = Path(version_dir)
        holder = f"{socket.gethostname()}.{os.getpid()}.{secrets.token_hex(4)}"
        self.lease_file = self.path / LEASES / f"{holder}.json"
        self._stop = threading.Event()
        try:
            # O_CREAT: versions published before leases existed have no lease file yet
            self._fd = os.open(self.path / LEASE, os.O_RDONLY | os.O_CREAT, 0o644)
        except FileNotFoundError:
            raise VersionGone(self.path) from None
        except OSError as exc:
            if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
                raise
            # a read-only copy of an old version: nobody can prune it, and there is nothing to lock
            self._fd = os.open(self.path / MANIFEST, os.O_RDONLY)
        # closing the file drops its lock: on release, or when a reader that was never closed is collected
        self.release = weakref.finalize(self, _release, self._fd, self._stop, self.lease_file)
        try:
            if flock:
                fcntl.flock(self._fd, fcntl.LOCK_SH | fcntl.LOCK_NB)
        except BlockingIOError:
            self.release()
            raise VersionGone(self.path) from None
        # the lease file: what a prune on another host sees where flock does not reach (NFS without
        # working locks, a copy synced from object storage)
        if _touch_lease(self.lease_file, create=True):
            interval = lease_seconds / 3
            threading.Thread(target=_renew, args=(self.lease_file, self._stop, interval), daemon=True).start()
        if not (self.path / MANIFEST).is_file():  # pruned between our open and our lock
            self.release()
            raise VersionGone(self.path)

    @property
    def held(self) -> bool:
        return self.release.alive


def _touch_lease(path: Path, *, create: bool = False) -> bool:
    """Write (or renew) a lease file atomically; False where the version is read-only."""
    try:
        if create:
            path.parent.mkdir(exist_ok=True)
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(json.dumps({"holder": path.stem, "leased_at": datetime.now(UTC).isoformat()}))
            os.replace(tmp, path)
        else:
            os.utime(path)
        return True
    except OSError as exc:
        if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
            return False
        if exc.errno == errno.ENOENT and not create:  # the version was pruned under us: nothing to renew
            return False
        raise


def _renew(path: Path, stop: threading.Event, interval: float) -> None:
    while not stop.wait(interval):
        if not _touch_lease(path):
            return


def _release(fd: int, stop: threading.Event, lease_file: Path) -> None:
    stop.set()
    os.close(fd)
    try:
        lease_file.unlink(missing_ok=True)
    except OSError as exc:
        if exc.errno not in (errno.EROFS, errno.EACCES, errno.EPERM):
            raise


class VersionGone(FileNotFoundError):
    """The version was pruned while it was being opened."""

    def __init__(self, path: Path):
        super().__init__(errno.ENOENT, "index version was pruned while being opened", str(path))


class VersionStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def new_version_name(self) -> str:
        return self.version_name(datetime.now(UTC))

    @staticmethod
    def version_name(when: datetime) -> str:
        """Version names sort by time: 'v20261122T031500123456Z'."""
        return f"v{when.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"

    def start(self, version: str, *, resume: bool = False) -> Path:
        """The folder a build writes into; invisible to readers until ``publish``. ``resume`` takes over
        the folder an interrupted writer left (a sync keeps the files it had already checked)."""
        path = self.root / f"{BUILDING_PREFIX}{version}"
        path.mkdir(parents=True, exist_ok=resume)
        return path

    def publish(self, building: Path, manifest: Manifest) -> Path:
        """Write the manifest, move the folder into place and point ``current`` at it, atomically."""
        (building / LEASE).touch()
        # replaced, never written through: a building folder made of hard links (a reused version's
        # files) would otherwise rewrite the other version's manifest as well
        write_text_atomic(building / MANIFEST, manifest.model_dump_json(indent=2))
        final = self.root / manifest.version
        os.replace(building, final)
        self.point_current(manifest.version)
        return final

    def point_current(self, version: str) -> None:
        """Point ``current`` at the published ``version``, atomically (``publish``, and a sync that finds
        the version it was asked for already here)."""
        if not (self.root / version / MANIFEST).is_file():
            raise FileNotFoundError(f"{self.root / version} is not a published version: nothing to point at")
        link_tmp = self.root / f".{CURRENT}.{os.getpid()}"
        if link_tmp.is_symlink() or link_tmp.exists():
            link_tmp.unlink()
        link_tmp.symlink_to(version)  # relative: the root folder can move
        # the same pointer as a small file, replaced atomically: for file systems and object stores
        # without symlinks (and readers on hosts that copy the root rather than mount it)
        pointer_tmp = self.root / f".{CURRENT_FILE}.{os.getpid()}"
        pointer_tmp.write_text(json.dumps({"version": version}))
        os.replace(pointer_tmp, self.root / CURRENT_FILE)
        os.replace(link_tmp, self.root / CURRENT)

    def abandon(self, building: Path) -> None:
        shutil.rmtree(building, ignore_errors=True)

    def current(self) -> Path | None:
        """The version folder ``current`` points to now (resolved), or None before the first build.

        The symlink where there is one, else the pointer file (``current.json``, written beside it).
        """
        link = self.root / CURRENT
        if link.is_symlink():
            return (self.root / os.readlink(link)).resolve()
        pointer = self.root / CURRENT_FILE
        if not pointer.is_file():
            return None
        return (self.root / json.loads(pointer.read_text())["version"]).resolve()

    def manifest(self, version_dir: Path) -> Manifest:
        return Manifest.model_validate(json.loads((Path(version_dir) / MANIFEST).read_text()))

    def versions(self) -> list[Path]:
        """Published version folders, oldest first."""
        if not self.root.is_dir():
            return []
        return sorted(
            p
            for p in self.root.iterdir()
            if not p.name.startswith(".")  # a build being published, a version being pruned
            and not p.is_symlink()
            and p.is_dir()
            and (p / MANIFEST).is_file()
        )

    def pin(self, version_dir: Path, holder: str) -> Path | None:
        """Keep ``version_dir`` from being pruned for ``holder`` (a batch job's name) until ``unpin`` or
        ``PIN_HOURS`` pass; pinning again refreshes it. None for a read-only version: nobody prunes it."""
        folder = Path(version_dir) / PINS
        try:
            folder.mkdir(exist_ok=True)
            path = folder / f"{holder}.json"
            record = {"holder": holder, "pinned_at": datetime.now(UTC).isoformat()}
            tmp = path.with_name(f".{path.name}.tmp")
            tmp.write_text(json.dumps(record))
            os.replace(tmp, path)
            return path
        except OSError as exc:
            if exc.errno in (errno.EROFS, errno.EACCES, errno.EPERM):
                return None
            raise

    def unpin(self, version_dir: Path, holder: str) -> None:
        (Path(version_dir) / PINS / f"{holder}.json").unlink(missing_ok=True)

    def pins(self, version_dir: Path, hours: float = PIN_HOURS) -> list[str]:
        """The holders whose pins on ``version_dir`` are younger than ``hours``."""
        folder = Path(version_dir) / PINS
        if not folder.is_dir():
            return []
        oldest = datetime.now(UTC).timestamp() - hours * 3600
        live = []
        for path in folder.glob("*.json"):
            try:
                if path.stat().st_mtime >= oldest:
                    live.append(path.stem)
            except FileNotFoundError:  # unpinned while we looked
                continue
        return sorted(live)

    def leases(self, version_dir: Path, seconds: float = LEASE_SECONDS) -> list[str]:
        """Readers whose lease files on ``version_dir`` were renewed within ``seconds``."""
        folder = Path(version_dir) / LEASES
        if not folder.is_dir():
            return []
        oldest = datetime.now(UTC).timestamp() - seconds
        live = []
        for path in folder.glob("*.json"):
            try:
                if path.stat().st_mtime >= oldest:
                    live.append(path.stem)
            except FileNotFoundError:  # released while we looked
                continue
        return sorted(live)

    def prune(
        self, keep: int, pin_hours: float = PIN_HOURS, lease_seconds: float = LEASE_SECONDS
    ) -> list[Path]:
        """Delete all but the ``keep`` newest versions (never the current one, nor one a reader holds, by a
        lock or a live lease file, or a batch job pinned: a later prune takes it), half-deleted ones and
        build folders older than a day."""
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        current = self.current()
        removed = []
        for path in self.versions()[:-keep]:
            if current is not None and path.resolve() == current:
                continue
            if self.pins(path, pin_hours) or self.leases(path, lease_seconds):
                continue
            if self._remove_unheld(path):
                removed.append(path)
        for half in self.root.glob(f"{PRUNING_PREFIX}*"):  # a prune that died while deleting
            shutil.rmtree(half, ignore_errors=True)
        for stale in self.root.glob(f"{BUILDING_PREFIX}*"):
            if stale.stat().st_mtime < datetime.now(UTC).timestamp() - 24 * 3600:
                shutil.rmtree(stale, ignore_errors=True)
                removed.append(stale)
        return removed

    def held(self) -> list[Path]:
        """Published versions some reader holds now."""
        held = []
        for path in self.versions():
            fd = os.open(path / LEASE, os.O_RDONLY | os.O_CREAT, 0o644)
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                held.append(path)
            finally:
                os.close(fd)
        return held

    def _remove_unheld(self, path: Path) -> bool:
        """Delete ``path`` unless a reader holds it; renamed first, so no reader can resolve it meanwhile."""
        fd = os.open(path / LEASE, os.O_RDONLY | os.O_CREAT, 0o644)
        try:
            try:
                fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
            except BlockingIOError:
                return False
            doomed = self.root / f"{PRUNING_PREFIX}{path.name}"
            os.replace(path, doomed)
        finally:
            os.close(fd)
        shutil.rmtree(doomed)
        return True


def open_version(path: Path) -> tuple[Path, VersionLease]:
    """``resolve_index_dir(path)`` with a lease on it, held until the caller releases it.

    A root whose version is pruned between resolving and leasing it is resolved again; a version folder
    named by the caller that is gone raises ``FileNotFoundError``.
    """
    for _ in range(OPEN_ATTEMPTS):
        version_dir = resolve_index_dir(path)
        try:
            return version_dir, VersionLease(version_dir)
        except VersionGone:
            if version_dir == Path(path).resolve():  # the caller asked for this very version
                raise
    raise VersionGone(Path(path))


def resolve_index_dir(path: Path) -> Path:
    """An index folder a reader can open: a version folder itself, or a root whose ``current`` is set."""
    path = Path(path)
    if (path / MANIFEST).is_file():
        return path.resolve()
    current = VersionStore(path).current()
    if current is None:
        raise FileNotFoundError(f"{path} holds no published index version: run `hqa build` first")
    return current


def link_tree(src: Path, dst: Path) -> None:
    """Reuse a finished stage's output from an older version: hard links, no copy, no extra space."""
    shutil.copytree(src, dst, copy_function=os.link)
