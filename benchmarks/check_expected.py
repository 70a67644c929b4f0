"""Check the regression matrix: does a report reproduce an entry's figures?

    .venv/bin/python benchmarks/check_expected.py                     # every entry, its committed report
    .venv/bin/python benchmarks/check_expected.py --entry ottqa-dev-full --report OUT/report.json

Re-run an entry's command (``benchmarks/expected.yaml``; ``OUT`` is the folder it writes to), then pass
the new report: every expected figure must lie within the entry's tolerance. Without ``--report`` each
entry is checked against the report committed with it (the test suite does that too, so the matrix and
the committed results cannot drift apart). Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # imported by path too (tests), not only run

from expected_figures import Figures, figures, program  # noqa: E402

from query.evaluation.expected import ExpectedEntry, ExpectedMatrix  # noqa: E402

MATRIX = REPO / "benchmarks" / "expected.yaml"
__all__ = ["MATRIX", "check", "figures", "misses", "program"]


def misses(entry: ExpectedEntry, found: Figures) -> list[str]:
    """Every expected figure ``found`` lacks or holds outside the tolerance (empty: the entry holds)."""
    out = []
    for config, expected in entry.expected.items():
        got = found.get(config)
        if got is None:
            out.append(f"{config}: not in the report")
            continue
        for metric, value in expected.items():
            if metric not in got:
                out.append(f"{config} {metric}: not in the report")
            elif not abs(got[metric] - value) <= entry.tolerance:  # NaN (no rows) misses too
                out.append(f"{config} {metric}: {got[metric]:.4g}, expected {value:.4g} ± {entry.tolerance}")
    return out


def check(entry: ExpectedEntry, report: Path) -> list[str]:
    if not report.is_file():
        return [f"no report at {report}"]
    return misses(entry, figures(entry, report))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matrix", type=Path, default=MATRIX)
    parser.add_argument("--entry", help="one entry by name (default: every entry with a committed report)")
    parser.add_argument("--report", type=Path, help="the report of a re-run (default: the committed one)")
    args = parser.parse_args(argv)

    matrix = ExpectedMatrix.load(args.matrix)
    entries = (
        [matrix.entry(args.entry)] if args.entry else [e for e in (*matrix.fast, *matrix.full) if e.report]
    )
    if args.report and not args.entry:
        parser.error("--report needs --entry: a report answers one entry")
    failed = 0
    for entry in entries:
        report = args.report or (REPO / entry.report if entry.report else None)
        if report is None:
            print(f"{entry.name}: no report given and none committed")
            failed += 1
            continue
        found = check(entry, report)
        count = sum(len(f) for f in entry.expected.values())
        print(f"{entry.name}: {count - len(found)}/{count} figures within ±{entry.tolerance} ({report})")
        for miss in found:
            print(f"  MISS {miss}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
