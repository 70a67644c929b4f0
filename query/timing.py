"""Per-stage milliseconds, the way every result reports them (``QueryResult.timings``)."""

from __future__ import annotations

import time
from collections.abc import Iterator
from contextlib import contextmanager


@contextmanager
def timed(timings: dict[str, float], stage: str) -> Iterator[None]:
    """Add the block's milliseconds to ``timings[stage]``: a stage that runs twice (fusion) sums."""
    started = time.perf_counter()
    try:
        yield
    finally:
        timings[stage] = timings.get(stage, 0.0) + (time.perf_counter() - started) * 1000
