"""A rebuild whose workers share no folder: each step pulls the state it reads from object storage into
its own local scratch, runs as it would over a shared folder, and pushes what it wrote.

With ``remote.state_url`` set, ``HQA_STATE_DIR`` is one worker's scratch, a cache of the state kept under
that URL (layout in ``index.state_listing``). A step (``StateExchange.step``):

1. checks the run's marker object, before it writes anything: a worker with another state URL, or one
   that cannot reach it, fails at once naming the URL and object (``SharedStateMissing``);
2. pulls its scope (folders under the state root, e.g. ``ingest``, the plan's build folder): every file
   the state names that the scratch lacks or holds with other bytes is downloaded (streamed in chunks)
   and checked against its size and SHA-256; what the scratch holds there and the state does not is
   removed, so a step never reads a leftover of another run;
3. runs, unchanged: the steps still read and write local paths;
4. pushes what changed under the state root (size or mtime differ from after the pull): new bytes as
   blobs, then one change record. A failed step pushes nothing, so a retry starts from the state as the
   last successful steps left it;
5. writes a checkpoint of the log when enough records have accumulated since the last one
   (``index.state_log``: a step reads the newest checkpoint and the records after it, not the whole log).

Tantivy, Kùzu and LanceDB open local folders, so their files are built on the scratch of the stage's
worker and reach the publishing worker through this exchange like any other file; the published version
then goes to ``remote.url`` through the version upload (``index.remote_versions``), as before.

Not exchanged: the per-host reader state of versions (lease and pin files, lock files), temporary files
mid-write, and copies of ``s3://`` dumps (``ingest.remote_inputs``): those are large and each ingest
worker stages its own from the dump's URL. One step at a time per scratch (a lock): a second step on the
same scratch waits, since a pull replaces files a running step may be reading.
"""

from __future__ import annotations

import hashlib
import json
import logging
import os
import re
import shutil
import socket
import time
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path

import pyarrow.fs as pafs

from index.remote_versions import SYNC_LOCK, exclusive
from index.shared_state import RunMarker, SharedStateMissing
from index.state_listing import ChangeRecord, StateEntry, blob_key, marker_key
from index.state_log import ChangeLog, LogStats, LogView, StateDamaged
from index.versions import READER_STATE
from ingest.files import temporary_path, write_json_atomic
from ingest.object_store import RemoteError, RemoteRoot
from ingest.remote_inputs import REMOTE
from ingest.shard_plan import inputs_dir
from ingest.sources import file_sha256
from schemas.settings import HqaSettings, RemoteSettings

log = logging.getLogger(__name__)

EXCHANGE_DIR = ".exchange"  # this scratch's bookkeeping: lock, known hashes, change records read
KNOWN = "known.json"
LOCK = "lock"
PER_HOST = frozenset({*READER_STATE, SYNC_LOCK})
_TEMPORARY = re.compile(r"^\..+\.tmp$")  # ingest.files.temporary_path: a file mid-write
_DEFAULTS = RemoteSettings()  # the checkpoint settings' defaults, written once there


@dataclass(frozen=True)
class LocalStamp:
    """What a path under the scratch is now; equal stamps before and after a step mean it was not written."""

    kind: str
    size: int | None = None
    mtime_ns: int | None = None
    target: str | None = None


@dataclass
class ExchangeStats:
    files: int = 0
    bytes: int = 0
    removed: int = 0


def _in(path: str, prefixes: tuple[str, ...]) -> bool:
    return any(path == p or path.startswith(p + "/") for p in prefixes)


def _relative(path: Path, root: Path) -> str | None:
    """``path`` relative to ``root``, None when outside it. The last part is not resolved: a symlink (the
    index's ``current``) names itself, not its target."""
    path = Path(path).parent.resolve() / Path(path).name
    return str(path.relative_to(root)) if path.is_relative_to(root) else None


