"""What every benchmark shares: best-of timing and the machine description printed with results."""

from __future__ import annotations

import os
import shlex
import subprocess
import sys
import time
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TypeVar

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from query.evaluation.machine import machine

__all__ = ["airflow_env", "best_of", "machine", "pct", "run_command", "timed_ms"]

T = TypeVar("T")


def best_of(repeat: int, fn: Callable[[], object]) -> tuple[float, object]:
    best, result = float("inf"), None
    for _ in range(repeat):
        start = time.perf_counter()
        result = fn()
        best = min(best, time.perf_counter() - start)
    return best, result


def pct(values: Iterable[float]) -> str:
    """The mean of 0/1 (or fractional) scores as a percentage with one decimal; "-" for none."""
    values = list(values)
    return f"{100 * sum(values) / len(values):.1f}" if values else "-"


def timed_ms(fn: Callable[[], T]) -> tuple[T, float]:
    """``fn()`` and the milliseconds it took (one run, wall clock)."""
    start = time.perf_counter()
    result = fn()
    return result, (time.perf_counter() - start) * 1000


def run_command(cmd: list[str], env: dict[str, str], cwd: Path) -> float:
    """Seconds ``cmd`` took; its output's tail in the error when it fails (a benchmark must not go on)."""
    started = time.perf_counter()
    done = subprocess.run(cmd, env=env, cwd=cwd, capture_output=True, text=True)
    if done.returncode != 0:
        raise RuntimeError(f"{shlex.join(cmd)} failed:\n{done.stdout[-3000:]}\n{done.stderr[-3000:]}")
    return time.perf_counter() - started


def airflow_env(work: Path, keep: int) -> dict[str, str]:
    """The environment of ``airflow dags test`` runs in ``work`` (a state folder, an Airflow home and an
    embedding cache of their own, offline, no bars), each publish keeping ``keep`` versions."""
    repo = Path(__file__).resolve().parents[1]
    cache = os.environ.get("HQA_EMBEDDING_CACHE") or str(work / "embeddings")
    return {
        **os.environ,
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
        "HQA_PROGRESS": "0",
        "HQA_EMBEDDING_CACHE": cache,
        "HQA_STATE_DIR": str(work / "state"),
        "HQA_INDEX__KEEP_VERSIONS": str(keep),
        "AIRFLOW_HOME": str(work / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(repo / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }
