"""Garbage collection in object storage: blobs and checkpoints under the state URL that no reader needs
any more, and published versions under the remote URL beyond the ones kept.

Without it storage only grows: every rebuild adds blobs for the files it changed and checkpoints of the
log under ``remote.state_url`` (layout in ``index.state_listing``), and a whole version under
``remote.url``.

What is deleted under the state URL, and why it is safe:

- Blobs that the current state does not name and whose object is older than ``remote.gc_grace_hours``.
  A step computes the current state (the newest readable checkpoint and the records after it) and
  downloads only the blobs it names, so a blob no longer named is never read again. The grace period is
  for a step in flight: it uploads its blobs before the record that names them. The blobs are listed
  (with their times) before the log is read, so a blob uploaded and recorded between the two is either
  not listed, too young, or named by the state that is read.
- Checkpoints older than the newest ``CHECKPOINTS_KEPT`` readable ones, and unreadable ones. Steps start
  from the newest; the one before it is what they fall back to if that one turns out unreadable, so a
  damaged object costs a few more records read, not a replay of the whole log.
- Never a change record. Records are small (a few kilobytes a step) and they are what a reader falls back
  to when checkpoints are damaged (``index.state_log``): any checkpoint, or none, plus the records after
  it replays to the same state, and that state names only blobs this collection keeps.
- Never a run marker (``runs/``): one small object per run, read by that run's steps.

Not supported: collecting while a rebuild runs. A push that finds a blob already there does not upload it
again (``StateExchange._put_blob``); if that blob is old and unnamed (a file changed back to earlier
bytes), a collection between that check and the push's record deletes it, and the record then names a
missing object. No grace period covers this, as the blob is old. The rebuild DAG therefore collects in
its own last task, after *publish* and *report*, when no step of its run pushes, and it runs one run at
a time (``max_active_runs=1``); ``hqa index gc`` refuses (unless ``--force``) while the newest change
record is younger than the grace period, which means a run is probably under way. A collection that
deletes blobs reads the log again afterwards and fails with ``StateDamaged`` naming every path whose blob
it deleted, should a record written meanwhile name one, so such damage is never silent.

Under the remote URL, old versions are pruned by ``index.remote_versions.prune_remote_versions``.
"""

from __future__ import annotations

import logging
import tempfile
import time
from pathlib import Path

from pydantic import BaseModel, Field

from index.remote_versions import VersionGcReport, prune_remote_versions
from index.state_listing import BLOBS, CHECKPOINT_SUFFIX, CHECKPOINTS, Checkpoint, StateEntry, blob_key
from index.state_log import ChangeLog, StateDamaged
from ingest.object_store import RemoteError, RemoteRoot, StoredObject
from schemas.settings import RemoteSettings

log = logging.getLogger(__name__)

CHECKPOINTS_KEPT = 2
"""Readable checkpoints kept: the one steps start from and the fallback should it be damaged later."""


class RunInProgress(RuntimeError):
    """The state's newest change record is younger than the grace period: a rebuild is probably running,
    and collecting now could delete a blob a step is about to name."""


class StateGcReport(BaseModel):
    """What one collection under a state URL kept and deleted (in a dry run: would delete)."""

    url: str
    dry_run: bool
    grace_hours: float
    newest_record_hours: float | None = Field(description="age of the newest change record; None: no log")
    blobs_kept: int
    blobs_kept_bytes: int
    blobs_young: int = Field(description="of the blobs kept, those unnamed but younger than the grace")
    blobs_deleted: int
    blobs_deleted_bytes: int
    checkpoints_kept: int
    checkpoints_deleted: int
    checkpoints_deleted_bytes: int
    checkpoints_damaged: int = Field(description="of those deleted, the ones that did not read back")
    seconds: float


class GcReport(BaseModel):
    """One collection: under the state URL and under the remote URL (None where none is configured)."""

    state: StateGcReport | None = None
    versions: VersionGcReport | None = None


def collect_garbage(
    settings: RemoteSettings, keep_versions: int, *, dry_run: bool = False, force: bool = False
) -> GcReport:
    """Collect under ``settings.state_url`` and prune the versions under ``settings.url`` (either may be
    unset); ``keep_versions`` is ``index.keep_versions``."""
    report = GcReport()
    if settings.state_url:
        state = RemoteRoot.open(settings.state_url, settings)
        report.state = collect_state_garbage(state, settings.gc_grace_hours, dry_run=dry_run, force=force)
    if settings.url:
        versions = RemoteRoot.open(settings.url, settings)
        report.versions = prune_remote_versions(
            versions, keep_versions, settings.gc_grace_hours, dry_run=dry_run
        )
    return report


