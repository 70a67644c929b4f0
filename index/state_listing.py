"""What a rebuild's state looks like in object storage: content-addressed blobs, a log of changes, and
checkpoints that fold the log.

Layout under the state URL (``s3://bucket/prefix`` or ``file:///abs/path``)::

    runs/<run>.json                   the run's marker, written by ``discover`` before anything else
    blobs/<sha256[:2]>/<sha256>       a file's bytes, named by their SHA-256
    log/<day>/<slot>/<name>           what one step changed (``<name>`` is ``<time>-<host>-<pid>-<id>.json``):
                                      path → file (size, SHA-256), link, empty folder, or None (deleted);
                                      written after every blob it names
    checkpoints/<day>/<slot>/<name>.gz  the state that every record up to ``<name>`` adds up to

Why blobs by content and a log rather than one object per path: steps of one run write at once from
several machines (mapped ingest, verbalize and embed tasks, the six stages). An object per path would
need a listing that two writers update together; here every writer only adds objects of its own (a log
record never changes, a blob's name is its content), so nothing is overwritten and nothing is locked.
Steps never delete; garbage collection (``index.state_gc``), run when no step is running, deletes blobs
the current state no longer names and checkpoints older than the newest few, never a change record.
The state is the log replayed in name order (a later change to a path wins). Unchanged files cost one
existence check, not an upload, and a file shared by two index versions is stored once. A reader checks
every blob it downloads against the size and SHA-256 its record names.

Why the buckets and checkpoints: a step must not read thousands of records from earlier steps. A record's
name starts with its time (20 digits of nanoseconds); ``<day>`` is its first 6 digits (10^14 ns, about
28 hours) and ``<slot>`` the next 2 (10^12 ns, about 17 minutes), so a name's bucket sorts with the name
and a reader that starts from a checkpoint lists only the buckets at or after the checkpoint's own (the
records of that one slot before it are listed, not read). A checkpoint is a pure function of the records
it folds (every record named up to its own name, in order), so two writers of the same checkpoint write
the same bytes, and two writers of different ones both leave a valid one: still only additions. Records
that were named before a checkpoint but became visible after it would be lost to readers starting from
it; a writer therefore folds only records older than a settle time (``StateExchange``). Records written
flat under ``log/`` (the layout before the buckets) are still read: they are listed with the days and
folded like any other.
"""

from __future__ import annotations

import gzip
import json
import os
import re
import socket
import time
import uuid
from pathlib import PurePosixPath
from typing import Literal

from pydantic import BaseModel, Field, field_validator

RUNS = "runs"
BLOBS = "blobs"
LOG = "log"
CHECKPOINTS = "checkpoints"
DAY_DIGITS = 6  # of a name's 20-digit time: a day bucket spans 10^14 ns (~28 h)
SLOT_DIGITS = 8  # a slot within it spans 10^12 ns (~17 min)
RECORD_NAME = re.compile(r"^\d{20}-[^/]*\.json$")
CHECKPOINT_SUFFIX = ".gz"


class StateEntry(BaseModel):
    """One path of the state: a file (its size and SHA-256), a symlink (its target) or an empty folder."""

    kind: Literal["file", "link", "dir"]
    size: int | None = Field(None, ge=0)
    sha256: str | None = Field(None, pattern=r"^[0-9a-f]{64}$")
    mtime_ns: int | None = Field(None, description="a file's mtime where it was written: kept on pull")
    target: str | None = None


class ChangeRecord(BaseModel):
    """What one step pushed: each changed path's new entry, None for a path it deleted."""

    step: str
    host: str
    written: float
    changes: dict[str, StateEntry | None]

    @field_validator("changes")
    @classmethod
    def _relative(cls, changes: dict[str, StateEntry | None]) -> dict[str, StateEntry | None]:
        """Paths stay inside the state root: a damaged or tampered record cannot make a pull write
        elsewhere."""
        for name in changes:
            path = PurePosixPath(name)
            if path.is_absolute() or ".." in path.parts or not path.parts:
                raise ValueError(f"{name!r} is not a path inside the state root")
        return changes


