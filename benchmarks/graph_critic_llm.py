"""The graph-critic mode with the instruct model reading: single pass vs router + critic, on OTT-QA dev.

    .venv/bin/python benchmarks/graph_critic_llm.py --index DIR --questions OTTQA_DIR \\
        --tune-readings benchmarks/results/llm_reader/report_fold/readers/qwen2.5-coder-1.5b-instruct.jsonl \\
        [--sample 500] [--seed 7] [--limit 150] [--out DIR]

The fixed sample and folds of ``graph_critic_sample.py`` (those of every graph-critic study). The LLM
reader costs ~12 s a read here, so the candidate-reader run's design (every question through every round,
any floor computed afterwards) is out of reach; instead the critic's one number, the validator's floor on
the reader's confidence, is fitted first on the tuning fold, from the LLM reader's readings of those
questions' single pass in the reader benchmark (``--tune-readings``: its rows are the single pass read by
this reader; the floor with the best balanced accuracy of "confidence ≥ floor" against "the answer is
right"), and the report fold (its first ``--limit`` questions, in sample order) runs the loop for real at
that floor:

- **single pass**: the engine as shipped (fused retrieval, the LLM reader), its evidence in rank order;
- **single pass, cited first**: the same reading with the rows it read the answer from moved first
  (what the mode does to every round), so the critic's own share of any gain is visible;
- **router + critic** (``first_module = "fused"``, ``rounds`` 3): round 1 is the single pass; when the
  validator rejects it, the graph walk from the linked entity, then the text module.

Hit@1, Hit@5, MRR@5: the first of the top 5 evidence rows of the answer that holds a gold answer. The
validator's accuracy: each judged round's verdict against whether its answer was right (balanced, since
most rounds are wrong). Per-question rounds go to ``<out>/rounds.jsonl`` (a run resumes), the report to
``<out>/report.md``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # imported by path too (tests), not only run

from benchmarks_common import machine, pct  # noqa: E402
from graph_critic_sample import BENCHMARKS, fold_of, hits, resumed_rows, sample_arguments  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import exact_match, first_presence_rank  # noqa: E402
from query.evaluation.readers import sample_questions  # noqa: E402
from query.modes.graph_critic import NAME, GraphCriticSettings, cited_first  # noqa: E402
from query.read.llm_reader import LlmReader  # noqa: E402

ROUNDS = 3


def fit_floor(readings: list[dict]) -> tuple[float, float]:
    """The floor on the reader's confidence with the best balanced accuracy against "the answer is right"
    (ties: the lower floor), and that accuracy."""
    right = [r.get("confidence") or 0.0 for r in readings if r["answered"] and r["em"]]
    wrong = [r.get("confidence") or 0.0 for r in readings if not (r["answered"] and r["em"])]
    if not right or not wrong:
        raise SystemExit("the tuning readings need right and wrong answers to fit a floor")

    def balanced(t: float) -> float:
        return (sum(c >= t for c in right) / len(right) + sum(c < t for c in wrong) / len(wrong)) / 2

    floors = [round(0.05 * i, 2) for i in range(1, 20)]
    best = max(floors, key=lambda t: (balanced(t), -t))
    return best, balanced(best)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(parser)
    parser.add_argument("--tune-readings", type=Path, required=True, help="the reader benchmark's jsonl")
    parser.add_argument("--limit", type=int, default=150, help="report-fold questions run")
    parser.add_argument("--engine-config", type=Path, help="engine config (default: the shipped one)")
    parser.add_argument("--out", type=Path, default=REPO / ".state/benchmarks/graph_critic_llm")
    args = parser.parse_args(argv)
    questions = sample_questions(load_benchmark(args.benchmark, args.questions), args.sample, args.seed)
    tune_ids = {q.id for q in questions if fold_of(q.id, args.seed) == "tune"}
    readings = [json.loads(line) for line in args.tune_readings.read_text().splitlines() if line.strip()]
    tune = [r for r in readings if r["question_id"] in tune_ids]
    floor, tune_accuracy = fit_floor(tune)
    report = [q for q in questions if q.id not in tune_ids][: args.limit]
    base = EngineConfig.load(args.engine_config) if args.engine_config else EngineConfig()
    critic = GraphCriticSettings(first_module="fused", rounds=ROUNDS, accept_confidence=floor)
    config = base.model_copy(update={"modes": [NAME, "retrieve-read"], "graph_critic": critic})
    args.out.mkdir(parents=True, exist_ok=True)
    with Engine.open(args.index, config) as engine:
        if not isinstance(engine.pipeline.reader, LlmReader):
            raise SystemExit("the engine config reads with candidates: this benchmark needs the LLM reader")
        mode = next(m for m in engine.router.modes if m.name == NAME)
        path = args.out / "rounds.jsonl"
        done = resumed_rows(path, report, "graph-critic with the LLM", lambda q: _question(engine, mode, q))
        version, reader = engine.index_version, engine.pipeline.reader.llm.name
    rows = [done[q.id] for q in report]
    meta = {"floor": floor, "tune_accuracy": tune_accuracy, "tune": len(tune)}
    meta |= {"version": version, "reader": reader}
    text = "\n".join(_report(args, argv, rows, meta)) + "\n"
    (args.out / "report.md").write_text(text)
    print(text)
    return 0


def _rank(texts: list[str], golds: list[str]) -> int | None:
    return first_presence_rank(texts[:5], golds)


def _question(engine, mode, q) -> dict:
    golds = q.answer_texts()
    started = time.perf_counter()
    understanding = engine.understand(q.question)
    pipeline = engine.pipeline
    staged = pipeline.run(understanding)
    single = pipeline.result(staged, pipeline.read(staged))
    single_s = time.perf_counter() - started
    texts = {e.evidence_id: e.text for e in single.evidence}
    ranked = [e.evidence_id for e in single.evidence]
    answer = "" if single.unknown else single.answer
    cited = single.supporting_evidence_ids
    started = time.perf_counter()
    routed = mode.refine(understanding, staged, mode.first_plan(understanding), ROUNDS)
    routed_s = time.perf_counter() - started
    rounds = []
    for r in routed.refinement:
        by_id = {row.evidence_id: row.text for row in pipeline.store.get(r.top)} if r.top else {}
        said = "" if r.answer == "unknown" else r.answer
        rounds.append(
            {
                "module": r.module, "answer": said, "confidence": r.confidence,
                "em": exact_match(said, golds), "accepted": r.accepted, "feedback": r.feedback,
                "rank_top5": _rank([by_id[e] for e in r.top if e in by_id], golds), "ms": r.ms,
            }
        )  # fmt: skip
    final = "" if routed.unknown else routed.answer
    return {
        "id": q.id,
        "single": {
            "answer": answer, "confidence": single.confidence, "em": exact_match(answer, golds),
            "rank": _rank([texts[e] for e in ranked], golds),
            "rank_cited": _rank([texts[e] for e in cited_first(ranked, cited)], golds),
            "s": single_s,
        },
        "critic": {
            "answer": final, "em": exact_match(final, golds),
            "rank": _rank([e.text for e in routed.evidence], golds),
            "validated": routed.validated, "rounds": len(rounds), "s": routed_s,
        },
        "rounds": rounds,
    }  # fmt: skip


def _verdicts(rows: list[dict]) -> tuple[int, int, int, int]:
    """(accepted right, accepted wrong, rejected right, rejected wrong) over the rounds judged."""
    counts = [0, 0, 0, 0]
    for row in rows:
        for r in row["rounds"]:
            counts[(0 if r["accepted"] else 2) + (0 if r["em"] else 1)] += 1
    return counts[0], counts[1], counts[2], counts[3]


def _line(name: str, ems: list[float], ranks: list[int | None], rounds: float, seconds: list[float]) -> str:
    hit1, hit5, mrr = hits(ranks)
    p50 = f"{statistics.median(seconds):.1f}" if seconds else "-"
    return f"| {name} | {pct(ems)} | {hit1} | {hit5} | {mrr} | {rounds:.2f} | {p50} |"


def _report(args, argv, rows: list[dict], meta: dict) -> list[str]:
    command = " ".join(
        ["python benchmarks/graph_critic_llm.py", *(shlex.quote(a) for a in (argv or sys.argv[1:]))]
    )
    single = [r["single"] for r in rows]
    critic = [r["critic"] for r in rows]
    first = [r["rounds"][0] for r in rows]
    ar, aw, rr, rw = _verdicts(rows)
    recall = ar / (ar + rr) if ar + rr else 0.0
    specificity = rw / (aw + rw) if aw + rw else 0.0
    moved = [r for r in rows if r["critic"]["rounds"] > 1]
    return [
        f"# graph-critic with the LLM reader on {BENCHMARKS[args.benchmark]}: report fold, "
        f"first {len(rows)} questions "
        f"(sample {args.sample}, seed {args.seed})",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {meta['version']}; reader {meta['reader']}; machine: "
        + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        f"Validator floor on the reader's confidence: **{meta['floor']}**, fitted on the {meta['tune']} "
        f"tuning-fold questions' readings in `{args.tune_readings}` (balanced accuracy there "
        f"{100 * meta['tune_accuracy']:.1f} %); no report question was used to choose it.",
        "",
        "Evidence columns: the rank of the first row holding a gold answer among the answer's top 5 rows.",
        "",
        "| row | EM | Hit@1 | Hit@5 | MRR@5 | rounds (mean) | p50 s/question |",
        "|---|---:|---:|---:|---:|---:|---:|",
        _line("single pass (engine as shipped, LLM reader)", [s["em"] for s in single],
              [s["rank"] for s in single], 1.0, [s["s"] for s in single]),
        _line("single pass, cited rows first", [s["em"] for s in single], [s["rank_cited"] for s in single],
              1.0, [s["s"] for s in single]),
        _line("router without critic (round 1)", [r["em"] for r in first], [r["rank_top5"] for r in first],
              1.0, [r["ms"] / 1000 for r in first]),
        _line(f"router + critic (floor {meta['floor']}, at most {ROUNDS} rounds)", [c["em"] for c in critic],
              [c["rank"] for c in critic], statistics.mean(c["rounds"] for c in critic) if critic else 0,
              [c["s"] for c in critic]),
        "",
        f"Validator over {ar + aw + rr + rw} judged rounds ({ar + rr} with a right answer): accepted {ar} "
        f"right and {aw} wrong, rejected {rr} right and {rw} wrong; balanced accuracy "
        f"{100 * (recall + specificity) / 2:.1f} %, plain accuracy "
        f"{pct([True] * (ar + rw) + [False] * (aw + rr))} %.",
        "",
        f"The critic rejected round 1 for {len(moved)} questions; on those, EM "
        f"{pct([r['single']['em'] for r in moved])} single pass → {pct([r['critic']['em'] for r in moved])} "
        "with the critic's answer; the modules its later rounds used: "
        + ", ".join(
            f"{m} {sum(1 for r in moved for x in r['rounds'][1:] if x['module'] == m)}"
            for m in ("deeper", "hybrid", "text", "fused")
        )
        + ".",
    ]  # fmt: skip


if __name__ == "__main__":
    sys.exit(main())
