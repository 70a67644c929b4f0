"""Give memory a finished phase freed back to the operating system, before the next phase grows.

Freed memory is not returned by itself: glibc keeps freed chunks in its arenas for reuse, and Arrow's
allocator keeps its pool. A build stage made of phases of different engines (DuckDB writes Parquet,
then Kùzu loads it) otherwise carries the first phase's high-water mark under the second one: the graph
stage at 1M entities still held 824 MB of RSS after its DuckDB connection was closed and Arrow's pool
released, and the Kùzu load then grew on top of it (benchmarks/results/scale/graph_memory.md); the
vectors stage's ANN build started at 880 MB where the process had 290 MB of its own
(benchmarks/results/scale/vectors_memory.md).
"""

from __future__ import annotations

import ctypes
import ctypes.util
import gc

import pyarrow as pa

_LIBC: ctypes.CDLL | None = ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6")
if not hasattr(_LIBC, "malloc_trim"):  # not glibc (musl, macOS): nothing to trim
    _LIBC = None


def release_heap() -> None:
    """Collect garbage, release Arrow's unused pool memory and trim glibc's heap (``malloc_trim(0)``
    returns free pages of every arena, not only the top of the main heap); a no-op beyond collection
    where the C library is not glibc."""
    gc.collect()
    pa.default_memory_pool().release_unused()
    if _LIBC is not None:
        _LIBC.malloc_trim(0)