def collect_state_garbage(
    remote: RemoteRoot, grace_hours: float, *, dry_run: bool = False, force: bool = False
) -> StateGcReport:
    """Delete the blobs the current state does not name and that are older than ``grace_hours``, and the
    checkpoints beyond the newest ``CHECKPOINTS_KEPT`` readable ones (the module's docstring says why this
    is safe, and when it is not).

    ``dry_run`` deletes nothing and reports what would go. Without ``force``, raises ``RunInProgress``
    (before deleting anything) when the newest change record is younger than ``grace_hours``; the
    rebuild's own last task passes ``force``, since no other run's steps can be pushing then."""
    if grace_hours < 0:
        raise ValueError(f"gc_grace_hours must be 0 or more, got {grace_hours}")
    started = time.monotonic()
    cutoff_ns = time.time_ns() - int(grace_hours * 3600e9)
    blobs = remote.objects(BLOBS)  # before the log is read: see the module's docstring
    with tempfile.TemporaryDirectory(prefix="hqa-gc-") as cache:
        changelog = ChangeLog(remote, Path(cache), every=0, settle_seconds=0)  # reads, never folds
        view = changelog.view()
        newest = view.newest
        age_hours = (time.time_ns() - newest) / 3600e9 if newest else None
        if newest == 0 and blobs:
            raise StateDamaged(
                f"{remote.url} holds {len(blobs):,} blobs but no change record: not collecting, since "
                "every blob would look unnamed. Is this the state URL (HQA_REMOTE__STATE_URL)?"
            )
        if age_hours is not None and age_hours < grace_hours and not force and not dry_run:
            raise RunInProgress(
                f"the newest change record under {remote.url} is {age_hours:.1f} h old, younger than the "
                f"grace period ({grace_hours:g} h): a rebuild is probably running, and collecting while one "
                "pushes can delete a blob it is about to name. Collect after it ends (the rebuild DAG does, "
                "in its last task), or pass --force if no rebuild runs"
            )
        named = _named(view.state())
        unnamed = [b for b in blobs if b.key not in named]
        doomed = [b for b in unnamed if b.mtime_ns <= cutoff_ns]
        kept = [b for b in blobs if b.key in named or b.mtime_ns > cutoff_ns]
        kept_checkpoints, old_checkpoints, damaged = _checkpoints(remote)
        if not dry_run:
            for blob in doomed:
                remote.delete(blob.key)
            _delete_checkpoints(remote, old_checkpoints, kept_checkpoints)
            if doomed:
                _check_still_unnamed(remote, changelog, {b.key for b in doomed})
    report = StateGcReport(
        url=remote.url,
        dry_run=dry_run,
        grace_hours=grace_hours,
        newest_record_hours=round(age_hours, 3) if age_hours is not None else None,
        blobs_kept=len(kept),
        blobs_kept_bytes=sum(b.size for b in kept),
        blobs_young=len(unnamed) - len(doomed),
        blobs_deleted=len(doomed),
        blobs_deleted_bytes=sum(b.size for b in doomed),
        checkpoints_kept=len(kept_checkpoints),
        checkpoints_deleted=len(old_checkpoints),
        checkpoints_deleted_bytes=sum(c.size for c in old_checkpoints),
        checkpoints_damaged=damaged,
        seconds=round(time.monotonic() - started, 3),
    )
    log.info(
        "%s under %s: %d blobs (%d bytes) and %d checkpoints; kept %d blobs (%d unnamed but younger than "
        "%g h) and %d checkpoints",
        "would delete" if dry_run else "deleted",
        remote.url,
        report.blobs_deleted,
        report.blobs_deleted_bytes,
        report.checkpoints_deleted,
        report.blobs_kept,
        report.blobs_young,
        grace_hours,
        report.checkpoints_kept,
    )
    return report


def _named(state: dict[str, StateEntry]) -> set[str]:
    """The keys of the blobs the state's files name."""
    return {blob_key(e.sha256) for e in state.values() if e.kind == "file" and e.sha256}


def _checkpoints(remote: RemoteRoot) -> tuple[list[StoredObject], list[StoredObject], int]:
    """(kept, to delete, how many of those did not read back): the newest ``CHECKPOINTS_KEPT`` readable
    checkpoints are kept; older ones and unreadable ones go. A checkpoint's key sorts as the record it is
    named by, so key order is age order."""
    found = [c for c in remote.objects(CHECKPOINTS) if c.key.endswith(CHECKPOINT_SUFFIX)]
    kept: list[StoredObject] = []
    doomed: list[StoredObject] = []
    damaged = 0
    for obj in sorted(found, key=lambda c: c.key, reverse=True):
        if len(kept) >= CHECKPOINTS_KEPT:
            doomed.append(obj)
            continue
        try:
            Checkpoint.from_bytes(remote.read_bytes(obj.key), obj.key)
        except RemoteError:  # gone since the listing
            continue
        except ValueError as exc:
            log.warning("%s/%s: %s; deleted with the old checkpoints", remote.url, obj.key, exc)
            doomed.append(obj)
            damaged += 1
            continue
        kept.append(obj)
    return kept, doomed, damaged


def _delete_checkpoints(remote: RemoteRoot, doomed: list[StoredObject], kept: list[StoredObject]) -> None:
    """Delete the checkpoints, then the day and slot folders they leave empty (an S3 client may leave a
    folder marker behind, which readers would list for nothing)."""
    for obj in doomed:
        remote.delete(obj.key)
    kept_folders = {k.key.rsplit("/", i)[0] for k in kept for i in (1, 2)}
    emptied = {c.key.rsplit("/", i)[0] for c in doomed for i in (1, 2)} - kept_folders
    for folder in sorted(emptied, key=len, reverse=True):  # slots before their days
        if not remote.objects(folder):
            remote.delete_folder(folder)


def _check_still_unnamed(remote: RemoteRoot, changelog: ChangeLog, deleted: set[str]) -> None:
    """Read the log again: a record written while this collection ran must not name a deleted blob. It
    can only happen when a rebuild pushed meanwhile (not supported); the paths are named so it is mended
    at once rather than found by a later pull."""
    state = changelog.view().state()
    lost = sorted(p for p, e in state.items() if e.kind == "file" and blob_key(e.sha256 or "") in deleted)
    if lost:
        raise StateDamaged(
            f"a change record written while garbage was collected under {remote.url} names blobs the "
            f"collection deleted: {', '.join(lost[:5])}{' …' if len(lost) > 5 else ''} ({len(lost)} paths). "
            "A rebuild was pushing during the collection, which is not supported. Upload each file again "
            "from the scratch of the worker that pushed it (to blobs/<sha256[:2]>/<sha256>), or run the "
            "rebuild with force on a new state URL"
        )
