"""A local S3-compatible server (moto's) for the object-storage tests.

    python -m tests.object_store_server start [ROOT]   # prints the endpoint; ROOT defaults to .state/services
    python -m tests.object_store_server stop [ROOT]

Started like the services of ``tests.services``: a child process bound to 127.0.0.1 on a free port, its
log under ``ROOT/s3``, stopped by the pid recorded in ``ROOT/s3/server.json`` (never by name). moto keeps
its buckets in memory, so a restart starts empty. It accepts any credentials; the S3 client still needs
some, so ``CREDENTIALS`` are the fake ones the tests export (the standard AWS variables).
"""

from __future__ import annotations

import json
import sys
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict
from pathlib import Path

from tests.services import DEFAULT_ROOT, HOST, Running, _alive, _spawn, _stop_pid, _wait_for_port, free_port

STATE_FILE = "server.json"
CREDENTIALS = {
    "AWS_ACCESS_KEY_ID": "hqa-test",
    "AWS_SECRET_ACCESS_KEY": "hqa-test-secret",
    # no instance-metadata lookups (seconds of timeouts) when a client looks for credentials
    "AWS_EC2_METADATA_DISABLED": "true",
}


def start(root: Path = DEFAULT_ROOT) -> Running:
    """Start moto's server under ``root`` (a running one is kept); its endpoint is ``Running.url``."""
    folder = Path(root).resolve() / "s3"
    folder.mkdir(parents=True, exist_ok=True)
    state = folder / STATE_FILE
    if state.is_file():
        running = Running(**json.loads(state.read_text()))
        if _alive(running.pid):
            return running
    port, log = free_port(), folder / "moto.log"
    process = _spawn([sys.executable, "-m", "moto.server", "-H", HOST, "-p", str(port)], log)
    _wait_for_port(port, process, log, "moto.server")
    running = Running("s3", process.pid, port, f"http://{HOST}:{port}", str(log))
    state.write_text(json.dumps(asdict(running)))
    return running


def stop(root: Path = DEFAULT_ROOT) -> bool:
    """Stop the server ``start`` recorded under ``root``, by its pid."""
    state = Path(root).resolve() / "s3" / STATE_FILE
    if not state.is_file():
        return False
    running = Running(**json.loads(state.read_text()))
    state.unlink()
    return _stop_pid(running.pid)


@contextmanager
def running(root: Path = DEFAULT_ROOT) -> Iterator[Running]:
    try:
        yield start(root)
    finally:
        stop(root)


def main(argv: list[str]) -> int:
    if not argv or argv[0] not in {"start", "stop"}:
        print(__doc__, file=sys.stderr)
        return 2
    root = Path(argv[1]) if len(argv) > 1 else DEFAULT_ROOT
    if argv[0] == "start":
        server = start(root)
        print(f"s3\t{server.url}\tpid {server.pid}")
    else:
        print("stopped:", "s3" if stop(root) else "nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
