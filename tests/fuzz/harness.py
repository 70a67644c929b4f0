"""The harness: inputs, findings, the per-boundary report, time limits, and the loop that runs a boundary.

An exception out of a boundary is a crash (a whole-file batch is then replayed record by record to name the
input that caused it); anything else that breaks the property (a good record lost or changed, a mutated
record gone without trace, an error without its position or file) is a violation. A call still running
after ``INPUT_SECONDS`` is stopped and its input reported as slow. Input ``i`` of a boundary is drawn from
``random.Random(f"{seed}:{boundary}:{i}")`` alone, so any input is replayed from its index.
"""

from __future__ import annotations

import random
import signal
import time
import traceback
from collections import Counter
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

EXCERPT = 300


@dataclass
class FuzzInput:
    index: int
    seed_name: str
    mutations: list[str]
    data: bytes


@dataclass
class Finding:
    """A crash (an exception out of the boundary) or a violation of the property, with what reproduces it."""

    kind: str  # "crash", "violation" or "slow"
    index: int | None
    message: str
    mutations: list[str] = field(default_factory=list)
    seed_name: str = ""
    excerpt: str = ""

    @classmethod
    def of(cls, kind: str, item: FuzzInput | None, message: str) -> Finding:
        if item is None:
            return cls(kind, None, message)
        return cls(kind, item.index, message, item.mutations, item.seed_name, repr(item.data[:EXCERPT]))


@dataclass
class BoundaryReport:
    boundary: str
    inputs: int = 0
    parsed: int = 0
    rejected: int = 0
    skipped: int = 0
    good_records_checked: int = 0
    calls: int = 0
    seconds: float = 0.0
    slowest_call_seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)  # why inputs were skipped, or counted unusually

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.reasons[f"skipped: {reason}"] += 1

    @property
    def slow(self) -> int:
        return sum(1 for f in self.findings if f.kind == "slow")

    @property
    def crashes(self) -> int:
        return sum(1 for f in self.findings if f.kind == "crash")

    @property
    def violations(self) -> int:
        return sum(1 for f in self.findings if f.kind == "violation")

    def count(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "boundary": self.boundary,
            "inputs": self.inputs,
            "parsed": self.parsed,
            "quarantined_or_rejected": self.rejected,
            "skipped": self.skipped,
            "reasons": dict(self.reasons),
            "crashes": self.crashes,
            "violations": self.violations,
            "slow": self.slow,
            "good_records_checked": self.good_records_checked,
            "calls": self.calls,
            "seconds": round(self.seconds, 1),
            "slowest_call_seconds": round(self.slowest_call_seconds, 2),
            "findings": [f.__dict__ for f in self.findings[:50]],
        }


# Some inputs take minutes (the wikitext parsers are quadratic on long runs of unclosed tables, refs and
# comments): a call is interrupted after this long and its input reported as slow, so the job ends.
INPUT_SECONDS = 20.0
BATCH_SECONDS = 60.0


class CallTimeout(BaseException):
    """Raised in the main thread when a call outlives its time limit (a BaseException: parsers that catch
    every Exception must not swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` with ``CallTimeout`` (SIGALRM; main thread only)."""

    def expire(signum: int, frame: object) -> None:
        raise CallTimeout(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()[:500]


def input_rng(seed: int, boundary: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{boundary}:{index}")


class Boundary:
    """One parser boundary: seeds, a generator of mutated inputs, and a runner that checks a batch of them."""

    name = ""
    batch = 1

    def __init__(self, work: Path):
        self.work = work

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        raise NotImplementedError

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        raise NotImplementedError


def run_boundary(boundary: Boundary, inputs: int, seed: int, *, start: int = 0) -> BoundaryReport:
    """Generate ``inputs`` inputs of one boundary (indexes ``start`` on) and check them batch by batch."""
    report = BoundaryReport(boundary.name)
    started = time.perf_counter()
    for first in range(start, start + inputs, boundary.batch):
        indexes = range(first, min(first + boundary.batch, start + inputs))
        items = [boundary.generate(input_rng(seed, boundary.name, i), i) for i in indexes]
        call_start = time.perf_counter()
        boundary.run_batch(items, report)
        report.slowest_call_seconds = max(report.slowest_call_seconds, time.perf_counter() - call_start)
        report.inputs += len(items)
    report.seconds = time.perf_counter() - started
    return report


class RecordBoundary(Boundary):
    """A boundary called on a file of many records: a crash (or a hang) of the call is pinned on its record by
    replaying the batch one record at a time, among the same good records."""

    def call(self, items: list[FuzzInput]) -> Any:
        raise NotImplementedError

    def account(self, items: list[FuzzInput], result: Any, report: BoundaryReport) -> None:
        raise NotImplementedError

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        self.run_group(items, report)

    def run_group(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        report.calls += 1
        try:
            with time_limit(BATCH_SECONDS):
                result = self.call(items)
        except (Exception, CallTimeout) as exc:
            if len(items) == 1:
                report.add(
                    Finding.of("slow" if isinstance(exc, CallTimeout) else "crash", items[0], last_line(exc))
                )
                return
            blamed = False
            for item in items:
                report.calls += 1
                try:
                    with time_limit(INPUT_SECONDS):
                        result = self.call([item])
                except CallTimeout as slow:
                    report.add(Finding.of("slow", item, last_line(slow)))
                    blamed = True
                except Exception as solo:
                    report.add(Finding.of("crash", item, last_line(solo)))
                    blamed = True
                else:
                    self.account([item], result, report)
            if not blamed:
                span = f"inputs {items[0].index}..{items[-1].index} together"
                report.add(Finding.of("crash", None, f"{span}: {last_line(exc)}"))
            return
        self.account(items, result, report)


def interleave(rng: random.Random, mutated: list[Any], good: list[Any]) -> list[tuple[str, int]]:
    """Good and mutated records in one random order: ("good", i) / ("mut", k), each list keeping its order."""
    slots = [("mut", k) for k in range(len(mutated))] + [("good", i) for i in range(len(good))]
    rng.shuffle(slots)
    order = {"mut": iter(range(len(mutated))), "good": iter(range(len(good)))}
    return [(kind, next(order[kind])) for kind, _ in slots]


def read_tables(paths: dict[str, str]) -> dict[str, list[dict]]:
    import pyarrow.parquet as pq

    return {table: pq.read_table(path).to_pylist() for table, path in paths.items()}
