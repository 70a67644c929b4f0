"""The fuzzing job from the command line: every boundary (or those named), a report in Markdown and JSON.

python -m tests.fuzz [--inputs 10000] [--seed 1] [--boundary NAME ...] [--out benchmarks/results/fuzz]
python -m tests.fuzz --replay NAME INDEX [--seed 1]     # print one generated input
"""

from __future__ import annotations

import argparse
import logging
import os
import shlex
import sys
import tempfile
import time
from collections.abc import Callable
from pathlib import Path

from tests.conftest import REPO
from tests.fuzz.boundaries import BOUNDARIES
from tests.fuzz.harness import input_rng, run_boundary
from tests.fuzz.report import write_report


def fuzz(names: list[str], inputs: int, seed: int, work: Path, log: Callable[[str], None] = print) -> dict:
    reports = []
    for name in names:
        started = time.perf_counter()
        boundary = BOUNDARIES[name](work)
        setup = time.perf_counter() - started
        report = run_boundary(boundary, inputs, seed)
        reports.append(report)
        log(
            f"{name:10s} {report.inputs:6d} inputs {report.parsed:6d} parsed {report.rejected:6d} rejected "
            f"{report.skipped:5d} skipped  {report.crashes} crashes  {report.violations} violations  "
            f"{report.slow} slow  {report.seconds:7.1f} s (+{setup:.1f} s setup)"
        )
    return {"seed": seed, "inputs_per_boundary": inputs, "boundaries": [r.as_dict() for r in reports]}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="generated inputs per boundary")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--boundary", nargs="+", choices=list(BOUNDARIES), default=list(BOUNDARIES))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "fuzz")
    parser.add_argument("--replay", nargs=2, metavar=("NAME", "INDEX"), help="print one input and exit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # readers warn about every bad record: that is the point here
    os.environ.setdefault("HQA_PROGRESS", "0")
    with tempfile.TemporaryDirectory(prefix="hqa-fuzz-") as tmp:
        if args.replay:
            name, index = args.replay[0], int(args.replay[1])
            item = BOUNDARIES[name](Path(tmp)).generate(input_rng(args.seed, name, index), index)
            how = ", ".join(item.mutations)
            print(f"# {name} input {index} (seed {args.seed}) from {item.seed_name} by {how}")
            sys.stdout.buffer.write(item.data + b"\n")
            return 0
        result = fuzz(args.boundary, args.inputs, args.seed, Path(tmp))
    from query.evaluation.machine import machine

    command = shlex.join(["python", "-m", "tests.fuzz", *(sys.argv[1:] if argv is None else argv)])
    result = {"command": command, "machine": machine(), **result}
    write_report(result, args.out)
    failed = sum(b["crashes"] + b["violations"] for b in result["boundaries"])
    print(f"wrote {args.out / 'report.md'}; {failed} crashes and violations")
    return 1 if failed else 0
