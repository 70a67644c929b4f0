"""Run one command as a fresh process and measure it: wall and CPU seconds, peak memory, with caps.

Memory is measured two ways, because a step may fork parser or embedding workers:
- ``peak_rss_mb``: the largest sum of resident memory over the process and all its descendants,
  sampled every ``sample_seconds`` with psutil (what a worker slot must hold; pages shared after a
  fork count once per process, so it errs high);
- ``max_process_rss_mb``: ``ru_maxrss`` of the child from ``os.wait4``, the largest single process
  of the tree, exact however short the peak (the kernel keeps it).
The peak reported is the larger of the two. CPU seconds likewise: ``wait4`` counts the child and the
children it reaped, but not workers of a fork server (the ingest's parser pool), which the child
never waits for; the sampled CPU of every process seen in the tree counts those (missing at most the
last interval of each), and the larger of the two is reported.

A process tree that passes ``max_rss_mb`` or runs past ``deadline`` is killed (its own session, started
here, so nothing else is touched) and the result says so: the machine is shared, and a stage that
blows memory is a finding, not a reason to swap.
"""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Literal

import psutil
from pydantic import BaseModel

Status = Literal["ok", "failed", "killed_memory", "killed_time"]


class Measured(BaseModel):
    status: Status
    returncode: int | None
    seconds: float
    cpu_seconds: float
    peak_rss_mb: float
    max_process_rss_mb: float
    sampled_rss_mb: float
    load_after: float


def _sample_tree(root: psutil.Process, cpu: dict[int, float]) -> int:
    """The summed RSS of ``root`` and its descendants now; ``cpu`` gets each one's CPU seconds so far."""
    total = 0
    try:
        processes = [root, *root.children(recursive=True)]
    except psutil.NoSuchProcess:
        return 0
    for process in processes:
        try:
            with process.oneshot():
                total += process.memory_info().rss
                times = process.cpu_times()
        except psutil.NoSuchProcess:  # ended between listing and reading
            continue
        cpu[process.pid] = times.user + times.system
    return total


def run_measured(
    cmd: list[str],
    env: dict[str, str],
    log_path: Path,
    *,
    max_rss_mb: float | None = None,
    deadline: float | None = None,
    sample_seconds: float = 0.2,
) -> Measured:
    """Run ``cmd`` to its end (or its kill), output appended to ``log_path``; ``deadline``: a
    ``time.monotonic()`` instant."""
    started = time.perf_counter()
    peak, status, cpu = 0, "ok", {}
    with open(log_path, "ab") as log:
        proc = subprocess.Popen(cmd, env=env, stdout=log, stderr=subprocess.STDOUT, start_new_session=True)
        root = psutil.Process(proc.pid)
        while True:
            pid, wait_status, usage = os.wait4(proc.pid, os.WNOHANG)
            if pid:
                break
            peak = max(peak, _sample_tree(root, cpu))
            over_memory = max_rss_mb is not None and peak > max_rss_mb * 2**20
            over_time = deadline is not None and time.monotonic() > deadline
            if over_memory or over_time:
                status = "killed_memory" if over_memory else "killed_time"
                os.killpg(proc.pid, signal.SIGKILL)  # the session started above: this step's tree only
                pid, wait_status, usage = os.wait4(proc.pid, 0)
                break
            time.sleep(sample_seconds)
    proc.returncode = os.waitstatus_to_exitcode(wait_status)  # reaped here; Popen must not wait again
    if status == "ok" and proc.returncode != 0:
        status = "failed"
    single = usage.ru_maxrss / 1024
    sampled = peak / 2**20
    return Measured(
        status=status,
        returncode=proc.returncode,
        seconds=round(time.perf_counter() - started, 3),
        cpu_seconds=round(max(usage.ru_utime + usage.ru_stime, sum(cpu.values())), 3),
        peak_rss_mb=round(max(single, sampled), 1),
        max_process_rss_mb=round(single, 1),
        sampled_rss_mb=round(sampled, 1),
        load_after=round(os.getloadavg()[0], 2),
    )
