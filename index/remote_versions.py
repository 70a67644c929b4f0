"""Published index versions in object storage: the build uploads one, query nodes sync it.

Tantivy, Kùzu and LanceDB open local folders, so a version is built and published on local disk as
always (``VersionStore.publish``) and then uploaded file by file; a query node downloads the version the
remote ``current`` names into a build folder beside its local versions, checks every file against the
uploaded list (size and SHA-256), and only then publishes it locally through the same ``VersionStore``
switch a build uses. A failed or half-done sync therefore never moves the local ``current``; a version
already here is not downloaded again, and an interrupted download resumes with the files it had checked.
The remote layout is in ``index.remote_listing``.

Old versions are deleted from the remote by ``prune_remote_versions`` (the rebuild's last task and
``hqa index gc``): never the one ``current`` names, nor the newest ``index.keep_versions``. A query node
that is syncing a version while it is deleted fails with ``SyncError`` naming the missing object and keeps
its local ``current`` (the download goes to a build folder, published only once every file is checked);
its next sync follows ``current`` to a version that is there.
"""

from __future__ import annotations

import fcntl
import logging
import os
import time
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from pydantic import BaseModel, Field

from index.integrity import IndexDamaged, damaged_files
from index.remote_listing import (
    CURRENT_KEY,
    FILE_LIST,
    VERSIONS,
    RemoteFile,
    RemoteFileList,
    RemotePointer,
    version_key,
)
from index.versions import MANIFEST, VersionLease, VersionStore
from ingest.object_store import RemoteError, RemoteRoot
from ingest.progress import progress
from ingest.sources import file_sha256
from schemas.build import Manifest
from schemas.settings import RemoteSettings

log = logging.getLogger(__name__)

SYNC_LOCK = ".sync.lock"


class SyncError(RemoteError):
    """A downloaded version does not match its uploaded file list; the local ``current`` is unchanged."""


class UploadResult(BaseModel):
    version: str
    url: str
    files: int
    bytes: int
    uploaded: bool  # False: that version was uploaded complete before, only ``current`` was written


class SyncResult(BaseModel):
    version: str
    version_dir: str
    downloaded_files: int
    downloaded_bytes: int
    kept_files: int  # already here and checked: a version present before, or an interrupted download
    switched: bool  # the local ``current`` moved to ``version``
    pruned: list[str]


def upload_version(version_dir: Path, remote: RemoteRoot, *, make_current: bool = True) -> UploadResult:
    """Upload a published version under ``versions/<version>/``, then its file list, then (last) point the
    remote ``current`` at it, so no reader can follow ``current`` into a half-uploaded version.

    Each file is streamed in chunks and hashed on the way; bytes that differ from the SHA-256 its build
    recorded are local damage and stop the upload (``IndexDamaged``) before ``current`` moves. A version
    whose complete file list is already there (a retried publish) is not sent again.
    """
    version_dir = Path(version_dir).resolve()
    lease = VersionLease(version_dir)  # not pruned while it is read
    try:
        manifest = VersionStore(version_dir.parent).manifest(version_dir)
        if not manifest.files or not manifest.checksums:
            raise IndexDamaged(
                f"{version_dir} was published before file lists and checksums were kept: rebuild it "
                "(`hqa build --force`) before uploading it"
            )
        uploaded = _uploaded_list(remote, manifest)
        listing = uploaded or _upload_files(version_dir, manifest, remote)
        if uploaded is None:
            remote.write_bytes(version_key(manifest.version, FILE_LIST), listing.model_dump_json().encode())
        if make_current:
            pointer = RemotePointer(version=manifest.version).model_dump_json().encode()
            remote.write_bytes(CURRENT_KEY, pointer)
    finally:
        lease.release()
    log.info("uploaded index %s to %s (%d files)", manifest.version, remote.url, len(listing.files))
    return UploadResult(
        version=manifest.version,
        url=remote.url,
        files=len(listing.files),
        bytes=listing.bytes,
        uploaded=uploaded is None,
    )


def _uploaded_list(remote: RemoteRoot, manifest: Manifest) -> RemoteFileList | None:
    """The remote file list of this version when it names exactly the manifest's files and checksums."""
    key = version_key(manifest.version, FILE_LIST)
    if not remote.exists(key):
        return None
    try:
        listing = RemoteFileList.model_validate_json(remote.read_bytes(key))
    except ValueError:
        return None  # a damaged list: upload again
    wanted = {n: RemoteFile(size=s, sha256=manifest.checksums[n]) for n, s in manifest.files.items()}
    same = {n: f for n, f in listing.files.items() if n != MANIFEST} == wanted and MANIFEST in listing.files
    return listing if same else None


def _upload_files(version_dir: Path, manifest: Manifest, remote: RemoteRoot) -> RemoteFileList:
    files: dict[str, RemoteFile] = {}
    total = sum(manifest.files.values())
    bar = progress(f"upload {manifest.version}", total=total, unit="B", unit_scale=True)
    try:
        for name in [*manifest.files, MANIFEST]:
            moved = remote.upload(version_dir / name, version_key(manifest.version, name), bar.update)
            expected = manifest.checksums.get(name), manifest.files.get(name)
            if name != MANIFEST and (moved.sha256, moved.size) != expected:
                raise IndexDamaged(
                    f"{version_dir / name} has other bytes than its build published ({moved.size:,} bytes "
                    f"read, {expected[1]:,} published): not uploaded, and the remote current is unchanged; "
                    "run `hqa verify` and rebuild the version"
                )
            files[name] = RemoteFile(size=moved.size, sha256=moved.sha256)
    finally:
        bar.close()
    return RemoteFileList(version=manifest.version, files=files)


def remote_listing(remote: RemoteRoot) -> RemoteFileList:
    """The file list of the version the remote ``current`` names."""
    pointer = RemotePointer.model_validate_json(remote.read_bytes(CURRENT_KEY))
    key = version_key(pointer.version, FILE_LIST)
    if not remote.exists(key):
        raise SyncError(
            f"{remote.url}/{CURRENT_KEY} names {pointer.version}, but {remote.url}/{key} is missing: the "
            "upload was cut short or the version was deleted; upload it again from the build host"
        )
    try:
        listing = RemoteFileList.model_validate_json(remote.read_bytes(key))
    except RemoteError as exc:  # deleted after the check above: pruned while this node looked
        raise SyncError(f"{exc}: the version {pointer.version} was deleted meanwhile; sync again") from exc
    if listing.version != pointer.version:
        raise SyncError(f"{remote.url}/{key} lists version {listing.version}, not {pointer.version}")
    return listing


def sync_version(remote: RemoteRoot, index_dir: Path, keep_versions: int) -> SyncResult:
    """Make the remote ``current`` version the local one under ``index_dir``, then prune old local
    versions by ``VersionStore.prune``'s rules (never one a reader holds).

    One sync at a time per local root (a lock file): a second waits, then finds the version here.
    """
    listing = remote_listing(remote)
    store = VersionStore(Path(index_dir))
    store.root.mkdir(parents=True, exist_ok=True)
    with exclusive(store.root / SYNC_LOCK):
        final = store.root / listing.version
        before = store.current()
        if (final / MANIFEST).is_file():
            kept, downloaded, nbytes = _check_present(store, final, listing), 0, 0
            if before != final.resolve():
                store.point_current(listing.version)
        else:
            kept, downloaded, nbytes = _download(remote, store, listing)  # publishes: current moves
        switched = before != final.resolve()
        pruned = [p.name for p in store.prune(keep_versions)]
    log.info("synced index %s: %d files downloaded, %d kept", listing.version, downloaded, kept)
    return SyncResult(
        version=listing.version,
        version_dir=str(final),
        downloaded_files=downloaded,
        downloaded_bytes=nbytes,
        kept_files=kept,
        switched=switched,
        pruned=pruned,
    )


def _check_present(store: VersionStore, version_dir: Path, listing: RemoteFileList) -> int:
    """Check a version already here against the remote list: by size when it is the current one (it was
    checked when it came, and readers check sizes at open; `hqa verify` reads every byte), by size and
    SHA-256 before it becomes current again."""
    files = {n: f.size for n, f in listing.files.items() if n != MANIFEST}  # publish rewrote the manifest
    checksums = None
    if store.current() != version_dir.resolve():
        checksums = {n: f.sha256 for n, f in listing.files.items() if n != MANIFEST}
    problems = damaged_files(version_dir, files, None, checksums)
    if problems:
        raise SyncError(
            f"{version_dir} is here but differs from the remote version: {'; '.join(problems[:3])}; move "
            "the folder away (readers may hold it) and sync again"
        )
    return len(listing.files)


def _download(remote: RemoteRoot, store: VersionStore, listing: RemoteFileList) -> tuple[int, int, int]:
    """Download the version into its build folder, check every file, publish it locally.

    Returns (files kept from an interrupted sync, files downloaded, bytes downloaded).
    """
    building = store.start(listing.version, resume=True)
    kept = downloaded = nbytes = 0
    bar = progress(f"sync {listing.version}", total=listing.bytes, unit="B", unit_scale=True)
    try:
        for name, expected in listing.files.items():
            target = building / name
            if _matches(target, expected):
                kept += 1
                bar.update(expected.size)
                continue
            key = version_key(listing.version, name)
            try:
                moved = remote.download(key, target, bar.update)
            except RemoteError as exc:
                raise SyncError(f"{name} of {listing.version} cannot be downloaded: {exc}") from exc
            if (moved.size, moved.sha256) != (expected.size, expected.sha256):
                target.unlink(missing_ok=True)
                raise SyncError(
                    f"{remote.url}/{key} has {moved.size:,} bytes with SHA-256 {moved.sha256[:12]}…, its "
                    f"file list says {expected.size:,} bytes and {expected.sha256[:12]}…: the local current "
                    "is unchanged; upload the version again from the build host"
                )
            downloaded += 1
            nbytes += moved.size
    finally:
        bar.close()
    manifest = Manifest.model_validate_json((building / MANIFEST).read_text())
    if manifest.version != listing.version:
        raise SyncError(f"{listing.version}'s manifest names version {manifest.version}")
    store.publish(building, manifest)
    return kept, downloaded, nbytes


