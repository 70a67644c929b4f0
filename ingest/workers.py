"""The process pool the ingest readers parse in: parsing is CPU-bound and holds the GIL."""

from __future__ import annotations

import multiprocessing as mp
import os
from multiprocessing.pool import Pool

PRELOAD = ["ingest.wikipedia.ingest", "ingest.wikidata.ingest"]


def worker_pool(workers: int) -> Pool | None:
    """A pool of ``workers`` processes (0 = one per core), or None to work in-process.

    Workers come from a fork server, not a fork of this process: the caller may be an Airflow
    task or hold LanceDB, torch or reader threads, and forking a threaded process can deadlock the
    child. The server starts once per process with the parser modules preloaded, so later pools
    start fast.
    """
    if workers < 0:
        raise ValueError(f"workers must be >= 0, got {workers}")
    count = workers or os.cpu_count() or 1
    if count == 1:
        return None
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context.Pool(count)
