"""The change log of a shared state in object storage: where a step starts reading it, and its checkpoints.

A step needs the state as of now. It starts from the newest readable checkpoint (``index.state_listing``:
a fold of every record up to one name), lists only the log's buckets at or after that checkpoint's,
and replays the records named after it. So a step reads a bounded number of records however long the
log has grown, instead of listing and parsing all of them (the cost grew with the steps times the records).

After its push a step writes a new checkpoint when at least ``every`` records it read are foldable:
named more than ``settle_seconds`` before its listing. The settle time is what keeps a checkpoint from
hiding a record: a writer names its record from its clock and then uploads it, so a record may become
visible after a later-named one. A checkpoint folds only what every writer has had ``settle_seconds`` to
make visible; keep it above the largest clock difference between workers plus the slowest record upload.

A checkpoint that cannot be read (cut short, not gzip or JSON, another format, or not the one its name
says) is skipped with a warning naming it, and the next older one (or the whole log) is used: nothing
deletes records (garbage collection, ``index.state_gc``, deletes old checkpoints and blobs no longer
named, never a record), so the records a checkpoint folds are all still there and give the same state,
which names only blobs the collection keeps; failing the step instead would stop a rebuild on an object
that only saves time. A damaged record, which has no such fallback, fails the step naming its object.

Records read before and the checkpoint in use are kept in the scratch (a record never changes once
written); copies of records older than the checkpoint are removed, so the scratch stays bounded too.
"""

from __future__ import annotations

import logging
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.fs as pafs
from pydantic import ValidationError

from index.shared_state import SharedStateMissing
from index.state_listing import (
    CHECKPOINT_SUFFIX,
    CHECKPOINTS,
    DAY_DIGITS,
    LOG,
    RECORD_NAME,
    SLOT_DIGITS,
    ChangeRecord,
    Checkpoint,
    StateEntry,
    checkpoint_key,
    fold,
    new_record_name,
    record_key,
    record_time,
    replay,
)
from ingest.object_store import RemoteError, RemoteRoot

log = logging.getLogger(__name__)

CHECKPOINT_CACHE = "checkpoints"


class StateDamaged(RemoteError):
    """An object of the shared state is missing or holds other bytes than its change record says."""


@dataclass
class LogStats:
    """What reading and extending the log cost one step: listing requests, record names listed, records
    parsed (replayed) and downloaded, bytes of records and checkpoints downloaded, and the checkpoints
    read and written."""

    listings: int = 0
    listed: int = 0
    read: int = 0
    fetched: int = 0
    fetched_bytes: int = 0
    checkpoint: str | None = None
    written: str | None = None
    damaged: list[str] = field(default_factory=list)


@dataclass(frozen=True)
class LogView:
    """The log as one listing saw it: the checkpoint started from and the records after it, in order."""

    start: Checkpoint | None
    tail: list[tuple[str, ChangeRecord]]
    listed_at_ns: int

    def state(self) -> dict[str, StateEntry]:
        return replay([r for _, r in self.tail], self.start.state if self.start else None)

    @property
    def newest(self) -> int:
        """The time of the newest record seen (folded or not): a new record's name sorts after it."""
        last = self.tail[-1][0] if self.tail else self.start.last if self.start else ""
        return record_time(last)


