"""A cap on glibc's malloc arenas for a long-lived server that re-opens its index again and again.

glibc gives threads arenas of their own, up to 8 per core. A server that follows ``current`` opens each
new version's parts (Tantivy, LanceDB, Kùzu, DuckDB) on whichever threads run then, and frees the older
version's on others; the freed memory stays in the arena that held it, in pieces the next version's
allocations, made in other arenas, do not reuse. Measured in process on the sample index over 15 switches
(``benchmarks/results/serve/switch_memory/``): every retired engine was collected and glibc's bytes in
use stayed at 163 MB, but its freed-and-kept bytes grew from 191 to 305 MB and RSS by 4.7 MB a switch;
``malloc_trim`` after each switch still left 3.2 MB a switch. With two arenas RSS stayed between 767 and
822 MB with no trend. The cap must be set before the threads that would make more arenas start, so
``hqa serve`` sets it first thing; ``MALLOC_ARENA_MAX`` in the environment, when set, is glibc's own and
wins.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import logging
import os
import platform

log = logging.getLogger(__name__)

M_ARENA_MAX = -8  # glibc's mallopt parameter number (malloc.h)
ENV = "MALLOC_ARENA_MAX"


def cap_malloc_arenas(arenas: int) -> bool:
    """Cap glibc's arenas at ``arenas`` for the rest of the process; ``arenas`` 0 leaves glibc's default.
    False, and nothing changed, where the C library is not glibc or ``MALLOC_ARENA_MAX`` is set."""
    if arenas < 0:
        raise ValueError(f"arenas must be 0 (glibc's default) or more, got {arenas}")
    if arenas == 0 or ENV in os.environ or platform.libc_ver()[0] != "glibc":
        return False
    libc = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
    if libc.mallopt(M_ARENA_MAX, arenas) != 1:
        log.warning("glibc refused mallopt(M_ARENA_MAX, %d): the arenas stay uncapped", arenas)
        return False
    return True
