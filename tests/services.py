"""Redis and PostgreSQL for the tests and benchmarks that need them.

    python -m tests.services start [ROOT]   # prints the URLs; ROOT defaults to .state/services
    python -m tests.services stop [ROOT]

Each service is a Debian package started by this module as a child process bound to 127.0.0.1 on a
free port, with its data under ``ROOT/<name>``, and stopped by the pid recorded in
``ROOT/services.json``: never by name, since other people's servers may run on the same machine.
``running(root)`` is the context manager the pytest fixtures and benchmarks use. PostgreSQL will not
run as root, so as root its server runs as the ``postgres`` user (which owns its data folder), and its
folder must be one that user can enter: not pytest's private temporary folders, nor a clone inside a
private folder (``mktemp -d``, a home at 0700). ``services_root()`` makes one under the system's temporary
folder that it can always reach; a folder it cannot reach fails at once, naming the folder in the way.
"""

from __future__ import annotations

import json
import os
import pwd
import shutil
import signal
import socket
import stat
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import asdict, dataclass
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
DEFAULT_ROOT = REPO / ".state" / "services"
STATE_FILE = "services.json"
PG_BIN = Path("/usr/lib/postgresql/15/bin")
DEBIAN_PACKAGES = ("redis-server", "postgresql")
HOST = "127.0.0.1"
PG_USER = "hqa"
PG_DB = "airflow"
START_TIMEOUT_S = 60.0


class ServiceError(RuntimeError):
    """A service that would not start (its log's tail is in the message)."""


@dataclass
class Running:
    name: str
    pid: int
    port: int
    url: str
    log: str


@dataclass
class Services:
    """The services running under one root, as ``services.json`` records them."""

    root: Path
    redis: Running | None = None
    postgres: Running | None = None

    @property
    def running(self) -> list[Running]:
        return [s for s in (self.redis, self.postgres) if s is not None]

    def save(self) -> None:
        data = {s.name: asdict(s) for s in self.running}
        tmp = self.root / f".{STATE_FILE}.tmp"
        tmp.write_text(json.dumps(data, indent=2))
        tmp.replace(self.root / STATE_FILE)

    @classmethod
    def load(cls, root: Path) -> Services:
        path = Path(root) / STATE_FILE
        data = json.loads(path.read_text()) if path.is_file() else {}
        return cls(Path(root), **{name: Running(**value) for name, value in data.items()})


def free_port() -> int:
    """A port nothing listens on now (the OS picks it); a service binds it a moment later."""
    with socket.socket() as s:
        s.bind((HOST, 0))
        return s.getsockname()[1]


def require_packages() -> None:
    """Fail with what to install when a Debian package is missing (``.ci/run`` installs them)."""
    missing = []
    if shutil.which("redis-server") is None:
        missing.append("redis-server")
    if not (PG_BIN / "postgres").is_file():
        missing.append("postgresql")
    if missing:
        raise ServiceError(f"missing Debian packages: apt-get install -y {' '.join(missing)}")


def _wait_for_port(port: int, process: subprocess.Popen, log: Path, what: str) -> None:
    deadline = time.monotonic() + START_TIMEOUT_S
    while time.monotonic() < deadline:
        if process.poll() is not None:
            break
        with socket.socket() as s:
            if s.connect_ex((HOST, port)) == 0:
                return
        time.sleep(0.1)
    tail = log.read_text(errors="replace")[-2000:] if log.is_file() else ""
    _stop_pid(process.pid)
    raise ServiceError(f"{what} did not listen on {HOST}:{port} within {START_TIMEOUT_S:.0f} s:\n{tail}")


def _spawn(args: list[str], log: Path, **kwargs) -> subprocess.Popen:
    """A child in a session of its own (a Ctrl-C to the test run does not reach it half-way)."""
    with log.open("ab") as out:
        return subprocess.Popen(
            args,
            stdout=out,
            stderr=subprocess.STDOUT,
            stdin=subprocess.DEVNULL,
            start_new_session=True,
            **kwargs,
        )


def start_redis(root: Path) -> Running:
    folder = root / "redis"
    folder.mkdir(parents=True, exist_ok=True)
    port, log = free_port(), folder / "redis.log"
    args = ["redis-server", "--bind", HOST, "--port", str(port), "--dir", str(folder)]
    args += ["--save", "", "--appendonly", "no", "--protected-mode", "yes"]
    process = _spawn(args, log)
    _wait_for_port(port, process, log, "redis-server")
    return Running("redis", process.pid, port, f"redis://{HOST}:{port}/0", str(log))


def _postgres_user() -> dict:
    """Popen arguments that run PostgreSQL's binaries as ``postgres`` when we are root."""
    if os.geteuid() != 0:
        return {}
    entry = pwd.getpwnam("postgres")
    return {"user": entry.pw_uid, "group": entry.pw_gid, "extra_groups": []}


def services_root() -> Path:
    """A new folder for one run's services, which the ``postgres`` user can pass through (mode 0711)."""
    root = Path(tempfile.mkdtemp(prefix="hqa-services-"))
    root.chmod(0o711)
    return root