class ChangeLog:
    """The log under ``remote``, read through the scratch folder ``cache``.

    ``every``: records to accumulate past the newest checkpoint before a step writes the next (0: never);
    ``settle_seconds``: how old a record must be to be folded.
    """

    def __init__(self, remote: RemoteRoot, cache: Path, every: int, settle_seconds: float) -> None:
        if every < 0:
            raise ValueError(f"checkpoint_every must be 0 (never) or more records, got {every}")
        if settle_seconds < 0:
            raise ValueError(f"checkpoint_settle_seconds must be 0 or more, got {settle_seconds}")
        self.remote = remote
        self.cache = cache
        self.every = every
        self.settle_ns = int(settle_seconds * 1e9)
        self.stats = LogStats()

    # --- reading ------------------------------------------------------------------------------------

    def view(self) -> LogView:
        """The newest readable checkpoint and every record after it."""
        listed_at = time.time_ns()
        start = self._newest_checkpoint()
        after = start.last if start else None
        tail = [(name, self._record(name, key)) for name, key in self._names_after(after)]
        if start is not None:
            self._forget_cached(start.last)
        return LogView(start, tail, listed_at)

    def _list(self, prefix: str) -> tuple[list[str], list[str]]:
        """The folder and file names directly under ``prefix``; temporary files (``.*``) left out."""
        try:
            infos = self.remote.fs.get_file_info(
                pafs.FileSelector(self.remote.path(prefix), allow_not_found=True)
            )
        except OSError as exc:
            raise SharedStateMissing(f"cannot list {self.remote.url}/{prefix}/: {exc}") from exc
        self.stats.listings += 1
        folders = [i.base_name for i in infos if i.type == pafs.FileType.Directory]
        files = [
            i.base_name for i in infos if i.type == pafs.FileType.File and not i.base_name.startswith(".")
        ]
        return folders, files

    def _names_after(self, after: str | None) -> list[tuple[str, str]]:
        """(name, key) of every record named after ``after`` (every record when None), in name order.

        Lists ``log/`` (its day folders and any record of the flat layout), then the days and their slots
        at or after ``after``'s; names in those slots up to ``after`` are listed and left unread."""
        days, flat = self._list(LOG)
        found = [(n, f"{LOG}/{n}") for n in flat if RECORD_NAME.match(n)]
        for day in sorted(d for d in days if d.isdigit() and (after is None or d >= after[:DAY_DIGITS])):
            slots, _ = self._list(f"{LOG}/{day}")
            for slot in sorted(slots):
                if after is not None and day + slot < after[:SLOT_DIGITS]:
                    continue
                _, names = self._list(f"{LOG}/{day}/{slot}")
                found += [(n, f"{LOG}/{day}/{slot}/{n}") for n in names if RECORD_NAME.match(n)]
        self.stats.listed += len(found)
        return sorted(p for p in found if after is None or p[0] > after)

    def _record(self, name: str, key: str) -> ChangeRecord:
        copy = self.cache / name
        if copy.is_file():
            data = copy.read_bytes()
        else:
            data = self.remote.read_bytes(key)
            self.stats.fetched += 1
            self.stats.fetched_bytes += len(data)
        try:
            record = ChangeRecord.model_validate_json(data)
        except ValidationError as exc:
            copy.unlink(missing_ok=True)
            raise StateDamaged(
                f"{self.remote.url}/{key} is not a change record ({exc.error_count()} errors: "
                f"{exc.errors()[0]['msg']}); the state under {self.remote.url} is damaged: delete that "
                "object and rebuild with force"
            ) from None
        if not copy.is_file():
            self.cache.mkdir(parents=True, exist_ok=True)
            copy.write_bytes(data)
        self.stats.read += 1
        return record

    def _checkpoint_keys(self) -> Iterator[str]:
        """Every checkpoint's key, newest first; a bucket is listed only when the newer ones are used up."""
        days, _ = self._list(CHECKPOINTS)
        for day in sorted((d for d in days if d.isdigit()), reverse=True):
            slots, _ = self._list(f"{CHECKPOINTS}/{day}")
            for slot in sorted(slots, reverse=True):
                _, names = self._list(f"{CHECKPOINTS}/{day}/{slot}")
                for name in sorted((n for n in names if n.endswith(CHECKPOINT_SUFFIX)), reverse=True):
                    yield f"{CHECKPOINTS}/{day}/{slot}/{name}"

    def _newest_checkpoint(self) -> Checkpoint | None:
        """The newest checkpoint that reads back whole; unreadable ones are skipped with a warning."""
        for key in self._checkpoint_keys():
            name = key.rsplit("/", 1)[-1]
            copy = self.cache / CHECKPOINT_CACHE / name
            cached = copy.is_file()
            try:
                data = copy.read_bytes() if cached else self.remote.read_bytes(key)
            except RemoteError:  # listed, then gone (a garbage collection): tolerated like damage
                data = b""
            if not cached:
                self.stats.fetched_bytes += len(data)
            try:
                checkpoint = Checkpoint.from_bytes(data, key)
            except ValueError as exc:
                copy.unlink(missing_ok=True)
                if key in self.stats.damaged:  # this step read the state before: warned then
                    continue
                self.stats.damaged.append(key)
                log.warning(
                    "%s/%s: %s; ignored, the state is read from the older checkpoint or the records it "
                    "folds (all still there). A later step writes a newer checkpoint; the damaged object "
                    "can be deleted",
                    self.remote.url,
                    key,
                    exc,
                )
                continue
            if not cached:
                copy.parent.mkdir(parents=True, exist_ok=True)
                copy.write_bytes(data)
            self.stats.checkpoint = key
            return checkpoint
        return None

    def _forget_cached(self, last: str) -> None:
        """Drop the scratch's copies of records up to ``last`` and of other checkpoints: never read again."""
        for copy in self.cache.glob("*.json"):
            if copy.name <= last:
                copy.unlink(missing_ok=True)
        for copy in (self.cache / CHECKPOINT_CACHE).glob("*" + CHECKPOINT_SUFFIX):
            if copy.name != last + CHECKPOINT_SUFFIX:
                copy.unlink(missing_ok=True)

    # --- writing ------------------------------------------------------------------------------------

    def append(self, record: ChangeRecord, after: int) -> str:
        """Write ``record`` under a new name sorting after the time ``after`` and every record and
        checkpoint this scratch read; returns the name."""
        read = [*self.cache.glob("*.json"), *(self.cache / CHECKPOINT_CACHE).glob("*" + CHECKPOINT_SUFFIX)]
        newest = max((record_time(n.name) for n in read), default=0)
        name = new_record_name(after=max(after, newest))
        data = record.model_dump_json(exclude_none=True).encode()
        self.remote.write_bytes(record_key(name), data)
        self.cache.mkdir(parents=True, exist_ok=True)
        (self.cache / name).write_bytes(data)
        return name

    def checkpoint(self, view: LogView) -> str | None:
        """Write the checkpoint of ``view``'s records older than the settle time, when there are at least
        ``every`` of them; returns its key (None when none is due)."""
        cutoff = view.listed_at_ns - self.settle_ns
        foldable = [(n, r) for n, r in view.tail if record_time(n) <= cutoff]  # a prefix: names sort by time
        if self.every == 0 or len(foldable) < self.every:
            return None
        checkpoint = fold(view.start, foldable)
        key = checkpoint_key(checkpoint.last)
        data = checkpoint.to_bytes()
        # another worker may have written it: the same bytes. One this step found damaged is written
        # again: the only bytes its name can hold, so replacing it changes no valid checkpoint
        if key in self.stats.damaged or not self.remote.exists(key):
            self.remote.write_bytes(key, data)
        copy = self.cache / CHECKPOINT_CACHE / (checkpoint.last + CHECKPOINT_SUFFIX)
        copy.parent.mkdir(parents=True, exist_ok=True)
        copy.write_bytes(data)
        self._forget_cached(checkpoint.last)
        self.stats.written = key
        return key
