"""What a rebuild's state looks like in object storage: content-addressed blobs and a log of changes.

Layout under the state URL (``s3://bucket/prefix`` or ``file:///abs/path``)::

    runs/<run>.json             the run's marker, written by ``discover`` before anything else
    blobs/<sha256[:2]>/<sha256> a file's bytes, named by their SHA-256
    log/<time>-<host>-<id>.json what one step changed: path → file (size, SHA-256), link, empty folder,
                                or None (deleted); written after every blob it names

Why blobs by content and a log rather than one object per path: steps of one run write at once from
several machines (mapped ingest, verbalize and embed tasks, the six stages). An object per path would
need a listing that two writers update together; here every writer only adds objects of its own (a log
record never changes, a blob's name is its content), so nothing is overwritten and nothing is locked.
The state is the log replayed in name order (a later change to a path wins). Unchanged files cost one
existence check, not an upload, and a file shared by two index versions is stored once. A reader checks
every blob it downloads against the size and SHA-256 its record names.
"""

from __future__ import annotations

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


def replay(records: list[ChangeRecord]) -> dict[str, StateEntry]:
    """The state the records describe, applied in the order given (their names' order)."""
    state: dict[str, StateEntry] = {}
    for record in records:
        for path, entry in record.changes.items():
            if entry is None:
                state.pop(path, None)
            else:
                state[path] = entry
    return state