def _matches(path: Path, expected: RemoteFile) -> bool:
    """A file an interrupted sync already downloaded and that still holds the listed bytes."""
    try:
        if path.stat().st_size != expected.size:
            return False
    except FileNotFoundError:
        return False
    return file_sha256(path) == expected.sha256


class VersionGcReport(BaseModel):
    """What ``prune_remote_versions`` kept and deleted (or, in a dry run, would delete) under one remote."""

    url: str
    dry_run: bool
    current: str | None = Field(description="the version the remote current names (None: no pointer)")
    kept: list[str]
    young: list[str] = Field(description="kept only because an object of theirs is younger than the grace")
    deleted: list[str]
    deleted_objects: int
    deleted_bytes: int
    seconds: float


def prune_remote_versions(
    remote: RemoteRoot, keep: int, grace_hours: float, *, dry_run: bool = False
) -> VersionGcReport:
    """Delete the uploaded versions other than the one ``current`` names and the ``keep`` newest (by
    name, which sorts by time), unless an object of theirs is younger than ``grace_hours``.

    ``keep`` is ``index.keep_versions``, the number a query node keeps on disk: so every version a node
    may still hold, and be pointed back to, can also be synced again or checked against its file list,
    and one setting says how far back a rollback reaches. The grace period keeps a version being uploaded
    right now (``hqa sync --push`` of an older version, whose name does not sort last). ``current`` is
    read before the listing: a version uploaded after it is not listed, so not touched.

    A node syncing a version while it is deleted fails with ``SyncError`` and keeps its local current
    (this module's docstring)."""
    if keep < 1:
        raise ValueError(f"keep must be at least 1, got {keep}")
    started = time.monotonic()
    try:
        current = RemotePointer.model_validate_json(remote.read_bytes(CURRENT_KEY)).version
    except RemoteError:
        current = None  # nothing was ever made current: the newest are kept all the same
    cutoff_ns = time.time_ns() - int(grace_hours * 3600e9)
    sizes: dict[str, list[int]] = {}  # version → [objects, bytes, newest mtime]
    for obj in remote.objects(VERSIONS):
        version = obj.key.removeprefix(VERSIONS + "/").split("/", 1)[0]
        seen = sizes.setdefault(version, [0, 0, 0])
        seen[0], seen[1], seen[2] = seen[0] + 1, seen[1] + obj.size, max(seen[2], obj.mtime_ns)
    names = sorted(sizes)
    wanted = set(names[-keep:]) | ({current} if current else set())
    young = [v for v in names if v not in wanted and sizes[v][2] > cutoff_ns]
    doomed = [v for v in names if v not in wanted and v not in young]
    if not dry_run:
        for version in doomed:
            remote.delete_folder(version_key(version))
    log.info(
        "%s versions under %s: kept %s, %s %s",
        "would prune" if dry_run else "pruned",
        remote.url,
        ", ".join(v for v in names if v not in doomed) or "none",
        "would delete" if dry_run else "deleted",
        ", ".join(doomed) or "none",
    )
    return VersionGcReport(
        url=remote.url,
        dry_run=dry_run,
        current=current,
        kept=[v for v in names if v not in doomed],
        young=young,
        deleted=doomed,
        deleted_objects=sum(sizes[v][0] for v in doomed),
        deleted_bytes=sum(sizes[v][1] for v in doomed),
        seconds=round(time.monotonic() - started, 3),
    )


@contextmanager
def exclusive(lock_file: Path) -> Iterator[None]:
    """Hold an exclusive ``flock`` on ``lock_file`` (created if missing) for the block: one process of
    this host at a time (a sync here, a state-exchange step there)."""
    fd = os.open(lock_file, os.O_RDWR | os.O_CREAT, 0o644)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX)
        yield
    finally:
        os.close(fd)


def remote_root(settings: RemoteSettings, url: str | None = None) -> RemoteRoot | None:
    """The configured remote (or ``url``), None when there is none."""
    url = url or settings.url
    return RemoteRoot.open(url, settings) if url else None
