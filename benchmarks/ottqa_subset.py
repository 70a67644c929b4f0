"""A seeded subset of the OTT-QA release: sampled dev questions, every one's gold table and the passages
its cells link to, plus a random remainder of other tables with their linked passages.

Why: embedding all 478k OTT-QA evidence rows with MiniLM takes ~1.5 h on 2 idle cores, too long to
compare three embedders on a shared machine. Keeping every sampled question's gold table and linked
passages keeps each question answerable; the random remainder keeps the distractors' mix of tables
and passages as in the release (a table comes with its linked passages, as OTT-QA's own tables do).

    python benchmarks/ottqa_subset.py /work/shared/data/bench/ottqa OUT --questions 400 --tables 1500

writes ``OUT/dev.json``, ``OUT/tables.json.gz``, ``OUT/passages.json.gz`` and ``OUT/subset.json`` (what
was kept, the seed and the command), a folder ``hqa build --ottqa OUT`` and ``hqa eval --questions OUT``
read like the release.
"""

from __future__ import annotations

import argparse
import gzip
import json
import random
import sys
from pathlib import Path


def linked_passages(table: dict) -> set[str]:
    """The passage keys (``/wiki/…``) a table's header and cells link to."""
    links: set[str] = set()
    for cell in table.get("header", []):
        links.update(cell[1])
    for row in table.get("data", []):
        for cell in row:
            links.update(cell[1])
    return links


def make_subset(release: Path, questions: int, extra_tables: int, seed: int) -> tuple[list, dict, dict]:
    rng = random.Random(seed)
    dev = json.loads((release / "dev.json").read_text())
    with gzip.open(release / "tables.json.gz", "rt") as f:
        tables = json.load(f)
    with gzip.open(release / "passages.json.gz", "rt") as f:
        passages = json.load(f)
    asked = rng.sample([q for q in dev if q["table_id"] in tables], questions)
    gold = sorted({q["table_id"] for q in asked})
    others = sorted(set(tables) - set(gold))
    kept_tables = gold + rng.sample(others, min(extra_tables, len(others)))
    kept = {t: tables[t] for t in kept_tables}
    links = set().union(*(linked_passages(t) for t in kept.values()))
    kept_passages = {k: passages[k] for k in sorted(links) if k in passages}
    return asked, kept, kept_passages


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("release", type=Path, help="OTT-QA release folder (dev.json, tables, passages)")
    parser.add_argument("out", type=Path)
    parser.add_argument("--questions", type=int, default=400, help="dev questions sampled")
    parser.add_argument("--tables", type=int, default=1500, help="random tables beyond the gold ones")
    parser.add_argument("--seed", type=int, default=34)
    args = parser.parse_args(argv)
    asked, tables, passages = make_subset(args.release, args.questions, args.tables, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dev.json").write_text(json.dumps(asked))
    with gzip.open(args.out / "tables.json.gz", "wt") as f:
        json.dump(tables, f)
    with gzip.open(args.out / "passages.json.gz", "wt") as f:
        json.dump(passages, f)
    summary = {
        "command": "python benchmarks/ottqa_subset.py " + " ".join(sys.argv[1:] if argv is None else argv),
        "seed": args.seed,
        "questions": len(asked),
        "gold_tables": len({q["table_id"] for q in asked}),
        "tables": len(tables),
        "table_rows": sum(len(t["data"]) for t in tables.values()),
        "passages": len(passages),
    }
    (args.out / "subset.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
