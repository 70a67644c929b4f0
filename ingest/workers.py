"""The process pool the ingest readers parse in: parsing is CPU-bound and holds the GIL.

How many processes is the caller's decision, passed down as a plain number: under Airflow a task runs
in a slot of a worker that runs other tasks beside it, so only the caller (the settings of that worker,
the DAG run's params) knows how many cores this task may take. Nothing here asks the machine.
"""

from __future__ import annotations

import multiprocessing as mp
from multiprocessing.pool import Pool

PRELOAD = [
    "ingest.forkserver_boot",
    "ingest.wikipedia.ingest",
    "ingest.wikidata.ingest",
    "ingest.ottqa",
    "pyarrow.compute",
    "numpy.ma",
]
"""Modules the fork server imports once, so that every worker it forks has them. The last two are imported
lazily, on first use, by pyarrow itself: ``pyarrow.compute`` by ``ListArray.flatten`` (which checks a
batch's nested nulls), where it builds its ~300 function wrappers from their docstrings, and ``numpy.ma``
by ``pa.array``. Each worker of each pool paid that in its first batch, 0.3-0.5 s on a loaded machine: a
fifth of a 2-worker run over the 52 MB Wikidata benchmark dump."""


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