def blob_key(sha256: str) -> str:
    return f"{BLOBS}/{sha256[:2]}/{sha256}"


def marker_key(run: str) -> str:
    return f"{RUNS}/{run}.json"


def record_time(name: str) -> int:
    """The time part of a record's name (0 for a name without one)."""
    head = name.split("-", 1)[0]
    return int(head) if head.isdigit() else 0


def new_record_name(after: int = 0) -> str:
    """A record's name: sorts by time (nanoseconds, zero-padded), unique across hosts and processes.

    ``after`` is the newest record the step has read: its name sorts after that one even when this host's
    clock is behind the writer's, so a step's changes always replay after those of the steps it read
    (publish's removal of the build folder after the stages that filled it)."""
    host = re.sub(r"[^A-Za-z0-9.-]", "_", socket.gethostname())[:40]
    stamp = max(time.time_ns(), after + 1)
    return f"{stamp:020d}-{host}-{os.getpid()}-{uuid.uuid4().hex[:8]}.json"


def bucket(name: str) -> tuple[str, str]:
    """The day and slot folders of a record's name: prefixes of its time, so they sort as the names do."""
    if not RECORD_NAME.match(name):
        raise ValueError(f"{name!r} is not a change record's name (<20-digit time>-<host>-<pid>-<id>.json)")
    return name[:DAY_DIGITS], name[DAY_DIGITS:SLOT_DIGITS]


def record_key(name: str) -> str:
    day, slot = bucket(name)
    return f"{LOG}/{day}/{slot}/{name}"


def checkpoint_key(last: str) -> str:
    """A checkpoint is named by the last record it folds, in that record's bucket."""
    day, slot = bucket(last)
    return f"{CHECKPOINTS}/{day}/{slot}/{last}{CHECKPOINT_SUFFIX}"


class Checkpoint(BaseModel):
    """The state that every change record named up to ``last`` adds up to, replayed in name order.

    Stored gzipped with sorted keys and no timestamp, so its bytes depend on the records alone: two
    workers that fold the same records write the same object."""

    format: Literal[1] = 1
    last: str = Field(pattern=RECORD_NAME.pattern, description="the name of the last record folded")
    records: int = Field(ge=1, description="how many records are folded in, in all")
    state: dict[str, StateEntry]

    def to_bytes(self) -> bytes:
        data = json.dumps(
            self.model_dump(mode="json", exclude_none=True), sort_keys=True, separators=(",", ":")
        )
        return gzip.compress(data.encode(), compresslevel=6, mtime=0)

    @classmethod
    def from_bytes(cls, data: bytes, key: str) -> Checkpoint:
        """The checkpoint stored at ``key``; ``ValueError`` saying why when it is not one (cut short, not
        gzip or JSON, another format, or naming another record than its key)."""
        try:
            checkpoint = cls.model_validate_json(gzip.decompress(data))
        except (OSError, EOFError, ValueError) as exc:  # gzip's BadGzipFile is an OSError
            raise ValueError(f"{key} is not a checkpoint: {str(exc).splitlines()[0]}") from None
        if key.rsplit("/", 1)[-1] != checkpoint.last + CHECKPOINT_SUFFIX:
            raise ValueError(f"{key} holds the checkpoint of {checkpoint.last}, not the one its name says")
        return checkpoint


def fold(start: Checkpoint | None, records: list[tuple[str, ChangeRecord]]) -> Checkpoint:
    """``start`` (None: the empty state) with ``records`` (name, record; in name order, all after it)
    applied: the checkpoint of the last one."""
    if not records:
        raise ValueError("a checkpoint folds at least one record")
    state = replay([r for _, r in records], start.state if start else None)
    done = start.records if start else 0
    return Checkpoint(last=records[-1][0], records=done + len(records), state=state)


def replay(records: list[ChangeRecord], start: dict[str, StateEntry] | None = None) -> dict[str, StateEntry]:
    """The state the records describe, applied in the order given (their names' order) onto ``start``."""
    state: dict[str, StateEntry] = dict(start or {})
    for record in records:
        for path, entry in record.changes.items():
            if entry is None:
                state.pop(path, None)
            else:
                state[path] = entry
    return state
