"""Fixtures of the service tests: the sample index published as versions of an index root of their own,
and the app over a ``LiveEngine`` on it — in process (``TestClient``) or on a real uvicorn server."""

from __future__ import annotations

import shutil
import socket
import threading
import time
from collections.abc import Callable, Iterator
from pathlib import Path

import pytest
import uvicorn
from fastapi import FastAPI
from fastapi.testclient import TestClient

from index.versions import READER_STATE, VersionStore
from query import EngineConfig
from query.live import LiveEngine
from query.serve import ServeSettings, create_app

FAST = EngineConfig(reader="candidates")


def publish_copy(root: Path, built: Path, version: str) -> Path:
    """A new version of ``root`` holding the sample index's files, as a rebuild of the same data would."""
    store = VersionStore(root)
    building = store.start(version)
    shutil.copytree(built, building, dirs_exist_ok=True, ignore=shutil.ignore_patterns(*READER_STATE))
    return store.publish(building, store.manifest(built).model_copy(update={"version": version}))


@pytest.fixture
def index_root(sample_index, tmp_path: Path) -> Path:
    _, result = sample_index
    root = tmp_path / "indexes"
    publish_copy(root, result.version_dir, "v1")
    return root


@pytest.fixture
def make_app(sample_index, index_root: Path) -> Callable[..., FastAPI]:
    settings, _ = sample_index

    def make(config: EngineConfig = FAST, **serve: object) -> FastAPI:
        opened = lambda: LiveEngine(index_root, config, state_dir=settings.state_dir)  # noqa: E731
        return create_app(opened, config.reader, ServeSettings(**serve))

    return make


@pytest.fixture
def client(make_app) -> Iterator[TestClient]:
    with TestClient(make_app(), raise_server_exceptions=False) as client:
        yield client


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def running(app: FastAPI, ready_s: float = 300) -> Iterator[str]:
    """``app`` on a real uvicorn server on 127.0.0.1 in a thread, until the generator is closed."""
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=free_port(), log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    until = time.monotonic() + ready_s
    while not server.started:
        if not thread.is_alive() or time.monotonic() > until:
            raise RuntimeError("the test server did not start")
        time.sleep(0.05)
    try:
        yield f"http://127.0.0.1:{server.config.port}"
    finally:
        server.should_exit = True
        thread.join(timeout=60)
