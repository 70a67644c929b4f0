"""Compare two ``answers.py`` outputs line by line: every field but latency must agree.

    python docs/experiments/2026-11-26-rooms-refactor/compare.py BEFORE.jsonl AFTER.jsonl

Floats are compared to 1e-6 (they were rounded to six places when written); the exit code is the number
of questions that differ (0: identical).
"""

from __future__ import annotations

import json
import math
import sys
from collections import Counter


def same(a: object, b: object) -> bool:
    if isinstance(a, float) or isinstance(b, float):
        return isinstance(a, int | float) and isinstance(b, int | float) and math.isclose(a, b, abs_tol=1e-6)
    if isinstance(a, list) and isinstance(b, list):
        return len(a) == len(b) and all(same(x, y) for x, y in zip(a, b, strict=True))
    if isinstance(a, dict) and isinstance(b, dict):
        return a.keys() == b.keys() and all(same(a[k], b[k]) for k in a)
    return a == b


def main(before: str, after: str) -> int:
    def load(path: str) -> dict[tuple[str, str, str], dict]:
        with open(path, encoding="utf-8") as f:
            rows = [json.loads(line) for line in f]
        return {(r["config"], r["set"], r["id"]): r for r in rows}

    old, new = load(before), load(after)
    differ = 0
    per_config: Counter = Counter()
    for key in sorted(set(old) | set(new)):
        per_config[key[:2]] += 1
        a, b = old.get(key), new.get(key)
        if a is None or b is None or not same(a, b):
            differ += 1
            fields = [k for k in (a or b) if a is None or b is None or not same(a.get(k), b.get(k))]
            print(f"DIFFERS {key}: {fields}")
            for k in fields[:3]:
                print(f"   before {k}: {None if a is None else a.get(k)}")
                print(f"   after  {k}: {None if b is None else b.get(k)}")
    for (config, name), n in sorted(per_config.items()):
        print(f"{config:20s} {name:14s} {n:4d} questions")
    print(f"{len(set(old) | set(new))} question runs compared, {differ} differ")
    return differ


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:3]))
