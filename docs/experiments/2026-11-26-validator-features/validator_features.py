"""A learned validator: a logistic regression over what the engine knows of a reading, against confidence.

    .venv/bin/python docs/experiments/2026-11-26-validator-features/validator_features.py \\
        [--readings benchmarks/results/llm_reader/report_fold/readers/qwen2.5-coder-1.5b-instruct.jsonl] \\
        [--candidates benchmarks/results/llm_reader/report_fold/readers/candidates.jsonl] \\
        [--judgements docs/experiments/2026-11-25-validator-answer-check/judgements.jsonl] \\
        [--out docs/experiments/2026-11-26-validator-features]

The confidence floor is the graph-critic validator's best single signal on OTT-QA, at ~70 % balanced
accuracy; the issue asks for 80 %. Before asking the model more questions, this checks whether what the
engine already has at run time, taken together, says more than confidence alone: the LLM reader's
confidence and reply length and whether its answer held on the first try, the model's answer check
P(correct) (``validator_answers.py``), and the candidate reader (which always runs, as the fallback) —
its confidence and whether it gives the same answer. Nothing here reads a gold answer except the label.

The labelled answers and their folds are ``validator_answers.py``'s (the graph-critic sample, folds by a
hash of the id). The model and its decision threshold are fitted on the tuning fold; the report fold is
quoted. No model is run: the inputs are saved files.
"""

from __future__ import annotations

import argparse
import json
import shlex
import sys
from pathlib import Path

import numpy as np
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from query.evaluation.metrics import exact_match  # noqa: E402

READERS = REPO / "benchmarks/results/llm_reader/report_fold/readers"
FEATURES = [
    "LLM confidence",
    "answer check P(correct)",
    "candidate reader gives the same answer",
    "candidate reader's confidence",
    "answer is a number",
    "answer words",
    "reply tokens",
    "answer held on the first try",
]


def features(reading: dict, candidate: dict, judged: dict) -> list[float]:
    answer = reading["prediction"] or ""
    other = candidate["prediction"] or ""
    return [
        reading.get("confidence") or 0.0,
        judged["p"],
        float(bool(answer) and exact_match(other, [answer]) > 0),
        candidate.get("confidence") or 0.0,
        float(answer.replace(",", "").replace(".", "").strip().isdigit()),
        float(len(answer.split())),
        float(reading.get("completion_tokens") or 0),
        float(reading.get("read_outcome") == "supported"),
    ]


def balanced(y: np.ndarray, accept: np.ndarray) -> float:
    return float((accept[y].mean() + (~accept[~y]).mean()) / 2)


def best_threshold(y: np.ndarray, score: np.ndarray) -> float:
    """The cut with the best balanced accuracy (ties: the lower cut)."""
    cuts = np.unique(score)
    return float(max(cuts, key=lambda c: (balanced(y, score >= c), -c)))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--readings", type=Path, default=READERS / "qwen2.5-coder-1.5b-instruct.jsonl")
    parser.add_argument("--candidates", type=Path, default=READERS / "candidates.jsonl")
    parser.add_argument(
        "--judgements",
        type=Path,
        default=REPO / "docs/experiments/2026-11-25-validator-answer-check/judgements.jsonl",
    )
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    args = parser.parse_args(argv)
    readings = {r["question_id"]: r for r in map(json.loads, args.readings.read_text().splitlines())}
    candidates = {r["question_id"]: r for r in map(json.loads, args.candidates.read_text().splitlines())}
    judged = [j for j in map(json.loads, args.judgements.read_text().splitlines()) if j["answered"]]
    folds = {}
    for fold in ("tune", "report"):
        rows = [j for j in judged if j["fold"] == fold]
        x = np.array([features(readings[j["id"]], candidates[j["id"]], j) for j in rows])
        y = np.array([bool(j["right"]) for j in rows])
        folds[fold] = (x, y)
    (xt, yt), (xr, yr) = folds["tune"], folds["report"]
    scale = xt.std(axis=0) + 1e-9
    model = LogisticRegression(class_weight="balanced", max_iter=2000).fit(xt / scale, yt)
    learned_t, learned_r = model.predict_proba(xt / scale)[:, 1], model.predict_proba(xr / scale)[:, 1]
    rows = []
    for name, tune_score, report_score in [
        ("confidence alone", xt[:, 0], xr[:, 0]),
        ("logistic regression over the 8 features", learned_t, learned_r),
    ]:
        cut = best_threshold(yt, tune_score)
        accept = report_score >= cut
        rows.append(
            f"| {name} | {roc_auc_score(yr, report_score):.3f} | {100 * balanced(yr, accept):.1f} % | "
            f"{int(accept[yr].sum())}/{int(yr.sum())} | {int((~accept[~yr]).sum())}/{int((~yr).sum())} |"
        )
    command = shlex.join(
        [
            "python",
            "docs/experiments/2026-11-26-validator-features/validator_features.py",
            *(argv or sys.argv[1:]),
        ]
    )
    weights = ", ".join(f"{n} {w:+.2f}" for n, w in zip(FEATURES, model.coef_[0], strict=True))
    lines = [
        "# A learned validator over the engine's run-time signals (OTT-QA dev, report fold)",
        "",
        f"Command: `{command}`",
        "",
        f"Answered readings: tune {len(yt)} ({int(yt.sum())} right), report {len(yr)} ({int(yr.sum())} "
        "right). Model and threshold fitted on the tuning fold; AUC and balanced accuracy on the report "
        "fold.",
        "",
        "| validator | AUC | balanced accuracy | right accepted | wrong rejected |",
        "|---|---:|---:|---:|---:|",
        *rows,
        "",
        f"Weights (features scaled by their tuning-fold spread): {weights}.",
        "",
        "The issue's bar: the validator right on ≥ 80 % of a labelled sample.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


if __name__ == "__main__":
    sys.exit(main())
