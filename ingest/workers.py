"""The process pool the ingest readers parse in: parsing is CPU-bound and holds the GIL.

How many processes is the caller's decision, passed down as a plain number: under Airflow a task runs
in a slot of a worker that runs other tasks beside it, so only the caller (the settings of that worker,
the DAG run's params) knows how many cores this task may take. Nothing here asks the machine.
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.pool import Pool

PRELOAD = ["ingest.forkserver_boot", "ingest.wikipedia.ingest", "ingest.wikidata.ingest", "ingest.ottqa"]


def worker_pool(workers: int) -> Pool | None:
    """A pool of ``workers`` processes, or None (1) to work in-process.

    Workers come from a fork server, not a fork of this process: the caller may be an Airflow
    task or hold LanceDB, torch or reader threads, and forking a threaded process can deadlock the
    child. The server starts once per process with the parser modules preloaded, so later pools
    start fast, and its children do not run the caller's ``__main__`` again (``ingest.forkserver_boot``):
    they need only the parser modules, whatever script or CLI started the pool.
    """
    if workers < 1:
        raise ValueError(
            f"workers must be >= 1 (parser processes of this task), got {workers}: "
            "let the settings size it (HQA_WORKERS=0 means the cores this process may use)"
        )
    if workers == 1:
        return None
    context = mp.get_context("forkserver")
    context.set_forkserver_preload(PRELOAD)
    return context.Pool(workers)
