"""The rebuild DAG on a localhost CeleryExecutor cluster against the in-process build of the samples.

    python benchmarks/scale/celery_run.py [--out benchmarks/results/scale/celery.json]

First ``hqa build --samples`` in a state folder of its own, then PostgreSQL, Redis, Airflow's API server,
scheduler, DAG processor and two Celery workers (concurrency 1, one shared state folder) on 127.0.0.1
(``tests.cluster``), the DAG triggered with ``airflow dags trigger``. ``wall_s`` is trigger to the run's
end; ``workers`` counts the task instances each worker ran; ``identical_to_in_process`` compares the
published manifests' counts and stage fingerprints. Both builds embed with the same model and a copy of
the same embedding cache (so both reuse every vector and neither measures embedding).
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import signal
import subprocess
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

from index.versions import VersionStore  # noqa: E402
from tests.cluster import Cluster, Worker  # noqa: E402
from tests.services import running  # noqa: E402

DEFAULT_OUT = REPO / "benchmarks" / "results" / "scale" / "celery.json"


def _load() -> str:
    return " ".join(Path("/proc/loadavg").read_text().split()[:3])


def in_process_build(state: Path, env: dict[str, str]) -> float:
    started = time.perf_counter()
    subprocess.run(
        [sys.executable, "-m", "query.cli", "build", "--samples"],
        env={**env, "HQA_STATE_DIR": str(state)},
        check=True,
        stdout=subprocess.DEVNULL,
        cwd=REPO,
    )
    return time.perf_counter() - started


def _identity(state: Path) -> dict:
    store = VersionStore(state / "indexes")
    manifest = store.manifest(store.current())
    return {"counts": manifest.counts, "fingerprints": {n: s.fingerprint for n, s in manifest.stages.items()}}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--out", type=Path, default=DEFAULT_OUT)
    parser.add_argument("--root", type=Path, default=REPO / ".state" / "celery-bench")
    parser.add_argument("--embedding-model", default="wordllama-l2-256")
    parser.add_argument(
        "--embedding-cache",
        type=Path,
        default=Path(os.environ.get("HQA_EMBEDDING_CACHE", REPO / ".state/embeddings")),
    )
    args = parser.parse_args(argv)
    signal.signal(signal.SIGTERM, lambda *_: sys.exit(1))  # a kill stops the cluster and the services too
    shutil.rmtree(args.root, ignore_errors=True)
    args.root.mkdir(parents=True)
    cache = args.root / "embeddings"
    if args.embedding_cache.is_dir():
        shutil.copytree(args.embedding_cache, cache)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HQA_PROGRESS": "0",
        "HQA_EMBEDDING_CACHE": str(cache),
        "HQA_INDEX__EMBEDDING_MODEL": args.embedding_model,
    }
    load_before = _load()
    in_process_s = in_process_build(args.root / "in-process", env)
    cluster_env = {k: env[k] for k in ("HQA_EMBEDDING_CACHE", "HQA_INDEX__EMBEDDING_MODEL")}
    shared = args.root / "shared-state"
    with running(args.root / "services") as services:
        cluster = Cluster(home=args.root / "airflow", services=services, extra_env=cluster_env)
        try:
            started = time.perf_counter()
            cluster.start()
            cluster.wait_for_dag()
            cluster.start_workers([Worker("worker-1", shared), Worker("worker-2", shared)])
            startup_s = time.perf_counter() - started
            run_id = "manual__celery-benchmark"
            triggered = time.perf_counter()
            cluster.trigger(run_id)
            state = cluster.wait_for_run(run_id, 3600)
            wall_s = time.perf_counter() - triggered
            tis = cluster.task_instances(run_id)
        finally:
            cluster.stop()
    identical = state == "success" and _identity(shared) == _identity(args.root / "in-process")
    result = {
        "workers": dict(sorted(Counter(t["hostname"] for t in tis if t["hostname"]).items())),
        "wall_s": round(wall_s, 1),
        "identical_to_in_process": identical,
        "run_state": state,
        "in_process_wall_s": round(in_process_s, 1),
        "cluster_startup_s": round(startup_s, 1),
        "tasks": [
            {k: t[k] for k in ("task_id", "map_index", "hostname", "try_number", "state")} for t in tis
        ],
        "embedding_model": args.embedding_model,
        "load_average_before": load_before,
        "load_average_after": _load(),
        "command": "python benchmarks/scale/celery_run.py " + " ".join(argv or sys.argv[1:]),
    }
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text(json.dumps(result, indent=2) + "\n")
    print(json.dumps({k: result[k] for k in ("workers", "wall_s", "identical_to_in_process", "run_state")}))
    return 0 if identical else 1


if __name__ == "__main__":
    sys.exit(main())
