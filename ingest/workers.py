"""The process pool the ingest readers parse in: parsing is CPU-bound and holds the GIL."""

from __future__ import annotations

import multiprocessing as mp
import os
from multiprocessing.pool import Pool


def worker_pool(workers: int) -> Pool | None:
    """A pool of ``workers`` processes (0 = one per core), or None to work in-process.

    Call it before any reader thread starts: the pool forks, and a fork copies no thread.
    """
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    count = workers or os.cpu_count() or 1
    return mp.get_context("fork").Pool(count) if count > 1 else None