class StateExchange:
    """The state of ``remote`` mirrored into the scratch ``state_dir``, one step at a time.

    ``roots`` are the folders under the state root that are exchanged at all; ``local_only`` are
    folders under them that never are. ``checkpoint_every`` and ``checkpoint_settle_seconds``: when a
    step folds the log into a checkpoint (``index.state_log``).
    """

    def __init__(
        self,
        state_dir: Path,
        remote: RemoteRoot,
        roots: tuple[str, ...],
        local_only: tuple[str, ...] = (),
        checkpoint_every: int = _DEFAULTS.checkpoint_every,
        checkpoint_settle_seconds: float = _DEFAULTS.checkpoint_settle_seconds,
    ) -> None:
        if not roots:
            raise ValueError("a state exchange needs at least one folder to exchange")
        self.root = Path(state_dir).resolve()
        self.remote = remote
        self.roots = roots
        self.local_only = local_only
        self.bookkeeping = self.root / EXCHANGE_DIR
        # the change records read, per state URL: a scratch reused with another URL reads that one's own
        self.records_dir = self.bookkeeping / hashlib.sha256(remote.url.encode()).hexdigest()[:16]
        self.log = ChangeLog(remote, self.records_dir, checkpoint_every, checkpoint_settle_seconds)
        self._view: LogView | None = None  # the log as this step last read it

    @classmethod
    def from_settings(cls, settings: HqaSettings) -> StateExchange | None:
        """The exchange for ``settings.remote.state_url``; None when the state is a shared folder."""
        url = settings.remote.state_url
        if not url:
            return None
        root = settings.state_dir.resolve()
        folders = (settings.ingest_dir, settings.index_dir, settings.embedding_cache_dir)
        folders += (settings.reports_dir,)
        roots = tuple(r for r in (_relative(f, root) for f in folders) if r and r != ".")
        local_only = (_relative(inputs_dir(settings.ingest_dir) / REMOTE, root),)
        return cls(
            root,
            RemoteRoot.open(url, settings.remote),
            roots,
            tuple(p for p in local_only if p),
            settings.remote.checkpoint_every,
            settings.remote.checkpoint_settle_seconds,
        )

    def scope(self, paths: list[Path | str | None]) -> tuple[str, ...]:
        """Local paths (None skipped) as the exchanged folders under the state root they name."""
        rels = (_relative(Path(p), self.root) for p in paths if p is not None)
        return tuple(r for r in rels if r and self._exchanged(r))

    # --- the run marker -------------------------------------------------------------------------------

    def write_marker(self, marker: RunMarker) -> None:
        key = marker_key(marker.run)
        try:
            self.remote.write_bytes(key, marker.model_dump_json().encode())
        except OSError as exc:
            raise SharedStateMissing(
                f"discover on {socket.gethostname()} cannot write the run marker {self.remote.url}/{key}: "
                f"{exc}. Check HQA_REMOTE__STATE_URL, HQA_REMOTE__ENDPOINT and the AWS credentials"
            ) from exc

    def require_marker(self, run: str, step: str) -> None:
        """Fail, naming the URL and object, unless the state URL is reachable and holds ``run``'s marker.

        Reads only: nothing is written anywhere before this passes."""
        key = marker_key(run)
        try:
            found = self.remote.exists(key)
        except OSError as exc:
            raise SharedStateMissing(
                f"{step} on {socket.gethostname()} cannot reach the shared state of rebuild run {run!r} at "
                f"{self.remote.url}: {exc}. Check HQA_REMOTE__STATE_URL, HQA_REMOTE__ENDPOINT and the AWS "
                "credentials, and retry the task"
            ) from exc
        if not found:
            raise SharedStateMissing(
                f"{step} on {socket.gethostname()} cannot see the shared state of rebuild run {run!r}: "
                f"{self.remote.url}/{key} is missing (discover wrote it there). Every worker must have the "
                f"same HQA_REMOTE__STATE_URL (here {self.remote.url}); set it and retry the task"
            )

    # --- one step ------------------------------------------------------------------------------------

    @contextmanager
    def step(self, step: str, scope: tuple[str, ...], run: str | None = None) -> Iterator[StepSession]:
        """Check the marker of ``run`` (when given), pull ``scope``, run the block, push what it changed.

        The block gets a ``StepSession``: to pull more paths (a step that learns what it reads from a
        file it pulled) or to drop paths from the state without downloading them."""
        if run is not None:
            self.require_marker(run, step)
        self.bookkeeping.mkdir(parents=True, exist_ok=True)
        with exclusive(self.bookkeeping / LOCK):
            self.log.stats, self._view = LogStats(), None
            session = StepSession(self)
            session.pulled = self.pull(scope)
            session.before = self.snapshot()
            yield session
            pushed = self.push(session.before, step, session.forgotten)
            self._checkpoint(step)
        pulled, read = session.pulled, self.log.stats
        # benchmarks/scale/exchange_run.py reads this line (its first half is the same before checkpoints)
        log.info(
            "%s: pulled %d files (%d bytes, %d removed), pushed %d files (%d bytes, %d removed) through %s; "
            "log: %d listings, %d records listed, %d read, %d downloaded (%d bytes with checkpoints), "
            "checkpoint read %s, written %s",
            step,
            pulled.files,
            pulled.bytes,
            pulled.removed,
            pushed.files,
            pushed.bytes,
            pushed.removed,
            self.remote.url,
            read.listings,
            read.listed,
            read.read,
            read.fetched,
            read.fetched_bytes,
            read.checkpoint,
            read.written,
        )

    def _checkpoint(self, step: str) -> None:
        """Fold the log this step read, when due. The step's push is done: a failure here only warns, the
        next step folds instead."""
        if self._view is None:
            return
        try:
            self.log.checkpoint(self._view)
        except (OSError, RemoteError) as exc:  # the S3 client's errors are OSErrors
            log.warning("%s: no checkpoint written to %s: %s", step, self.remote.url, exc)

    def state(self) -> dict[str, StateEntry]:
        """The state as the newest checkpoint and the change records after it say now."""
        self._view = self.log.view()
        return self._view.state()

    # --- the local side ------------------------------------------------------------------------------

    def snapshot(self, scope: tuple[str, ...] | None = None) -> dict[str, LocalStamp]:
        """Every exchanged path under the scratch (within ``scope`` when given) with its stamp."""
        stamps: dict[str, LocalStamp] = {}
        for top in self.roots if scope is None else scope:
            if not _in(top, self.roots) and not any(_in(r, (top,)) for r in self.roots):
                continue
            start = self.root / top
            if start.is_symlink() or start.is_file():
                self._stamp(start, top, stamps)
                continue
            for folder, dirs, files in os.walk(start):
                here = Path(folder)
                rel_dir = str(here.relative_to(self.root))
                kept = []
                for name in dirs:
                    rel = f"{rel_dir}/{name}"
                    if name in PER_HOST or _in(rel, self.local_only) or not self._exchanged(rel):
                        continue
                    if (here / name).is_symlink():
                        self._stamp(here / name, rel, stamps)
                    else:
                        kept.append(name)
                dirs[:] = kept
                names = [n for n in files if n not in PER_HOST and not _TEMPORARY.match(n)]
                for name in names:
                    self._stamp(here / name, f"{rel_dir}/{name}", stamps)
                if not kept and not names and rel_dir not in self.roots and self._exchanged(rel_dir):
                    stamps[rel_dir] = LocalStamp("dir")
        return stamps

    def _exchanged(self, rel: str) -> bool:
        return _in(rel, self.roots) and not _in(rel, self.local_only)

    def _stamp(self, path: Path, rel: str, stamps: dict[str, LocalStamp]) -> None:
        if not self._exchanged(rel):
            return
        if path.is_symlink():
            stamps[rel] = LocalStamp("link", target=os.readlink(path))
            return
        try:
            stat = path.stat()
        except FileNotFoundError:  # removed while we looked
            return
        stamps[rel] = LocalStamp("file", stat.st_size, stat.st_mtime_ns)

    def _known(self) -> dict[str, list]:
        """Path → [size, mtime_ns, sha256] of files hashed here before: not hashed again while unchanged."""
        try:
            return json.loads((self.bookkeeping / KNOWN).read_text())
        except (FileNotFoundError, ValueError):
            return {}

    def _sha256(self, rel: str, stamp: LocalStamp, known: dict[str, list]) -> str:
        seen = known.get(rel)
        if seen is not None and seen[:2] == [stamp.size, stamp.mtime_ns]:
            return seen[2]
        sha = file_sha256(self.root / rel)
        known[rel] = [stamp.size, stamp.mtime_ns, sha]
        return sha

    # --- pull ----------------------------------------------------------------------------------------

    def pull(self, scope: tuple[str, ...]) -> ExchangeStats:
        """Make the scratch under ``scope`` hold exactly what the state holds there."""
        if not scope:
            return ExchangeStats()
        state = self.state()
        wanted = {p: e for p, e in state.items() if _in(p, scope) and self._exchanged(p)}
        here = self.snapshot(scope)
        known = self._known()
        stats = ExchangeStats()
        for rel in sorted(set(here) - set(wanted), reverse=True):  # deepest first: folders emptied first
            _remove(self.root / rel)
            self._remove_empty_parents(rel)
            known.pop(rel, None)
            stats.removed += 1
        try:
            for rel, entry in sorted(wanted.items()):
                stats.bytes += self._pull_one(rel, entry, here.get(rel), known)
                stats.files += entry.kind == "file"
        finally:
            write_json_atomic(self.bookkeeping / KNOWN, known)
        return stats

    def _remove_empty_parents(self, rel: str) -> None:
        """Folders a removal left empty go too (up to an exchanged root): an empty build folder of another
        run must not look like one here, nor be pushed back as an empty folder."""
        parent = (self.root / rel).parent
        while parent != self.root and str(parent.relative_to(self.root)) not in self.roots:
            try:
                parent.rmdir()
            except OSError:  # not empty, or gone
                return
            parent = parent.parent

    def _pull_one(self, rel: str, entry: StateEntry, stamp: LocalStamp | None, known: dict[str, list]) -> int:
        """Bring one path to its entry; returns the bytes downloaded."""
        path = self.root / rel
        if entry.kind == "dir":
            if stamp is not None and stamp.kind != "dir" and not path.is_dir():
                _remove(path)
            path.mkdir(parents=True, exist_ok=True)
            return 0
        if entry.kind == "link":
            if stamp is None or stamp.target != entry.target:
                _remove(path)
                path.parent.mkdir(parents=True, exist_ok=True)
                tmp = temporary_path(path)
                os.symlink(entry.target or "", tmp)
                os.replace(tmp, path)
            return 0
        same_size = stamp is not None and stamp.kind == "file" and stamp.size == entry.size
        if same_size and self._sha256(rel, stamp, known) == entry.sha256:
            return 0
        if stamp is not None:
            _remove(path)
        return self._download(rel, entry, known)

    def _download(self, rel: str, entry: StateEntry, known: dict[str, list]) -> int:
        assert entry.sha256 is not None and entry.size is not None
        path = self.root / rel
        key = blob_key(entry.sha256)
        tmp = temporary_path(path)
        try:
            try:
                moved = self.remote.download(key, tmp)
            except RemoteError as exc:
                raise StateDamaged(f"{rel} of the shared state cannot be downloaded: {exc}") from exc
            if (moved.size, moved.sha256) != (entry.size, entry.sha256):
                raise StateDamaged(
                    f"{self.remote.url}/{key} (the state's {rel}) holds {moved.size:,} bytes with SHA-256 "
                    f"{moved.sha256[:12]}…, its change record says {entry.size:,} bytes and "
                    f"{entry.sha256[:12]}…: the object is damaged; delete it and rerun the step that wrote "
                    f"{rel} (or rebuild with force)"
                )
            if entry.mtime_ns is not None:
                os.utime(tmp, ns=(entry.mtime_ns, entry.mtime_ns))
            os.replace(tmp, path)
        finally:
            tmp.unlink(missing_ok=True)
        stat = path.stat()
        known[rel] = [stat.st_size, stat.st_mtime_ns, entry.sha256]
        return moved.size

    # --- push ----------------------------------------------------------------------------------------

    def push(
        self, before: dict[str, LocalStamp], step: str, forgotten: set[str] = frozenset()
    ) -> ExchangeStats:
        """Upload what changed since ``before`` (new blobs first), then one change record naming it all;
        ``forgotten`` paths are recorded as deleted unless the step wrote them."""
        after = self.snapshot()
        known = self._known()
        gone = (set(before) | set(forgotten)) - set(after)
        changes: dict[str, StateEntry | None] = dict.fromkeys(sorted(gone))
        stats = ExchangeStats(removed=len(changes))
        for rel, stamp in sorted(after.items()):
            if before.get(rel) == stamp:
                continue
            if stamp.kind == "file":
                sha = self._sha256(rel, stamp, known)
                stats.bytes += self._put_blob(rel, stamp, sha)
                stats.files += 1
                entry = StateEntry(kind="file", size=stamp.size, sha256=sha, mtime_ns=stamp.mtime_ns)
            else:
                entry = StateEntry(kind=stamp.kind, target=stamp.target)
            changes[rel] = entry
        write_json_atomic(self.bookkeeping / KNOWN, known)
        if changes:
            record = ChangeRecord(step=step, host=socket.gethostname(), written=time.time(), changes=changes)
            self.log.append(record, after=self._view.newest if self._view else 0)
        return stats

    def _put_blob(self, rel: str, stamp: LocalStamp, sha: str) -> int:
        """Upload a file's bytes under their SHA-256 unless that blob is there; returns the bytes sent.

        A blob found here may be one no record names any more: a garbage collection running now could
        delete it before this step's record names it, which is why none may run during a rebuild
        (``index.state_gc``)."""
        key = blob_key(sha)
        if self.remote.exists(key):
            return 0
        local_fs = isinstance(self.remote.fs, pafs.LocalFileSystem)
        # an S3 object appears only when complete; a folder's file is written aside and renamed, so a
        # crash never leaves a partial blob under a name that says it is complete
        target = f"{key}.{uuid.uuid4().hex}.tmp" if local_fs else key
        moved = self.remote.upload(self.root / rel, target)
        if (moved.size, moved.sha256) != (stamp.size, sha):
            self.remote.fs.delete_file(self.remote.path(target))
            raise RuntimeError(
                f"{self.root / rel} changed while it was uploaded ({moved.size:,} bytes sent, "
                f"{stamp.size:,} expected): a process other than this step is writing the scratch"
            )
        if local_fs:
            self.remote.fs.move(self.remote.path(target), self.remote.path(key))
        return moved.size


