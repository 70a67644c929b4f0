"""An engine that follows the index's ``current`` version while it answers: for services and long jobs.

``Engine`` keeps the version it opened for its whole life, which is right for one batch (every answer of
the run from one version) but leaves a long-lived process answering from an ever older index, and holds
that folder's lease (``index.versions``) so that rebuilds cannot prune it. ``LiveEngine`` checks
``current`` before each question (one ``readlink``), opens the newer version's engine once when a rebuild
has published one, and closes the older engine when its last question in flight is done. Each answer
comes from exactly one engine, so its ``index_version`` names every piece of its evidence.

What does not depend on the index is loaded once for the process, not once a version: the instruct model
is opened by the ``LiveEngine`` and lent to every version's engine (a switch does not load the GGUF again,
nor hold two copies while the older version finishes its questions), and the embedders are cached by
``index.embedder``. Everything a version opens is closed with it, and its engine is collected
(``tests/query/serve/test_versions_memory.py``).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path

from index.versions import VersionStore
from query.config import EngineConfig
from query.engine import Engine, open_llm
from schemas.query import QueryResult
from schemas.settings import DEFAULT_STATE_DIR

log = logging.getLogger(__name__)


class LiveEngine:
    """``ask`` answers with the newest published version; safe to call from several threads."""

    def __init__(
        self, index_root: Path, config: EngineConfig | None = None, *, state_dir: Path | None = None
    ):
        self.root = Path(index_root)
        self.config = config or EngineConfig()
        self.state_dir = Path(state_dir) if state_dir is not None else DEFAULT_STATE_DIR
        self._store = VersionStore(self.root)
        self._lock = threading.Lock()
        self._opening = threading.Lock()  # one thread opens a new version; the others answer meanwhile
        self._llm = open_llm(self.config, self.state_dir)[0] if self.config.wants_llm else None
        try:
            self._engine = self._open()
        except BaseException:
            self._close_llm()
            raise
        self._in_flight: dict[Engine, int] = {self._engine: 0}
        self.switches: list[str] = [self._engine.index_version]
        """Every version this engine has answered from, in order."""

    @property
    def version(self) -> str:
        return self._engine.index_version

    @property
    def open_versions(self) -> list[str]:
        """Versions with an engine open now: the answering one, and older ones until their last question
        in flight ends (then they are closed and their leases released)."""
        with self._lock:
            return [engine.index_version for engine in self._in_flight]

    def ask(self, question: str, *, reader: str | None = None) -> QueryResult:
        """``reader``: as ``Engine.ask`` (``"candidates"`` answers without the instruct model)."""
        with self._borrowed() as engine:
            return engine.ask(question, reader=reader)

    @contextmanager
    def _borrowed(self) -> Iterator[Engine]:
        self._follow_current()
        with self._lock:
            engine = self._engine
            self._in_flight[engine] += 1
        try:
            yield engine
        finally:
            with self._lock:
                self._in_flight[engine] -= 1
                retire = engine is not self._engine and self._in_flight[engine] == 0
                if retire:
                    del self._in_flight[engine]
            if retire:
                engine.close()  # releases its lease: the next prune may take the folder

    def _follow_current(self) -> None:
        """Open the version ``current`` names if it is not the one answering now. A thread that finds
        another already opening it answers from the current engine instead of waiting."""
        current = self._store.current()
        if current is None or current == self._engine.reader.path:
            return
        if not self._opening.acquire(blocking=False):
            return
        try:
            if self._store.current() == self._engine.reader.path:
                return  # another thread switched while this one was checking
            newer = self._open()
            with self._lock:
                older, self._engine = self._engine, newer
                self._in_flight[newer] = 0
                self.switches.append(newer.index_version)
                idle = self._in_flight[older] == 0
                if idle:
                    del self._in_flight[older]
            log.info("now answering from index %s (was %s)", newer.index_version, older.index_version)
            if idle:
                older.close()
        finally:
            self._opening.release()

    def _open(self) -> Engine:
        """The current version's engine, reading with the shared model (None: the engine tries its own)."""
        return Engine.open(self.root, self.config, state_dir=self.state_dir, llm=self._llm)

    def close(self) -> None:
        with self._lock:
            engines, self._in_flight = list(self._in_flight), {}
        for engine in engines:
            engine.close()
        self._close_llm()

    def _close_llm(self) -> None:
        if self._llm is not None:
            self._llm.close()
            self._llm = None

    def __enter__(self) -> LiveEngine:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()
