"""Admission: a bounded queue in front of each kind of work, so a burst waits a bounded time or is told
to come back, never piles up.

The LLM is one single-flight resource that takes seconds a question on 2 cores; the candidate reader
takes milliseconds. Each ``Lane`` has ``slots`` worker threads of its own and at most ``queue`` requests
waiting for one: the next request gets ``QueueFull`` (429 with ``Retry-After``, or the fallback) at once.
A request that waits past its deadline, or whose client goes away while it waits, leaves the queue. One
already running cannot be interrupted (llama.cpp evaluates a call to its end): the caller stops waiting
for it, and its slot is freed when its thread finishes, never before — so the slots never overcommit.
"""

from __future__ import annotations

import asyncio
import math
import time
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from typing import TypeVar

T = TypeVar("T")

SMOOTHING = 0.2
"""Weight of the newest answer time in a lane's running mean (what ``Retry-After`` is estimated from)."""


class QueueFull(Exception):
    def __init__(self, lane: str, retry_after_s: float):
        super().__init__(f"the {lane} queue is full")
        self.lane, self.retry_after_s = lane, retry_after_s


class DeadlineExceeded(Exception):
    def __init__(self, lane: str, waited: str):
        super().__init__(f"the request's deadline passed while {waited} ({lane} lane)")
        self.lane = lane


@dataclass(frozen=True)
class Timing:
    queued_ms: float
    answer_ms: float


class Lane:
    """``slots`` threads and a waiting room of ``queue`` places, for one kind of work."""

    def __init__(self, name: str, slots: int, queue: int, first_guess_s: float):
        self.name, self.slots, self.queue = name, slots, queue
        self.waiting = 0
        self.running = 0
        self.mean_s = first_guess_s
        self._free = asyncio.Semaphore(slots)
        self._threads = ThreadPoolExecutor(max_workers=slots, thread_name_prefix=f"hqa-serve-{name}")

    def full(self) -> bool:
        return self._free.locked() and self.waiting >= self.queue

    def retry_after_s(self) -> float:
        """Seconds until a place is likely free: the queue ahead, at the lane's mean answer time."""
        return max(1.0, math.ceil(self.mean_s * (self.waiting + 1) / self.slots))

    async def run(self, work: Callable[[], T], deadline: float) -> tuple[T, Timing]:
        """``work()`` on one of this lane's threads; ``deadline`` is a ``time.monotonic()`` instant."""
        if self.full():
            raise QueueFull(self.name, self.retry_after_s())
        asked = time.monotonic()
        self.waiting += 1
        try:
            await asyncio.wait_for(self._free.acquire(), max(0.0, deadline - asked))
        except TimeoutError:
            raise DeadlineExceeded(self.name, "waiting in the queue") from None
        finally:
            self.waiting -= 1  # also when the caller was cancelled (its client went away)
        started = time.monotonic()
        self.running += 1
        future = asyncio.get_running_loop().run_in_executor(self._threads, work)
        future.add_done_callback(lambda _: self._finished(started))
        try:
            result = await asyncio.wait_for(asyncio.shield(future), max(0.0, deadline - started))
        except TimeoutError:
            raise DeadlineExceeded(self.name, "the engine answered") from None
        done = time.monotonic()
        return result, Timing(round((started - asked) * 1000, 3), round((done - started) * 1000, 3))

    def _finished(self, started: float) -> None:
        """The work's thread is done: only now is its slot free again."""
        self.running -= 1
        self.mean_s += SMOOTHING * ((time.monotonic() - started) - self.mean_s)
        self._free.release()

    def close(self) -> None:
        self._threads.shutdown(wait=True, cancel_futures=True)
