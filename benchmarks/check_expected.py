"""Check a full run of the regression matrix: does a report reproduce an entry's figures?

    .venv/bin/python benchmarks/check_expected.py                    # every full entry, committed report
    .venv/bin/python benchmarks/check_expected.py --entry ottqa-dev-full --report OUT/report.json

Re-run an entry's command (``benchmarks/expected.yaml``) with ``--out OUT``, then pass the new report:
every expected figure must lie within the entry's tolerance. Exits 1 on a miss.
"""

from __future__ import annotations

import argparse
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from query.evaluation import read_report  # noqa: E402
from query.evaluation.expected import ExpectedMatrix, misses  # noqa: E402


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--matrix", type=Path, default=REPO / "benchmarks" / "expected.yaml")
    parser.add_argument("--entry", help="one entry by name (default: every full entry)")
    parser.add_argument("--report", type=Path, help="report.json of a re-run (default: the committed one)")
    args = parser.parse_args()

    matrix = ExpectedMatrix.load(args.matrix)
    entries = [matrix.entry(args.entry)] if args.entry else matrix.full
    failed = 0
    for entry in entries:
        path = args.report or (REPO / entry.report if entry.report else None)
        if path is None:
            print(f"{entry.name}: no report given and none committed")
            failed += 1
            continue
        found = misses(read_report(path), entry)
        figures = sum(len(f) for f in entry.expected.values())
        print(f"{entry.name}: {figures - len(found)}/{figures} figures within ±{entry.tolerance} ({path})")
        for miss in found:
            print(f"  MISS {miss}")
        failed += bool(found)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
