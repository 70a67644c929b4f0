"""The KG question sets' engine-as-shipped rows (``kg-sample-router`` and ``kg-sets-sample`` of
``benchmarks/expected.yaml``) with and without the ``kg-plan`` mode, in one run: does the question plan
cost a question the rules answered?

    nice -n 10 python benchmarks/natural_questions/kg_router_check.py --index .state/indexes

Only the end-to-end rows of the engine as shipped (``hqa eval --benchmark kgqa`` also measures retrieval
stages and the retrieve-read mode alone, ``kg_set_eval.py`` the router without table-sql; the plan
touches neither). Judging as theirs: exact match (``query.evaluation.metrics.exact_match``) for the KG
questions, ``kg_set_eval.right`` (the same number) for the set questions. Writes
``benchmarks/results/natural_questions/kg_router_check.json`` and ``.md``.
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from collections import Counter, defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from benchmarks_common import machine  # noqa: E402

QUESTIONS = REPO / "benchmarks" / "kg_questions" / "questions.jsonl"
SET_QUESTIONS = REPO / "benchmarks" / "kg_set_questions" / "questions.jsonl"
OUT = REPO / "benchmarks" / "results" / "natural_questions"


def main(argv: list[str] | None = None) -> int:
    from kg_set_eval import right

    from query.config import EngineConfig
    from query.engine import Engine
    from query.evaluation.metrics import exact_match

    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=QUESTIONS)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    records = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    records += [
        {**json.loads(line), "set": True} for line in SET_QUESTIONS.read_text().splitlines() if line.strip()
    ]
    shipped = EngineConfig(reader="candidates")
    configs = {"router": shipped, "router without kg-plan": EngineConfig(
        reader="candidates", modes=[m for m in shipped.modes if m != "kg-plan"])}  # fmt: skip
    load_before = [round(x, 2) for x in os.getloadavg()]
    rows: dict[str, list[dict]] = {}
    for name, config in configs.items():
        rows[name] = []
        with Engine.open(args.index, config) as engine:
            for r in records:
                started = time.perf_counter()
                result = engine.ask(r["question"])
                answer = "" if result.unknown else result.answer
                judge = right if r.get("set") else exact_match
                kind = f"set/{r['type']}" if r.get("set") else r["type"]
                rows[name].append({"id": r["id"], "type": kind, "answer": answer, "mode": result.mode,
                                   "em": judge(answer, r["answers"]),
                                   "ms": (time.perf_counter() - started) * 1000})  # fmt: skip
    load_after = [round(x, 2) for x in os.getloadavg()]
    summary = {}
    for name, got in rows.items():
        by_type: dict[str, list[float]] = defaultdict(list)
        for row in got:
            by_type[row["type"]].append(row["em"])
        kg = [r["em"] for r in got if not r["type"].startswith("set/")]
        sets = [r["em"] for r in got if r["type"].startswith("set/")]
        summary[name] = {
            "em": round(statistics.mean(kg), 4),
            "set_right": round(statistics.mean(sets), 4),
            "per_type": {t: round(statistics.mean(v), 4) for t, v in sorted(by_type.items())},
            "answered_by": dict(Counter(r["mode"] for r in got)),
            "p50_ms": round(statistics.median(r["ms"] for r in got), 1),
        }
    command = " ".join(["kg_router_check.py", *(argv or sys.argv[1:])])
    payload = {"command": command, "machine": machine(), "load_before": load_before,
               "load_after": load_after, "summary": summary, "rows": rows}  # fmt: skip
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "kg_router_check.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    lines = ["# KG question sets: the engine as shipped with and without kg-plan", "",
             f"    nice -n 10 python benchmarks/natural_questions/{payload['command']}", "",
             f"{len(records)} questions; load {load_before} -> {load_after}.", "",
             "| row | KG questions EM | KG set questions right | answered by | p50 ms |",
             "|---|---:|---:|---|---:|"]  # fmt: skip
    for name, s in summary.items():
        lines.append(
            f"| {name} | {s['em']:.3f} | {s['set_right']:.3f} | {s['answered_by']} | {s['p50_ms']} |"
        )
    lines += ["", "Per type: " + "; ".join(f"{n}: {s['per_type']}" for n, s in summary.items())]
    (args.out / "kg_router_check.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