class StepSession:
    """What a step's block may ask of the exchange while it runs; over a shared folder (no exchange)
    every request is a no-op, since the folder already holds everything."""

    def __init__(self, exchange: StateExchange | None = None) -> None:
        self.exchange = exchange
        self.pulled = ExchangeStats()
        self.before: dict[str, LocalStamp] = {}
        self.forgotten: set[str] = set()

    def pull(self, paths: list[Path | str | None]) -> None:
        """Pull more paths into the scratch; what this pull changes is not counted as the step's."""
        if self.exchange is None:
            return
        more = self.exchange.scope(paths)
        got = self.exchange.pull(more)
        self.pulled.files += got.files
        self.pulled.bytes += got.bytes
        self.pulled.removed += got.removed
        for rel in [r for r in self.before if _in(r, more)]:
            del self.before[rel]
        self.before.update(self.exchange.snapshot(more))

    def children(self, folder: Path) -> set[str]:
        """The names directly under ``folder`` in the state (what this scratch holds there without an
        exchange)."""
        if self.exchange is None:
            return {p.name for p in Path(folder).iterdir()} if Path(folder).is_dir() else set()
        (rel,) = self.exchange.scope([folder]) or ("",)
        if not rel:
            return set()
        return {
            p[len(rel) + 1 :].split("/", 1)[0] for p in self.exchange.state() if _in(p, (rel,)) and p != rel
        }

    def forget(self, paths: list[Path | str | None]) -> None:
        """Drop every state path under ``paths`` with this step's push, without downloading them (old
        index versions a publish prunes, which this worker never pulled)."""
        if self.exchange is None:
            return
        rels = self.exchange.scope(paths)
        self.forgotten |= {p for p in self.exchange.state() if _in(p, rels)}


def _remove(path: Path) -> None:
    if path.is_symlink() or path.is_file():
        path.unlink()
    elif path.is_dir():
        if any(path.iterdir()):
            shutil.rmtree(path)
        else:
            path.rmdir()
