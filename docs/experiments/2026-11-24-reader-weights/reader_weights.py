"""The candidate reader's hand weights, before and after, on a saved evaluation pass.

    .venv/bin/python docs/experiments/2026-11-24-reader-weights/reader_weights.py \
        --traces .state/ottqa/eval/traces.pkl \
        --index .state/ottqa/indexes [--config rerank1-learned] [--split 600] [--out benchmarks/results/ottqa]

Reads the top evidence of one ranking per question from the pass that ``hqa eval --traces`` saved and
answers it with two hand-set scorers: the first one (support * type * coverage * proximity) and the
current ``HAND_WEIGHTS``. The current weights were chosen on the questions before ``--split``; the
questions after it were not looked at, so their figures are the honest comparison. Per part: EM of the
answer (0.15 threshold), share answered, precision, EM of the best candidate whatever its confidence,
and how often a gold answer is among the candidates at all (the reader's ceiling).
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine  # noqa: E402

from ingest.progress import progress  # noqa: E402
from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.metrics import exact_match  # noqa: E402
from query.evaluation.runner import load_traces  # noqa: E402
from query.read.candidates import HAND_WEIGHTS, AnswerScorer, CandidateAnswerer  # noqa: E402

FIRST_WEIGHTS = {"log_support": 1.0, "log_type": 1.0, "log_coverage": 1.0, "log_near": 1.0}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, required=True)
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--config", default="rerank1-learned", help="the ranking whose top evidence is read")
    parser.add_argument("--split", type=int, default=600, help="questions the weights were chosen on")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args()

    traces, _ = load_traces(args.traces)
    traces = [t for t in traces if t.staged is not None and args.config in t.rankings]
    engine = Engine.open(args.index, EngineConfig(reader="candidates"))
    scorers = {
        "first": AnswerScorer(weights=FIRST_WEIGHTS),
        "current": AnswerScorer(weights=dict(HAND_WEIGHTS)),
    }
    readers = {
        name: CandidateAnswerer(engine.config.answer, scorer, specificity=engine.reader.bm25.specificity)
        for name, scorer in scorers.items()
    }
    keys = ("em", "answered", "best_candidate_em", "gold_among_candidates")
    tally = {(name, part): dict.fromkeys(keys, 0.0) for name in readers for part in ("chosen on", "held out")}
    sizes = {"chosen on": 0, "held out": 0}
    bar = progress("read", total=len(traces), unit="question")
    for i, trace in enumerate(traces):
        part = "chosen on" if i < args.split else "held out"
        sizes[part] += 1
        rows = engine.store.get(trace.rankings[args.config][: engine.config.answer.top_evidence])
        golds = trace.question.answer_texts()
        intent, links = trace.staged.intent, trace.staged.links
        for name, reader in readers.items():
            choice = reader.run(intent, links, rows, engine.label)
            t = tally[(name, part)]
            t["answered"] += not choice.unknown
            t["em"] += exact_match(choice.answer, golds) if not choice.unknown else 0.0
            t["best_candidate_em"] += (
                exact_match(choice.candidates[0].text, golds) if choice.candidates else 0.0
            )
            _, drafts, _, _ = reader.candidates(intent, links, rows, engine.label)
            t["gold_among_candidates"] += any(exact_match(d.text, golds) for d in drafts)
        bar.update(1)
    bar.close()
    engine.close()

    results = {
        f"{name} / {part}": {k: round(v / max(sizes[part], 1), 4) for k, v in t.items()}
        | {"questions": sizes[part], "precision": round(t["em"] / max(t["answered"], 1), 4)}
        for (name, part), t in tally.items()
    }
    record = {
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        "machine": machine(),
        "ranking_read": args.config,
        "weights": {"first": FIRST_WEIGHTS, "current": dict(HAND_WEIGHTS)},
        "results": results,
    }
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "reader_weights.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = [
        "# Reader hand weights: first against current",
        "",
        f"Command: `{record['command']}`",
        "",
        f"Machine: {record['machine']}. Evidence read: the top {engine.config.answer.top_evidence} of "
        f"`{args.config}`; threshold {engine.config.answer.threshold}. The current weights were chosen on "
        f"the first {args.split} questions; the rest were held out.",
        "",
        "| weights / questions | n | EM | answered | precision | best candidate EM | gold among candidates |",
        "|---|---:|---:|---:|---:|---:|---:|",
        *(
            f"| {name} | {r['questions']} | {100 * r['em']:.1f} | {100 * r['answered']:.1f} | "
            f"{100 * r['precision']:.1f} | {100 * r['best_candidate_em']:.1f} | "
            f"{100 * r['gold_among_candidates']:.1f} |"
            for name, r in results.items()
        ),
        "",
    ]
    (args.out / "reader_weights.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
