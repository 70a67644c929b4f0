"""A real Airflow CeleryExecutor cluster on localhost, for the rebuild DAG's cluster test and benchmark.

PostgreSQL (metadata DB and Celery result backend) and Redis (broker) come from ``tests.services``; this
module starts Airflow's API server (UI, REST API and the execution API the workers' tasks report to),
scheduler, DAG processor and Celery workers (concurrency 1 each, every one with its own Celery hostname
and its own ``HQA_STATE_DIR``), all bound to 127.0.0.1 and stopped by their process-group id. The DAG
is triggered as in production (``airflow dags trigger``), and the run is followed in the metadata DB.

Task instances record the host that ran them; the workers here share one machine, so each gets its own
name through Airflow's ``[core] hostname_callable`` (``worker_hostname`` below, reading
``HQA_WORKER_NAME``), which is what tells the two workers apart in ``task_instance.hostname``.

Celery's broker ``visibility_timeout`` is 6 h: a message not acknowledged within it is delivered again
(Airflow acknowledges late, when the task ends), so it must exceed the longest task. Here a task takes
seconds; at full size the longest are the index stages (see docs/capacity.md), which is why the
embedding is split into mapped parts rather than one multi-hour task.
"""

from __future__ import annotations

import contextlib
import os
import secrets
import signal
import socket
import subprocess
import sys
import time
from dataclasses import dataclass, field
from pathlib import Path

from tests.services import HOST, PG_DB, Services, free_port

REPO = Path(__file__).resolve().parents[1]
DAG_ID = "hqa_index_rebuild"
VISIBILITY_TIMEOUT_S = 6 * 3600
COMPONENT_START_S = 240.0


def worker_hostname() -> str:
    """Airflow's ``hostname_callable`` here: this worker's name, so two workers on one host differ."""
    return os.environ.get("HQA_WORKER_NAME") or socket.getfqdn()


class ClusterError(RuntimeError):
    """A component that died or a run that did not finish (with the logs' tails)."""


@dataclass
class Worker:
    name: str
    state_dir: Path
    env: dict[str, str] = field(default_factory=dict)  # this worker's own settings (e.g. a state URL)


