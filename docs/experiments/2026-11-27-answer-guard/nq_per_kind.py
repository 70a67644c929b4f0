"""Exact match per kind and fold of one run of benchmarks/natural_questions/evaluate.py (its rows file).

python docs/experiments/2026-11-27-answer-guard/nq_per_kind.py ROWS.jsonl
"""

from __future__ import annotations

import json
import sys
from collections import defaultdict

KINDS = (
    "lookup",
    "lookup_year",
    "chain",
    "comparison",
    "count",
    "superlative",
    "yes_no",
    "unanswerable",
    "all",
)


def main(path: str) -> None:
    with open(path) as f:
        last = {r["id"]: r for r in map(json.loads, f)}  # a resumed run's last row of each question
    tally: dict[tuple[str, str], list[int]] = defaultdict(lambda: [0, 0])
    for r in last.values():
        for kind in (r["kind"], "all"):
            tally[(r["fold"], kind)][0] += r["right"]
            tally[(r["fold"], kind)][1] += 1
    print("| kind | tune | report |\n|---|---:|---:|")
    for kind in KINDS:
        cells = []
        for fold in ("tune", "report"):
            right, n = tally[(fold, kind)]
            cells.append(f"{100 * right / n:.1f} ({right}/{n})" if n else "-")
        print(f"| {kind} | {cells[0]} | {cells[1]} |")


if __name__ == "__main__":
    main(sys.argv[1])
