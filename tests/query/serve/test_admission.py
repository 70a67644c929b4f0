"""The bounded lanes, with work held on purpose by an event: a full queue refuses at once, a deadline
takes the request out of the queue, a cancelled waiter (a client gone) leaves it, and a slot whose
request stopped waiting stays taken until its thread is really done."""

from __future__ import annotations

import asyncio
import threading
import time

import pytest

from query.serve.admission import DeadlineExceeded, Lane, QueueFull


def held(release: threading.Event, value: str = "done"):
    def work() -> str:
        assert release.wait(30), "the test never released the work"
        return value

    return work


async def until(condition, timeout: float = 5.0) -> None:
    stop = time.monotonic() + timeout
    while not condition():
        assert time.monotonic() < stop, "condition not reached"
        await asyncio.sleep(0.01)


def test_a_full_queue_refuses_at_once_with_a_retry_estimate() -> None:
    async def scenario() -> None:
        lane = Lane("llm", slots=1, queue=1, first_guess_s=4.0)
        release = threading.Event()
        far = time.monotonic() + 30
        running = asyncio.ensure_future(lane.run(held(release, "first"), far))
        await until(lambda: lane.running == 1)
        waiting = asyncio.ensure_future(lane.run(held(release, "second"), far))
        await until(lambda: lane.waiting == 1)
        assert lane.full()
        started = time.monotonic()
        with pytest.raises(QueueFull) as refused:
            await lane.run(held(release), far)
        assert time.monotonic() - started < 0.5
        assert refused.value.retry_after_s == 8  # two ahead (one answering, one waiting) at 4 s each
        release.set()
        assert [(await running)[0], (await waiting)[0]] == ["first", "second"]
        assert (lane.running, lane.waiting, lane.full()) == (0, 0, False)
        lane.close()

    asyncio.run(scenario())


def test_a_deadline_takes_a_waiter_out_of_the_queue() -> None:
    async def scenario() -> None:
        lane = Lane("llm", slots=1, queue=2, first_guess_s=1.0)
        release = threading.Event()
        running = asyncio.ensure_future(lane.run(held(release), time.monotonic() + 30))
        await until(lambda: lane.running == 1)
        with pytest.raises(DeadlineExceeded, match="waiting in the queue"):
            await lane.run(held(release), time.monotonic() + 0.2)
        assert lane.waiting == 0
        release.set()
        await running
        lane.close()

    asyncio.run(scenario())


def test_a_cancelled_waiter_frees_its_place() -> None:
    async def scenario() -> None:
        lane = Lane("llm", slots=1, queue=1, first_guess_s=1.0)
        release = threading.Event()
        far = time.monotonic() + 30
        running = asyncio.ensure_future(lane.run(held(release), far))
        await until(lambda: lane.running == 1)
        gone = asyncio.ensure_future(lane.run(held(release), far))
        await until(lambda: lane.waiting == 1)
        gone.cancel()  # what the server does when the client disconnects
        await until(lambda: lane.waiting == 0)
        assert not lane.full()
        release.set()
        await running
        lane.close()

    asyncio.run(scenario())


def test_a_slot_past_its_deadline_is_freed_only_when_its_thread_ends() -> None:
    async def scenario() -> None:
        lane = Lane("llm", slots=1, queue=0, first_guess_s=1.0)
        release = threading.Event()
        with pytest.raises(DeadlineExceeded, match="the engine answered"):
            await lane.run(held(release), time.monotonic() + 0.2)
        assert lane.running == 1 and lane.full()  # the thread still runs: the slot is not overcommitted
        with pytest.raises(QueueFull):
            await lane.run(held(release), time.monotonic() + 5)
        release.set()
        await until(lambda: lane.running == 0)
        assert (await lane.run(lambda: "next", time.monotonic() + 5))[0] == "next"
        lane.close()

    asyncio.run(scenario())