def _blocked_for(folder: Path, uid: int, gid: int) -> Path | None:
    """The first folder above ``folder`` that user ``uid`` (group ``gid``) may not pass through."""
    for parent in reversed(folder.resolve().parents):
        info = parent.stat()
        if info.st_uid == uid:
            allowed = info.st_mode & stat.S_IXUSR
        elif info.st_gid == gid:
            allowed = info.st_mode & stat.S_IXGRP
        else:
            allowed = info.st_mode & stat.S_IXOTH
        if not allowed:
            return parent
    return None


def start_postgres(root: Path) -> Running:
    folder = root / "postgres"
    data, log = folder / "data", folder / "postgres.log"
    folder.mkdir(parents=True, exist_ok=True)
    as_postgres = _postgres_user()
    if as_postgres:
        blocked = _blocked_for(folder, as_postgres["user"], as_postgres["group"])
        if blocked is not None:
            raise ServiceError(
                f"PostgreSQL runs as the postgres user, which may not enter {blocked} (mode "
                f"{stat.filemode(blocked.stat().st_mode)}): put the services under a folder it can pass "
                "through (tests.services.services_root() makes one)"
            )
        os.chown(folder, as_postgres["user"], as_postgres["group"])
    if not (data / "PG_VERSION").is_file():
        init = subprocess.run(
            [str(PG_BIN / "initdb"), "-D", str(data), "-U", PG_USER, "--auth=trust", "-E", "UTF8"],
            capture_output=True,
            text=True,
            **as_postgres,
        )
        if init.returncode != 0:
            raise ServiceError(f"initdb {data} failed:\n{init.stderr[-2000:]}")
    port = free_port()
    args = [str(PG_BIN / "postgres"), "-D", str(data), "-h", HOST, "-p", str(port)]
    # a throw-away test cluster: no fsync; its socket in its own folder, not /var/run/postgresql
    args += [
        "-k",
        str(folder),
        "-c",
        "fsync=off",
        "-c",
        "synchronous_commit=off",
        "-c",
        "max_connections=200",
    ]
    process = _spawn(args, log, **as_postgres)
    _wait_for_port(port, process, log, "postgres")
    _create_database(port, log)
    return Running(
        "postgres", process.pid, port, f"postgresql+psycopg2://{PG_USER}@{HOST}:{port}/{PG_DB}", str(log)
    )


def _create_database(port: int, log: Path) -> None:
    env = {**os.environ, "PGHOST": HOST, "PGPORT": str(port), "PGUSER": PG_USER}
    for _ in range(50):  # the port opens a moment before the server accepts logins
        exists = subprocess.run(
            [
                str(PG_BIN / "psql"),
                "-d",
                "postgres",
                "-tAc",
                f"SELECT 1 FROM pg_database WHERE datname='{PG_DB}'",
            ],
            capture_output=True,
            text=True,
            env=env,
        )
        if exists.returncode == 0:
            break
        time.sleep(0.2)
    else:
        raise ServiceError(f"postgres on {port} refused logins: {exists.stderr}; see {log}")
    if exists.stdout.strip() != "1":
        subprocess.run([str(PG_BIN / "createdb"), PG_DB], check=True, env=env, capture_output=True)


def start(root: Path = DEFAULT_ROOT) -> Services:
    """Start Redis and PostgreSQL under ``root``; already running ones are kept."""
    root = Path(root).resolve()
    root.mkdir(parents=True, exist_ok=True)
    require_packages()
    services = Services.load(root)
    for name in ("redis", "postgres"):
        current = getattr(services, name)
        if current is not None and not _alive(current.pid):
            setattr(services, name, None)
    try:
        services.redis = services.redis or start_redis(root)
        services.postgres = services.postgres or start_postgres(root)
    finally:
        services.save()
    return services


def stop(root: Path = DEFAULT_ROOT) -> list[str]:
    """Stop what ``start`` recorded under ``root``, by pid; returns the names stopped."""
    services = Services.load(Path(root).resolve())
    stopped = []
    for service in services.running:
        if _stop_pid(service.pid):
            stopped.append(service.name)
    (Path(root) / STATE_FILE).unlink(missing_ok=True)
    return stopped


def _alive(pid: int) -> bool:
    try:
        os.kill(pid, 0)
    except ProcessLookupError:
        return False
    except PermissionError:
        return True
    return True


def _stop_pid(pid: int, timeout: float = 20.0) -> bool:
    """SIGTERM (PostgreSQL: a smart shutdown), then SIGKILL after ``timeout``; reaps our own child."""
    if not _alive(pid):
        return False
    os.kill(pid, signal.SIGTERM)
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        try:
            if os.waitpid(pid, os.WNOHANG)[0] == pid:
                return True
        except ChildProcessError:  # not our child (started by another command): poll it
            if not _alive(pid):
                return True
        time.sleep(0.1)
    os.kill(pid, signal.SIGKILL)
    return True


@contextmanager
def running(root: Path = DEFAULT_ROOT) -> Iterator[Services]:
    """The services, stopped afterwards — also those that started when a later one failed to."""
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
        services = start(root)
        for service in services.running:
            print(f"{service.name}\t{service.url}\tpid {service.pid}")
    else:
        print("stopped:", ", ".join(stop(root)) or "nothing")
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
