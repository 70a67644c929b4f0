"""Fusion weights from a saved evaluation pass: which RRF weights keep the most answers in the fused head?

    .venv/bin/python docs/experiments/2026-11-23-fusion-weights/fusion_weights.py \
        --traces .state/ottqa/eval/traces.pkl \
        [--out docs/experiments/2026-11-23-fusion-weights/fusion_weights.md]

``hqa eval --traces FILE`` keeps every retriever's list per question. This re-fuses those lists under a
grid of weights (BM25 fixed at 1: RRF only depends on the ratios) and reads answer presence in the
fused pool at 30 and 100 — stage one re-orders the fused top 100, so what fusion keeps there bounds
what re-ranking can reach. The choice is cross-validated: weights picked on one fold of the questions
(the harness's folds) are scored on the other, so the figure reported for the picked weights is out of
sample. One approximation: the hop list is the one the engine's default first fusion seeded; other
weights for BM25, dense and the KG walk would have seeded a slightly different hop.
"""

from __future__ import annotations

import argparse
import itertools
import shlex
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine  # noqa: E402

from query.evaluation.runner import Trace, load_traces  # noqa: E402
from query.retrieve.retrievers import RetrievalSettings, fuse  # noqa: E402

GRID = {
    "kg": (0.5, 1.0, 2.0),
    "dense": (0.25, 0.5, 1.0, 1.5, 2.0),
    "hop": (0.0, 1.0, 2.0, 3.0, 4.0),
}
KS = (30, 100)


def presence(traces: list[Trace], weights: dict[str, float]) -> dict[int, list[bool]]:
    """Per question, whether a gold answer is among the first k fused ids, for each k in KS."""
    settings = RetrievalSettings(weights=weights)
    out: dict[int, list[bool]] = {k: [] for k in KS}
    for trace in traces:
        lists = [r for r in trace.staged.retrieved.values() if weights.get(r.name, 1.0) > 0]
        ids = fuse(lists, settings).ids
        first = next((i for i, e in enumerate(ids, start=1) if trace.present.get(e)), None)
        for k in KS:
            out[k].append(first is not None and first <= k)
    return out


def share(flags: list[bool]) -> float:
    return sum(flags) / len(flags) if flags else 0.0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--traces", type=Path, required=True, help="pass cache written by hqa eval --traces")
    parser.add_argument("--out", type=Path, default=Path(__file__).with_name("fusion_weights.md"))
    parser.add_argument("--default", default="kg=1,bm25=1,dense=0.5,hop=3", help="the engine's weights")
    args = parser.parse_args()

    started = time.perf_counter()
    main_pass, _ = load_traces(args.traces)
    traces = [t for t in main_pass if t.staged is not None]
    default = {k: float(v) for k, v in (part.split("=") for part in args.default.split(","))}
    grid = [
        {"bm25": 1.0, "kg": kg, "dense": dense, "hop": hop}
        for kg, dense, hop in itertools.product(GRID["kg"], GRID["dense"], GRID["hop"])
    ]
    if default not in grid:
        grid.append(default)
    results = []
    for n, weights in enumerate(grid, start=1):
        flags = presence(traces, weights)
        results.append((weights, flags))
        print(f"\r{n}/{len(grid)} weightings", end="", file=sys.stderr, flush=True)
    print(file=sys.stderr)

    folds = [t.fold or 0 for t in traces]
    picked_out_of_fold: dict[int, list[bool]] = {k: [False] * len(traces) for k in KS}
    picks = []
    for fold in sorted(set(folds)):
        train = [i for i, f in enumerate(folds) if f != fold]
        test = [i for i, f in enumerate(folds) if f == fold]
        weights, flags = max(results, key=lambda r: share([r[1][30][i] for i in train]))
        picks.append((fold, weights))
        for k in KS:
            for i in test:
                picked_out_of_fold[k][i] = flags[k][i]

    def name(w: dict[str, float]) -> str:
        return ", ".join(f"{k} {v:g}" for k, v in w.items())

    ranked = sorted(results, key=lambda r: (-share(r[1][30]), -share(r[1][100])))
    default_flags = next(flags for w, flags in results if w == default)
    lines = [
        "# RRF fusion weights on saved evaluation passes",
        "",
        f"Command: `{' '.join(shlex.quote(a) for a in ['python', *sys.argv])}`",
        "",
        f"Machine: {machine()}; {len(traces)} questions; {len(grid)} weightings in "
        f"{time.perf_counter() - started:.0f} s.",
        "",
        "Answer presence in the fused pool (before re-ranking). BM25's weight is 1 throughout.",
        "",
        f"- engine default ({name(default)}): AP@30 {share(default_flags[30]):.3f}, "
        f"AP@100 {share(default_flags[100]):.3f}",
        "- picked on the other fold by AP@30, scored out of fold: "
        f"AP@30 {share(picked_out_of_fold[30]):.3f}, AP@100 {share(picked_out_of_fold[100]):.3f} "
        f"(picks: {'; '.join(f'fold {f}: {name(w)}' for f, w in picks)})",
        "",
        "| kg | dense | hop | AP@30 | AP@100 |",
        "|---:|---:|---:|---:|---:|",
        *(
            f"| {w['kg']:g} | {w['dense']:g} | {w['hop']:g} | {share(f[30]):.3f} | {share(f[100]):.3f} |"
            for w, f in ranked[:15]
        ),
        "",
        f"(top 15 of {len(ranked)} by AP@30 on all questions)",
        "",
    ]
    args.out.parent.mkdir(parents=True, exist_ok=True)
    args.out.write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
