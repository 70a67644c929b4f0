"""What the question plan costs (issue 35): the engine with and without the ``kg-plan`` mode on the
questions the rules already answer, asked in turn in the same run (a ratio survives a busy machine
better than a time), and the LLM planner's seconds and tokens on the questions the rules are unsure of.

    nice -n 10 python benchmarks/natural_questions/plan_speed.py --index .state/indexes [--llm]

Writes ``benchmarks/results/natural_questions/plan_speed.json`` and ``plan_speed.md`` with the load
averages before and after and the peak RSS.
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import statistics
import sys
import time
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

from benchmarks_common import machine  # noqa: E402

OUT = REPO / "benchmarks" / "results" / "natural_questions"
SAMPLE_QUESTIONS = REPO / "data" / "samples" / "questions.jsonl"
NQ = HERE / "questions.jsonl"


def load() -> list[float]:
    return [round(x, 2) for x in os.getloadavg()]


def rule_questions() -> list[str]:
    """The project's sample questions (written for the rules) and the set's lookups (tune and report:
    only the time is read here, never an answer; the holdout fold is put to the engine only by
    ``evaluate.py run --fold holdout``)."""
    sample = [
        json.loads(line)["question"] for line in SAMPLE_QUESTIONS.read_text().splitlines() if line.strip()
    ]
    records = [json.loads(line) for line in NQ.read_text().splitlines()]
    lookups = [r for r in records if r["kind"] in ("lookup", "lookup_year") and r["fold"] != "holdout"]
    return sample + [r["question"] for r in lookups]


def engines_in_turn(index: Path, questions: list[str], repeats: int) -> dict:
    from query.config import EngineConfig
    from query.engine import Engine

    with_plan = EngineConfig(reader="candidates")
    without = EngineConfig(reader="candidates", modes=[m for m in with_plan.modes if m != "kg-plan"])
    times: dict[str, list[float]] = {"with kg-plan": [], "without kg-plan": []}
    modes: dict[str, dict[str, int]] = {"with kg-plan": {}, "without kg-plan": {}}
    with Engine.open(index, with_plan) as a, Engine.open(index, without) as b:
        for q in questions[:3]:  # warm both
            a.ask(q), b.ask(q)
        for _ in range(repeats):
            for q in questions:
                for name, engine in (("with kg-plan", a), ("without kg-plan", b)):
                    started = time.perf_counter()
                    result = engine.ask(q)
                    times[name].append((time.perf_counter() - started) * 1000)
                    modes[name][result.mode] = modes[name].get(result.mode, 0) + 1
    p50 = {name: statistics.median(ms) for name, ms in times.items()}
    return {"questions": len(questions), "repeats": repeats, "p50_ms": p50,
            "ratio_p50": p50["with kg-plan"] / p50["without kg-plan"], "answered_by": modes}  # fmt: skip


def llm_planner(index: Path, limit: int) -> dict:
    """The LLM planner alone on the tune fold's questions whose rules plan is unsure."""
    from query.config import EngineConfig
    from query.engine import Engine
    from query.understand.plan import RulePlanner
    from query.understand.plan_llm import LlmPlanner

    records = [json.loads(line) for line in NQ.read_text().splitlines()]
    tune = [r["question"] for r in records if r["fold"] == "tune"]
    config = EngineConfig(reader="candidates", kg_plan={"llm_planner": True})
    with Engine.open(index, config) as engine:
        if engine.llm is None:
            raise SystemExit("the instruct model did not load")
        rules = RulePlanner(engine.properties)
        planner = LlmPlanner(engine.llm, engine.properties)
        unsure = []
        for q in tune:
            plan = rules.run(engine.understand(q))
            if plan.confidence < config.kg_plan.min_confidence:
                unsure.append((q, plan))
        rows = []
        for q, plan in unsure[:limit]:
            before = len(engine.llm.calls)
            started = time.perf_counter()
            got = planner.run(q, plan)
            ms = (time.perf_counter() - started) * 1000
            calls = list(engine.llm.calls)[before:]
            rows.append({"question": q, "ms": round(ms, 1), "source": got.source, "operation": got.operation,
                         "relations": got.relations, "mentions": got.mentions, "notes": got.notes,
                         "prompt_tokens": sum(c.prompt_tokens for c in calls),
                         "completion_tokens": sum(c.completion_tokens for c in calls)})  # fmt: skip
            print(json.dumps(rows[-1], ensure_ascii=False), flush=True)
    ms = [r["ms"] for r in rows]
    return {"model": config.llm.backend, "unsure_in_tune": len(unsure), "asked": len(rows),
            "p50_ms": statistics.median(ms) if ms else None, "rows": rows}  # fmt: skip


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--repeats", type=int, default=2)
    parser.add_argument("--llm", action="store_true", help="also time the LLM planner")
    parser.add_argument("--llm-limit", type=int, default=20)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    result: dict = {"command": " ".join(["plan_speed.py", *(argv or sys.argv[1:])]), "machine": machine()}
    result["load_before"] = load()
    result["rules"] = engines_in_turn(args.index, rule_questions(), args.repeats)
    result["load_after_rules"] = load()
    if args.llm:
        result["llm_planner"] = llm_planner(args.index, args.llm_limit)
        result["load_after_llm"] = load()
    result["peak_rss_mib"] = round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "plan_speed.json").write_text(json.dumps(result, ensure_ascii=False, indent=1) + "\n")
    rules = result["rules"]
    lines = [
        "# What the question plan costs",
        "",
        f"    nice -n 10 python benchmarks/natural_questions/{result['command']}",
        "",
        f"Rule-answered questions ({rules['questions']} x {rules['repeats']}, asked in turn): p50 "
        f"{rules['p50_ms']['with kg-plan']:.1f} ms with kg-plan, {rules['p50_ms']['without kg-plan']:.1f} ms "
        f"without; ratio {rules['ratio_p50']:.3f}. Load before {result['load_before']}, after "
        f"{result['load_after_rules']}. Peak RSS {result['peak_rss_mib']} MiB.",
    ]
    if "llm_planner" in result:
        llm = result["llm_planner"]
        tokens = [r["prompt_tokens"] + r["completion_tokens"] for r in llm["rows"]]
        median_tokens = statistics.median(tokens) if tokens else "-"
        lines += ["", f"LLM planner ({llm['model']}) on {llm['asked']} of the {llm['unsure_in_tune']} tune "
                  f"questions the rules are unsure of: p50 {llm['p50_ms']} ms, median tokens "
                  f"{median_tokens}; load after {result['load_after_llm']}."]  # fmt: skip
    (args.out / "plan_speed.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
