"""The multi-entity KG question set put to the engine: accuracy per kind, with each answer's table and SQL.

    .venv/bin/python benchmarks/kg_set_eval.py --index DIR \\
        [--questions benchmarks/kg_set_questions/questions.jsonl] [--out benchmarks/results/kg_sets]

Two rows, nothing fitted: the engine as shipped (its default modes, which include table-sql) and the
same router without table-sql (and without kg-plan, which also answers some set questions); the
candidate reader. A question is right when the answer matches a gold answer (``exact_match``: case,
punctuation and articles ignored) — and, when both are numbers, when they are the same number: the
punctuation rule alone would take "-0.70" for "0.70", and float arithmetic may differ from the gold in
the 17th digit of a variance of 10^17. The report lists every question with its answer, the mode, the
entity-set query, the SQL and any statistical test.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
from collections import defaultdict
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import machine, pct, timed_ms  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.metrics import exact_match  # noqa: E402
from query.modes import Router  # noqa: E402

WITH = EngineConfig().modes  # the engine as shipped
DEFAULT = [m for m in WITH if m not in ("table-sql", "kg-plan")]
"""The router before set questions had a mode: kg-plan (issue 35) also answers comparisons and
superlatives over a class in a place, so it is left out with table-sql to keep this row what it was."""


def _number(text: str) -> float | None:
    try:
        return float(text.replace(",", ""))
    except ValueError:
        return None


def right(answer: str, golds: list[str]) -> float:
    """Exact match; for numbers, the same value (to 1e-9 relative) with the same sign."""
    if (value := _number(answer)) is not None and (
        numbers := [g for g in map(_number, golds) if g is not None]
    ):
        return float(any(abs(value - g) <= 1e-9 * max(1.0, abs(g)) for g in numbers))
    return exact_match(answer, golds)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument(
        "--questions", type=Path, default=REPO / "benchmarks/kg_set_questions/questions.jsonl"
    )
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks/results/kg_sets")
    args = parser.parse_args(argv)
    questions = [json.loads(line) for line in args.questions.read_text().splitlines() if line.strip()]
    rows = []
    with Engine.open(args.index, EngineConfig(modes=WITH, reader="candidates")) as engine:
        by_name = {m.name: m for m in engine.router.modes}
        default = Router([by_name[m] for m in DEFAULT])
        for q in questions:
            understanding = engine.understand(q["question"])
            base, base_ms = timed_ms(lambda u=understanding: default.run(u))
            result, ms = timed_ms(lambda u=understanding: engine.router.run(u))
            answer = "" if result.unknown else result.answer
            rows.append(
                {
                    "id": q["id"], "type": q["type"], "question": q["question"], "gold": q["answers"],
                    "answer": answer, "mode": result.mode, "right": right(answer, q["answers"]),
                    "right_default": right("" if base.unknown else base.answer, q["answers"]),
                    "set_query": result.table.set_query if result.table else None,
                    "set_params": result.table.set_params if result.table else None,
                    "sql": result.table.sql if result.table else None,
                    "params": result.table.params if result.table else None,
                    "note": result.table.note if result.table else None,
                    "test": result.table.test.model_dump() if result.table and result.table.test else None,
                    "rows": result.table.total_rows if result.table else None,
                    "ms": round(ms, 1), "ms_default": round(base_ms, 1),
                }
            )  # fmt: skip
        version = engine.index_version
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "results.jsonl").write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in rows))
    text = "\n".join(_report(args, argv, rows, version)) + "\n"
    (args.out / "report.md").write_text(text)
    print(text[: text.find("## Every question")])
    return 0


def _report(args, argv, rows, version) -> list[str]:
    command = " ".join(
        ["python benchmarks/kg_set_eval.py", *(shlex.quote(a) for a in (argv or sys.argv[1:]))]
    )
    kinds: dict[str, list[dict]] = defaultdict(list)
    for r in rows:
        kinds[r["type"]].append(r)

    lines = [
        f"# Multi-entity KG questions ({len(rows)})",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {version}; questions `{args.questions}`; candidate reader; machine: "
        + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        "| kind | questions | without table-sql ("
        + ", ".join(DEFAULT)
        + ") | engine as shipped ("
        + ", ".join(WITH)
        + ") |",
        "|---|---:|---:|---:|",
    ]
    for kind, group in sorted(kinds.items()):
        shipped, with_mode = pct(r["right_default"] for r in group), pct(r["right"] for r in group)
        lines.append(f"| {kind} | {len(group)} | {shipped} | {with_mode} |")
    shipped, with_mode = pct(r["right_default"] for r in rows), pct(r["right"] for r in rows)
    lines.append(f"| **all** | {len(rows)} | {shipped} | **{with_mode}** |")
    lines += [
        "",
        f"p50 per question: {statistics.median(r['ms_default'] for r in rows):.0f} ms without table-sql, "
        f"{statistics.median(r['ms'] for r in rows):.0f} ms with table-sql; table-sql answered "
        f"{sum(r['mode'] == 'table-sql' for r in rows)} of {len(rows)}.",
        "",
        "## Every question",
        "",
    ]
    for r in rows:
        mark = "right" if r["right"] else "WRONG"
        answer = r["answer"] or "unknown"
        lines.append(f"- {r['id']} ({r['type']}) {r['question']} → **{answer}** [{mark}; "
                     f"gold {r['gold'][0]}; mode {r['mode']}]")  # fmt: skip
        if r["sql"]:
            where = (
                "explicit list"
                if r["set_query"] == "explicit list"
                else "set query with " + json.dumps(r["set_params"])
            )
            lines.append(f"  - {r['rows']} rows from the {where}; SQL `{r['sql']}` params {r['params']}"
                         + (f"; {r['note']}" if r["note"] else ""))  # fmt: skip
        if r.get("test"):
            t = r["test"]
            lines.append(
                f"  - {t['name']}: statistic {t['statistic']:.4g}, p = {t['p_value']:.3g}, n = {t['n']}"
            )
    return lines


if __name__ == "__main__":
    sys.exit(main())