@dataclass
class Cluster:
    """Airflow's components over the running ``services``; ``home`` is ``AIRFLOW_HOME``."""

    home: Path
    services: Services
    repo: Path = REPO
    extra_env: dict[str, str] = field(default_factory=dict)
    api_port: int = field(default_factory=free_port)
    secret: str = field(default_factory=lambda: secrets.token_hex(32))
    processes: dict[str, subprocess.Popen] = field(default_factory=dict)

    # --- environment -------------------------------------------------------------------------------
    @property
    def db_url(self) -> str:
        assert self.services.postgres is not None
        return self.services.postgres.url

    def env(self, **extra: str) -> dict[str, str]:
        """Every component's environment: the cluster's Airflow and hqa settings replace inherited ones."""
        assert self.services.redis is not None and self.services.postgres is not None
        base = {k: v for k, v in os.environ.items() if not k.startswith(("AIRFLOW", "HQA_AIRFLOW"))}
        pg = self.services.postgres
        airflow = {
            "AIRFLOW_HOME": str(self.home),
            # only the rebuild DAG: the batch-QA DAG it triggers is not under test here
            "AIRFLOW__CORE__DAGS_FOLDER": str(self.repo / "dags" / "hqa_index_rebuild.py"),
            "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
            "AIRFLOW__CORE__DAGS_ARE_PAUSED_AT_CREATION": "False",
            "AIRFLOW__CORE__EXECUTOR": "CeleryExecutor",
            "AIRFLOW__CORE__HOSTNAME_CALLABLE": "tests.cluster.worker_hostname",
            "AIRFLOW__CORE__EXECUTION_API_SERVER_URL": f"http://{HOST}:{self.api_port}/execution/",
            "AIRFLOW__CORE__SIMPLE_AUTH_MANAGER_ALL_ADMINS": "True",
            "AIRFLOW__DATABASE__SQL_ALCHEMY_CONN": self.db_url,
            "AIRFLOW__API__HOST": HOST,
            "AIRFLOW__API__PORT": str(self.api_port),
            "AIRFLOW__API__BASE_URL": f"http://{HOST}:{self.api_port}",
            "AIRFLOW__API__SECRET_KEY": self.secret,
            # the scheduler signs each task's token, the API server checks it: one secret for both
            "AIRFLOW__API_AUTH__JWT_SECRET": self.secret,
            "AIRFLOW__CELERY__BROKER_URL": self.services.redis.url,
            "AIRFLOW__CELERY__RESULT_BACKEND": f"db+{pg.url}",
            "AIRFLOW__CELERY__WORKER_CONCURRENCY": "1",
            # prefork runs tasks in daemonic processes, which may not start children: the ingest's parser
            # pool would fail ("daemonic processes are not allowed to have children"). A solo worker runs
            # each task from its main process (one at a time, as concurrency 1 does anyway).
            "AIRFLOW__CELERY__POOL": "solo",
            "AIRFLOW__CELERY__SYNC_PARALLELISM": "1",
            "AIRFLOW__CELERY_BROKER_TRANSPORT_OPTIONS__VISIBILITY_TIMEOUT": str(VISIBILITY_TIMEOUT_S),
            # a task's calls to the execution API: the 5 s default times out on a loaded machine, and the
            # task then fails before it starts
            "AIRFLOW__WORKERS__EXECUTION_API_TIMEOUT": "60",
            "AIRFLOW__WORKERS__EXECUTION_API_RETRIES": "10",
            "AIRFLOW__DAG_PROCESSOR__REFRESH_INTERVAL": "5",
            "AIRFLOW__SCHEDULER__SCHEDULER_HEARTBEAT_SEC": "2",
            # a manual DAG with no retries: a failing task fails the run at once
            "HQA_AIRFLOW": '{"schedule": null, "retries": 0}',
            "HQA_PROGRESS": "0",
            "HF_HUB_OFFLINE": "1",
            "TRANSFORMERS_OFFLINE": "1",
            "PYTHONPATH": os.pathsep.join([str(self.repo), *filter(None, [os.environ.get("PYTHONPATH")])]),
        }
        return {**base, **airflow, **self.extra_env, **extra}

    # --- processes ---------------------------------------------------------------------------------
    def airflow(self, *args: str, timeout: float = 600) -> str:
        """Run one ``airflow`` CLI command to its end; its output, or a ClusterError with it."""
        done = subprocess.run(
            [sys.executable, "-m", "airflow", *args],
            env=self.env(),
            capture_output=True,
            text=True,
            timeout=timeout,
            cwd=self.home,
        )
        if done.returncode != 0:
            raise ClusterError(
                f"airflow {' '.join(args)} failed:\n{done.stdout[-2000:]}\n{done.stderr[-3000:]}"
            )
        return done.stdout

    def spawn(self, name: str, args: list[str], **env: str) -> None:
        logs = self.home / "components"
        logs.mkdir(parents=True, exist_ok=True)
        with (logs / f"{name}.log").open("ab") as out:
            self.processes[name] = subprocess.Popen(
                [sys.executable, "-m", "airflow", *args],
                env=self.env(**env),
                stdout=out,
                stderr=subprocess.STDOUT,
                stdin=subprocess.DEVNULL,
                start_new_session=True,  # its own process group: stopped with all its children
                cwd=self.home,
            )

    def log_tail(self, name: str, chars: int = 3000) -> str:
        path = self.home / "components" / f"{name}.log"
        return path.read_text(errors="replace")[-chars:] if path.is_file() else ""

    def start(self) -> None:
        """Migrate the metadata DB, start the API server, scheduler and DAG processor."""
        self.home.mkdir(parents=True, exist_ok=True)
        self.airflow("db", "migrate")
        self.spawn(
            "api-server", ["api-server", "--host", HOST, "--port", str(self.api_port), "--workers", "1"]
        )
        self.spawn("scheduler", ["scheduler", "--skip-serve-logs"])
        self.spawn("dag-processor", ["dag-processor"])
        self._wait_for_api()

    def start_workers(self, workers: list[Worker]) -> None:
        for w in workers:
            w.state_dir.mkdir(parents=True, exist_ok=True)
            args = ["celery", "worker", "--concurrency", "1", "--skip-serve-logs"]
            args += ["--celery-hostname", f"{w.name}@{socket.gethostname()}", "--without-gossip"]
            self.spawn(w.name, args, **w.env, HQA_WORKER_NAME=w.name, HQA_STATE_DIR=str(w.state_dir))
        self._wait_for_workers([w.name for w in workers])

    def stop(self, names: list[str] | None = None) -> None:
        """SIGTERM each component's process group (a Celery worker finishes its task first), then SIGKILL."""
        chosen = [n for n in (names or list(self.processes)) if n in self.processes]
        for name in chosen:
            _signal_group(self.processes[name], signal.SIGTERM)
        deadline = time.monotonic() + 30
        for name in chosen:
            process = self.processes.pop(name)
            try:
                process.wait(timeout=max(0.1, deadline - time.monotonic()))
            except subprocess.TimeoutExpired:
                _signal_group(process, signal.SIGKILL)
                process.wait()

    def _check_alive(self) -> None:
        for name, process in self.processes.items():
            if process.poll() is not None:
                raise ClusterError(f"{name} exited with {process.returncode}:\n{self.log_tail(name)}")

    def _wait_for_api(self) -> None:
        deadline = time.monotonic() + COMPONENT_START_S
        while time.monotonic() < deadline:
            self._check_alive()
            with socket.socket() as s:
                if s.connect_ex((HOST, self.api_port)) == 0:
                    return
            time.sleep(1)
        raise ClusterError(f"the API server did not listen within {COMPONENT_START_S:.0f} s")

    def _wait_for_workers(self, names: list[str]) -> None:
        """Until each worker's log says it is ready (Celery writes 'ready.' when it consumes)."""
        deadline = time.monotonic() + COMPONENT_START_S
        while time.monotonic() < deadline:
            self._check_alive()
            if all("ready." in self.log_tail(n, 100_000) for n in names):
                return
            time.sleep(1)
        raise ClusterError(f"workers {names} not ready within {COMPONENT_START_S:.0f} s")

    # --- the run -----------------------------------------------------------------------------------
    def query(self, sql: str, *args: object) -> list[tuple]:
        import psycopg2

        assert self.services.postgres is not None
        con = psycopg2.connect(host=HOST, port=self.services.postgres.port, user="hqa", dbname=PG_DB)
        try:
            with con.cursor() as cur:
                cur.execute(sql, args)
                return cur.fetchall()
        finally:
            con.close()

    def wait_for_dag(self, timeout: float = COMPONENT_START_S) -> None:
        """Until the DAG processor has parsed the DAG into the metadata DB (it can then be triggered)."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            if self.query("SELECT 1 FROM serialized_dag WHERE dag_id = %s", DAG_ID):
                return
            time.sleep(2)
        raise ClusterError(f"{DAG_ID} not parsed within {timeout:.0f} s:\n{self.log_tail('dag-processor')}")

    def trigger(self, run_id: str, conf: str = "{}") -> None:
        self.airflow("dags", "trigger", DAG_ID, "--run-id", run_id, "--conf", conf)

    def wait_for_run(self, run_id: str, timeout: float) -> str:
        """The run's final state ('success' or 'failed')."""
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            self._check_alive()
            rows = self.query("SELECT state FROM dag_run WHERE dag_id = %s AND run_id = %s", DAG_ID, run_id)
            if rows and rows[0][0] in {"success", "failed"}:
                return rows[0][0]
            time.sleep(2)
        raise ClusterError(f"run {run_id} not finished within {timeout:.0f} s:\n{self.log_tail('scheduler')}")

    def task_instances(self, run_id: str) -> list[dict]:
        """Every task instance of the run: task, map index, state, the host (worker) that ran it, tries."""
        rows = self.query(
            "SELECT task_id, map_index, state, hostname, try_number FROM task_instance "
            "WHERE dag_id = %s AND run_id = %s ORDER BY task_id, map_index",
            DAG_ID,
            run_id,
        )
        keys = ("task_id", "map_index", "state", "hostname", "try_number")
        return [dict(zip(keys, row, strict=True)) for row in rows]

    def task_log(self, run_id: str, task_id: str, map_index: int = -1) -> str:
        """A task's log text (the workers write them under the shared ``AIRFLOW_HOME/logs``)."""
        folder = self.home / "logs" / f"dag_id={DAG_ID}" / f"run_id={run_id}" / f"task_id={task_id}"
        if map_index >= 0:
            folder = folder / f"map_index={map_index}"
        return "\n".join(p.read_text(errors="replace") for p in sorted(folder.glob("attempt=*.log")))


def _signal_group(process: subprocess.Popen, sig: int) -> None:
    if process.poll() is None:
        with contextlib.suppress(ProcessLookupError):
            os.killpg(process.pid, sig)  # the group this module started, by its leader's id
