"""Loaded into the fork server the parser pools start from, so that their workers skip the caller's main.

A child of a fork server (or of ``spawn``) normally runs the parent's ``__main__`` script again, as
``__mp_main__``, before it unpickles its task: that is how it finds functions defined in a script. The
parser workers only ever run functions of importable ``ingest`` modules, and running the caller's script
again is pure cost, paid by every worker of every pool: the ``hqa`` CLI imports the query engine (5 s per
worker on a loaded 2-core machine), ``benchmarks/build.py`` every index backend (~10 s per worker, which
made a 4 s ingest take 17 s). Python 3.11's own remedy, ``'__main__'`` in the fork server's preload list,
is never given the main path there (fixed in later Pythons), so it does nothing.

Importing this module in the fork server (``ingest.workers`` preloads it) makes the children it forks
prepare themselves without the main-module step; everything else (``sys.path``, working directory,
process name, authkey) is prepared as before. Imported anywhere else it changes nothing that runs:
``prepare`` is only called while a child process starts, before this module could be imported there.
"""

from __future__ import annotations

from multiprocessing import spawn
from typing import Any

MAIN_KEYS = ("init_main_from_name", "init_main_from_path")
_prepare = spawn.prepare


def prepare_without_main(data: dict[str, Any]) -> None:
    """``multiprocessing.spawn.prepare`` minus re-running the parent's ``__main__``."""
    _prepare({key: value for key, value in data.items() if key not in MAIN_KEYS})


if spawn.prepare is not prepare_without_main:
    spawn.prepare = prepare_without_main
