"""The state root every worker of a rebuild must share, and paths that travel relative to it.

A rebuild's steps may run on different machines, each with the shared state mounted where it likes
(``HQA_STATE_DIR``). So a plan or job names files under the state root by their path relative to it,
and each worker resolves them against its own mount; a path outside the root (a dump, the bundled
tables) travels as given and must be visible at that path everywhere.

``discover`` writes a small marker for its run under the root; every later step checks it sees that
marker before doing anything. A worker given another folder (nothing shared, a mount missing) then
fails at once, naming the file it could not see, instead of failing later with a ``FileNotFoundError``
for another worker's output (or, worse, building from a partial ingest).
"""

from __future__ import annotations

import re
import socket
import uuid
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel, Field

from ingest.files import write_json_atomic

RUNS_DIR = ".runs"
STATE_PREFIX = "state:"  # how a path relative to the state root is written in a plan or job


class SharedStateMissing(FileNotFoundError):
    """This worker does not see the state root the run started in."""


class RunMarker(BaseModel):
    """What ``discover`` writes for its run: who wrote it, where the state root was mounted there."""

    run: str
    host: str
    state_dir: str = Field(description="the state root as mounted on the host that wrote the marker")
    written: str


def run_name(run_id: str | None) -> str:
    """A file-name-safe name for the run (an Airflow run id has ':' and '+'); a fresh one when None."""
    if not run_id:
        return uuid.uuid4().hex
    return re.sub(r"[^A-Za-z0-9._-]", "_", run_id)


def marker_path(state_dir: Path, run: str) -> Path:
    return Path(state_dir) / RUNS_DIR / f"{run}.json"


def new_marker(state_dir: Path, run: str) -> RunMarker:
    return RunMarker(
        run=run,
        host=socket.gethostname(),
        state_dir=str(Path(state_dir).resolve()),
        written=datetime.now(UTC).isoformat(timespec="seconds"),
    )


def write_marker(state_dir: Path, run: str) -> RunMarker:
    marker = new_marker(state_dir, run)
    path = marker_path(state_dir, run)
    path.parent.mkdir(parents=True, exist_ok=True)
    write_json_atomic(path, marker.model_dump())
    return marker


def require_marker(state_dir: Path, run: str | None, step: str) -> None:
    """Fail with what is missing unless this worker sees the marker of ``run`` under its state root.

    ``run`` None (a plan made outside a rebuild run, e.g. by ``hqa build``) checks nothing.
    """
    if run is None:
        return
    path = marker_path(state_dir, run)
    if not path.is_file():
        raise SharedStateMissing(
            f"{step} on {socket.gethostname()} cannot see the shared state of rebuild run {run!r}: "
            f"{path} is missing (discover wrote it under its state root). Every worker must mount the "
            f"same state folder as HQA_STATE_DIR (here {Path(state_dir).resolve()}); mount it, or point "
            "HQA_STATE_DIR at it, and retry the task"
        )


def portable(path: str | Path | None, state_dir: Path) -> str | None:
    """``path`` as a plan carries it: ``state:<relative>`` under the state root, else unchanged."""
    if path is None:
        return None
    text = str(path)
    if text.startswith(STATE_PREFIX):
        return text
    root = Path(state_dir).resolve()
    absolute = Path(text).resolve() if Path(text).is_absolute() else None
    if absolute is not None and absolute.is_relative_to(root):
        return STATE_PREFIX + str(absolute.relative_to(root))
    return text


def local(path: str | None, state_dir: Path) -> str | None:
    """A path from a plan, on this worker: ``state:<relative>`` resolved against its state root."""
    if path is None or not path.startswith(STATE_PREFIX):
        return path
    return str(Path(state_dir).resolve() / path.removeprefix(STATE_PREFIX))
