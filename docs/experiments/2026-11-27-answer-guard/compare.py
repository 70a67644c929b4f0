"""Exact match (OTT-QA's normalization: lower case, no punctuation or articles) and answered share of two
runs of ``ask_ottqa_sample.py``, and every question whose answer changed.

    python docs/experiments/2026-11-27-answer-guard/compare.py BEFORE.jsonl AFTER.jsonl
"""

from __future__ import annotations

import json
import re
import string
import sys


def norm(text: str) -> str:
    text = "".join(c for c in text.lower() if c not in string.punctuation)
    return " ".join(re.sub(r"\b(a|an|the)\b", " ", text).split())


def right(row: dict) -> bool:
    return not row["unknown"] and norm(row["answer"]) == norm(row["gold"])


def _rows(path: str) -> dict[str, dict]:
    with open(path) as f:
        return {r["id"]: r for r in map(json.loads, f)}


def main(before_path: str, after_path: str) -> None:
    before, after = _rows(before_path), _rows(after_path)
    ids = [i for i in after if i in before]
    print(f"questions {len(ids)}")
    for name, rows in (("before", before), ("after", after)):
        em = sum(right(rows[i]) for i in ids)
        answered = sum(not rows[i]["unknown"] for i in ids)
        print(f"{name}: EM {em}/{len(ids)}, answered {answered}/{len(ids)}")
    for i in ids:
        if after[i]["answer"] != before[i]["answer"]:
            why = after[i]["why"][-1][-160:] if after[i]["why"] else ""
            print(f"- {i} [{after[i]['mode']}] {before[i]['answer']!r} -> {after[i]['answer']!r} (gold "
                  f"{after[i]['gold']!r}) {why}")  # fmt: skip


if __name__ == "__main__":
    main(*sys.argv[1:3])
