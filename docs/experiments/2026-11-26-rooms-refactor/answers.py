"""Every answer the engine gives to fixed question sets, as JSON lines, so two commits can be compared.

    python docs/experiments/2026-11-26-rooms-refactor/answers.py --index DIR --out FILE.jsonl \\
        [--config NAME] [--limit N]

Run once with the code before a refactor and once after (``PYTHONPATH`` picks the checkout), on one and
the same index, then ``compare.py`` says whether anything but latency changed. Each line is one question
under one configuration: the answer, whether it is unknown, the confidence, the mode, every route step's
outcome and reason, the reader and its reading outcome, the final evidence ids and scores, the supporting
ids, the table-sql trace (operation, SQL, parameters, selected rows, value), the graph-critic rounds and
the KG facts. Timings are left out: they are what may change.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]
sys.path.insert(0, str(REPO))

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402

SETS = {
    "kg": REPO / "benchmarks" / "kg_questions" / "questions.jsonl",
    "kg-set": REPO / "benchmarks" / "kg_set_questions" / "questions.jsonl",
    "ottqa-sample": REPO / "data" / "samples" / "questions.jsonl",
}
GRAPH_CRITIC = ["kg-lookup", "table-sql", "graph-critic", "retrieve-read"]
CONFIGS = {
    # name: (engine config overrides, question sets)
    "shipped-candidates": ({"reader": "candidates"}, ["kg", "kg-set", "ottqa-sample"]),
    "retrieve-read-only": ({"reader": "candidates", "modes": ["retrieve-read"]}, ["kg", "ottqa-sample"]),
    "graph-critic": ({"reader": "candidates", "modes": GRAPH_CRITIC}, ["ottqa-sample"]),
    "stage2": (
        {"reader": "candidates", "rerank": {"stage2": "late-interaction"}},
        ["ottqa-sample"],
    ),
    "llm-0.5b": (
        {"reader": "llm", "llm": {"backend": "qwen2.5-coder-0.5b-instruct"}, "modes": GRAPH_CRITIC},
        ["ottqa-sample"],
    ),
}


def _round(value: object) -> object:
    return round(value, 6) if isinstance(value, float) else value


def record(config: str, set_name: str, qid: str, result) -> dict:
    table = result.table
    return {
        "config": config,
        "set": set_name,
        "id": qid,
        "answer": result.answer,
        "unknown": result.unknown,
        "confidence": _round(result.confidence),
        "unit": result.unit,
        "mode": result.mode,
        "route": [(s.mode, s.outcome, s.reason) for s in result.route],
        "reader": result.reader,
        "reading": None
        if result.reading is None
        else (result.reading.outcome, result.reading.raw_answer, result.reading.cited),
        "evidence": [(e.evidence_id, _round(e.score)) for e in result.evidence[:10]],
        "supporting": list(result.supporting_evidence_ids),
        "table": None
        if table is None
        else (table.operation, table.sql, [str(p) for p in table.params], table.selected, table.value),
        "refinement": [(r.module, r.answer, r.accepted, r.feedback, r.top) for r in result.refinement or []],
        "facts": [f.statement_id for f in result.facts or []],
    }


def questions(path: Path, limit: int | None) -> list[tuple[str, str]]:
    rows = [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]
    return [(r["id"], r["question"]) for r in rows][:limit]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--config", action="append", choices=sorted(CONFIGS))
    parser.add_argument("--limit", type=int, default=None, help="questions per set")
    args = parser.parse_args()
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w", encoding="utf-8") as out:
        for name in args.config or list(CONFIGS):
            overrides, sets = CONFIGS[name]
            limit = 20 if name.startswith("llm") and args.limit is None else args.limit
            with Engine.open(args.index, EngineConfig.model_validate(overrides)) as engine:
                for set_name in sets:
                    for qid, question in questions(SETS[set_name], limit):
                        result = engine.ask(question)
                        out.write(json.dumps(record(name, set_name, qid, result), ensure_ascii=False) + "\n")
                        out.flush()
            print(f"{name}: done", flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main())
