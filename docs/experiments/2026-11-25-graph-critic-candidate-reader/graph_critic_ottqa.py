"""The graph-critic mode on OTT-QA dev: single pass vs hybrid module vs router vs router + critic.

    .venv/bin/python docs/experiments/2026-11-25-graph-critic-candidate-reader/graph_critic_ottqa.py \\
        --index DIR --questions OTTQA_DIR
        [--sample 500] [--seed 7] [--fold report] [--out DIR]

A fixed random sample of dev questions (``--sample``, ``--seed``) is split by a seeded hash of the id into
a tuning fold (30 %) and a report fold; the critic's one fitted number, the validator's confidence
floor, is chosen on the tuning fold and applied to the report fold, where the figures are quoted.

One retrieval per question; on it:
- **single pass**: the engine's fused pipeline read as it is (the retrieve-read mode);
- **(a) hybrid module alone**: one round of the graph walk from the router's topic entities (a question
  with no linked entity gets no evidence and "unknown");
- **(b) router without critic**: the router's first round (hybrid when an entity is linked, else fused);
- **(c) router + critic**: up to 3 rounds, the first accepted answer, else the most confident.
The run records every round with the confidence floor at 1.0 (the critic rejects on confidence last,
after every other check, so with a lower floor ``t`` the loop would have accepted the first round whose
other checks passed and whose confidence is ≥ t, and seen exactly the same rounds before it): (c) is
then computed for any ``t`` from the same run. Answer-bearing evidence (Hit@1, Hit@5, MRR over the rows
the answer was read from) and EM per row; the validator's accuracy against whether each round's answer
was right. Candidate reader (the LLM reader costs ~12 s a read on this machine). Per-question rounds go to
``<out>/rounds.jsonl`` (a run resumes); the report to ``<out>/<fold>.md``.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine, pct  # noqa: E402
from graph_critic_sample import BENCHMARKS, fold_of, hits, resumed_rows, sample_arguments  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import exact_match, first_presence_rank  # noqa: E402
from query.evaluation.readers import sample_questions  # noqa: E402
from query.modes.graph_critic import NAME, GraphCriticSettings  # noqa: E402

ROUNDS = 3


def _outcome(result, golds: list[str]) -> dict:
    answer = "" if result.unknown else result.answer
    rank = first_presence_rank([e.text for e in result.evidence[:5]], golds)
    return {"answer": answer, "confidence": result.confidence, "em": exact_match(answer, golds), "rank": rank}


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(parser)
    parser.add_argument("--fold", choices=["tune", "report"], default="report")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "ottqa")
    args = parser.parse_args(argv)
    questions = sample_questions(load_benchmark(args.benchmark, args.questions), args.sample, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    critic = GraphCriticSettings(rounds=ROUNDS, accept_confidence=1.0)
    config = EngineConfig(modes=[NAME, "retrieve-read"], reader="candidates", graph_critic=critic)
    with Engine.open(args.index, config) as engine:
        mode = next(m for m in engine.router.modes if m.name == NAME)
        done = resumed_rows(
            args.out / "rounds.jsonl", questions, "graph-critic eval", lambda q: _question(engine, mode, q)
        )
        version = engine.index_version
    rows = [done[q.id] for q in questions]
    tune = [r for r in rows if fold_of(r["id"], args.seed) == "tune"]
    floor = max(_floors(), key=lambda t: (statistics.mean(_validator(tune, t)) if tune else 0, -t))
    chosen = [r for r in rows if fold_of(r["id"], args.seed) == args.fold]
    text = "\n".join(_report(args, argv, chosen, floor, len(tune), version)) + "\n"
    (args.out / f"{args.fold}.md").write_text(text)
    print(text)
    return 0


def _question(engine, mode, q) -> dict:
    golds = q.answer_texts()
    understanding = engine.understand(q.question)
    staged = engine.run(q.question, understanding)
    single = _outcome(engine.result(staged, engine.read(staged)), golds)
    hybrid = mode.refine(understanding, staged, mode.first_plan(understanding, "hybrid"), 1)
    routed = mode.refine(understanding, staged, mode.first_plan(understanding), ROUNDS)
    rounds = []
    for r in routed.refinement:
        answer = "" if r.answer == "unknown" else r.answer
        rank = None
        if r.top:  # the round's own rows: re-read their texts for answer presence
            by_id = {row.evidence_id: row.text for row in engine.store.get(r.top)}
            texts = [by_id[e] for e in r.top if e in by_id]
            rank = first_presence_rank(texts, golds)
        rounds.append(
            {
                "module": r.module, "answer": answer, "confidence": r.confidence,
                "em": exact_match(answer, golds),
                "checks_passed": r.accepted or (r.detail or "").startswith("confidence"),
                "feedback": r.feedback, "rank_top5": rank, "ms": r.ms,
            }
        )  # fmt: skip
    return {
        "id": q.id,
        "single": single,
        "hybrid": _outcome(hybrid, golds) | {"module": hybrid.refinement[0].module},
        "router": _outcome_of_round(routed, 0, golds),
        "rounds": rounds,
    }


def _outcome_of_round(result, index: int, golds: list[str]) -> dict:
    r = result.refinement[index]
    answer = "" if r.answer == "unknown" else r.answer
    return {"answer": answer, "confidence": r.confidence, "em": exact_match(answer, golds)}


def _floors() -> list[float]:
    return [round(0.05 * i, 2) for i in range(0, 21)]


def _critic_pick(row: dict, floor: float) -> tuple[dict, int]:
    """The round (c) would have answered with at this floor, and how many rounds it used."""
    for i, r in enumerate(row["rounds"]):
        if r["checks_passed"] and r["confidence"] >= floor:
            return r, i + 1
    best = max(row["rounds"], key=lambda r: (r["answer"] != "", r["confidence"]))
    return best, len(row["rounds"])


def _validator(rows: list[dict], floor: float) -> list[bool]:
    """Per round the loop would have judged: was its verdict right (accept exactly the right answers)?"""
    out = []
    for row in rows:
        for r in row["rounds"]:
            accepted = r["checks_passed"] and r["confidence"] >= floor
            out.append(accepted == bool(r["em"]))
            if accepted:
                break
    return out


def _verdicts(rows: list[dict], floor: float) -> tuple[int, int, int, int]:
    """(accepted right, accepted wrong, rejected right, rejected wrong) over the rounds judged."""
    counts = [0, 0, 0, 0]
    for row in rows:
        for r in row["rounds"]:
            accepted = r["checks_passed"] and r["confidence"] >= floor
            counts[(0 if accepted else 2) + (0 if r["em"] else 1)] += 1
            if accepted:
                break
    return counts[0], counts[1], counts[2], counts[3]


def _report(args, argv, rows, floor, tuned_on, version) -> list[str]:
    command = " ".join(
        [
            "python docs/experiments/2026-11-25-graph-critic-candidate-reader/graph_critic_ottqa.py",
            *(shlex.quote(a) for a in (argv or sys.argv[1:])),
        ]
    )
    picks = [_critic_pick(r, floor) for r in rows]
    hybrid = [r["hybrid"] for r in rows]
    ms = [r["ms"] for row in rows for r in row["rounds"]]
    shipped = [_critic_pick(r, GraphCriticSettings().accept_confidence) for r in rows]
    first_rounds = [r["rounds"][0] for r in rows]
    lines = [
        f"# graph-critic on {BENCHMARKS[args.benchmark]}: {args.fold} fold "
        f"({len(rows)} of a {args.sample}-question sample, "
        f"seed {args.seed})",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {version}; candidate reader; machine: "
        + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        "Evidence columns: the rank of the first row holding a gold answer among the top 5 rows the answer",
        "was read from (Hit@1, Hit@5, MRR@5).",
        "",
        "| row | EM | Hit@1 | Hit@5 | MRR@5 | rounds (mean) |",
        "|---|---:|---:|---:|---:|---:|",
        _line("single pass (fused retrieval, as shipped)", [r["single"]["em"] for r in rows],
              [r["single"]["rank"] for r in rows], 1.0),
        _line("(a) hybrid module alone", [h["em"] for h in hybrid], [h["rank"] for h in hybrid], 1.0),
        _line("(b) router without critic", [r["em"] for r in first_rounds],
              [r["rank_top5"] for r in first_rounds], 1.0),
        _line(f"(c) router + critic, floor {GraphCriticSettings().accept_confidence} (as shipped)",
              [p["em"] for p, _ in shipped], [p["rank_top5"] for p, _ in shipped],
              statistics.mean(n for _, n in shipped) if shipped else 0),
        _line(f"(c) router + critic, floor {floor} (fitted on the {tuned_on} tuning questions)",
              [p["em"] for p, _ in picks], [p["rank_top5"] for p, _ in picks],
              statistics.mean(n for _, n in picks) if picks else 0),
        "",
        f"Validator accuracy (its verdict = whether the round's answer was right), floor {floor}: "
        f"{pct(_validator(rows, floor))} % over {len(_validator(rows, floor))} judged rounds; "
        f"as shipped ({GraphCriticSettings().accept_confidence}): "
        f"{pct(_validator(rows, GraphCriticSettings().accept_confidence))} %.",
        "Most rounds' answers are wrong, so a validator that rejects everything scores high too: "
        + _balance(rows, floor),
        "",
        "p50 ms per round: " + (f"{statistics.median(ms):.0f}" if ms else "-"),
    ]  # fmt: skip
    return lines


def _balance(rows: list[dict], floor: float) -> str:
    ar, aw, rr, rw = _verdicts(rows, floor)
    judged = ar + aw + rr + rw
    recall = ar / (ar + rr) if ar + rr else 0.0
    specificity = rw / (aw + rw) if aw + rw else 0.0
    always_reject = 100 * (aw + rw) / judged if judged else 0.0
    return (
        f"of {judged} judged rounds {ar + rr} had a right answer; the validator accepted {ar} of those and "
        f"{aw} wrong ones (always rejecting would score {always_reject:.1f} %); balanced accuracy "
        f"{100 * (recall + specificity) / 2:.1f} %."
    )


def _line(name: str, ems: list[float], ranks: list[int | None], rounds: float) -> str:
    hit1, hit5, mrr = hits(ranks)
    return f"| {name} | {pct(ems)} | {hit1} | {hit5} | {mrr} | {rounds:.2f} |"


if __name__ == "__main__":
    sys.exit(main())
