"""The graph-critic validator on the LLM reader's answers: a confidence floor vs the model checking them.

    .venv/bin/python docs/experiments/2026-11-25-validator-answer-check/validator_answers.py \\
        --index DIR --questions OTTQA_DIR \\
        --readings benchmarks/results/llm_reader/report_fold/readers/qwen2.5-coder-1.5b-instruct.jsonl \\
        [--sample 500] [--seed 7] [--out docs/experiments/2026-11-25-validator-answer-check]

The labelled sample: every question of the graph-critic sample (``--sample``, ``--seed``, its fold split)
with the LLM reader's single-pass reading from the reader benchmark (``--readings``: its answer, its
confidence, and whether the answer is right by exact match with a gold answer, computed there against the
benchmark's answers). The validator must accept the right answers and reject the wrong ones; an
"unknown" needs no judgement (it is rejected, and it is never right), so the figures are given over all
readings and over the answered ones alone. Balanced accuracy, since right answers are a minority.

Validators:

- **confidence floor**: the reader's confidence ≥ a floor (what the mode ships);
- **answer check**: the bundled model reads the question, the answer and the rows it was read from
  (``LlmValidator.check``) and gives P(correct) ≥ a floor;
- **both**: confidence ≥ one floor and P(correct) ≥ another;
- with ``--reread``, **the same answer again**: the LLM reader reads the same top rows once more in
  reverse order, and the answer is accepted when the second reading gives it too (normalized exact
  match), alone or beside a confidence floor. A small model's answer that depends on where the rows
  stand in the prompt is more likely a guess; the second reading costs one more read (~12 s).

The rows: the engine's single pass is run again (candidate reader, no LLM read) and its top 8 rows — what
the LLM reader was shown — are searched for the answer as the reader's support check does; the holding
rows go first, then the top rows, 3 in all. Every floor is fitted on the tuning fold (best balanced
accuracy; ties to the lower floor) and quoted on the report fold. Judgements go to
``<out>/judgements.jsonl`` (resumes), the report to ``<out>/report.md``.
"""

from __future__ import annotations

import argparse
import json
import shlex
import statistics
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine  # noqa: E402
from graph_critic_sample import BENCHMARKS, fold_of, resumed_rows, sample_arguments  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import exact_match, token_f1  # noqa: E402
from query.evaluation.readers import sample_questions  # noqa: E402
from query.llm.chat import Llm  # noqa: E402
from query.modes.graph_critic.llm_validator import LlmValidator  # noqa: E402
from query.read.llm_reader import LlmReader  # noqa: E402
from query.read.support import find_support  # noqa: E402
from schemas.settings import HqaSettings  # noqa: E402

SHOWN = 8  # rows the LLM reader reads (LlmReaderSettings.evidence)
ROWS = 3
FLOORS = [round(0.05 * i, 2) for i in range(0, 20)]


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(parser)
    parser.add_argument("--readings", type=Path, required=True, help="the reader benchmark's LLM jsonl")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent)
    parser.add_argument("--reread", action="store_true", help="also read the rows again in reverse order")
    parser.add_argument("--skip-check", action="store_true", help="no answer check (P(correct) = 0)")
    parser.add_argument("--limit", type=int, help="only the sample's first N questions (benchmark order)")
    args = parser.parse_args(argv)
    questions = sample_questions(load_benchmark(args.benchmark, args.questions), args.sample, args.seed)
    questions = questions[: args.limit] if args.limit else questions
    readings = {r["question_id"]: r for r in map(json.loads, args.readings.read_text().splitlines())}
    missing = [q.id for q in questions if q.id not in readings]
    if missing:
        raise SystemExit(f"{len(missing)} sample questions have no reading in {args.readings}")
    args.out.mkdir(parents=True, exist_ok=True)
    with Engine.open(args.index, EngineConfig(reader="candidates")) as engine:
        llm = Llm.open(engine.config.llm.in_state_dir(HqaSettings().state_dir))
        checker = None if args.skip_check else LlmValidator(llm, rows=ROWS)
        # the model's own second answer, however unsure: no confidence cut, no candidate fallback
        own = {"min_confidence": 0.0, "fallback_to_candidates": False}
        reader = LlmReader(llm, engine.config.llm_reader.model_copy(update=own)) if args.reread else None
        judged = resumed_rows(
            args.out / "judgements.jsonl",
            questions,
            "answers checked",
            lambda q: _judge(engine, checker, reader, q, readings[q.id], args.seed),
        )
        model, version = llm.name, engine.index_version
        llm.close()
    rows = [judged[q.id] for q in questions]
    lines = _report(argv, rows, model, version, BENCHMARKS[args.benchmark])
    (args.out / "report.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    return 0


def _judge(
    engine: Engine, checker: LlmValidator | None, reader: LlmReader | None, q, reading: dict, seed: int
) -> dict:
    answer = reading["prediction"] if reading["answered"] else ""
    row = {
        "id": q.id,
        "fold": fold_of(q.id, seed),
        "right": bool(reading["answered"] and reading["em"]),
        "answered": bool(answer),
        "confidence": reading.get("confidence") or 0.0,
        "p": 0.0,
        "held": None,
        "ms": 0.0,
    }
    if not answer:
        return row
    staged = engine.run(q.question)
    top = staged.rankings["final"][:SHOWN]
    shown = [staged.rows[e] for e in top]
    support = find_support(answer, [r.text for r in shown], [], [r.source_type == "kg" for r in shown])
    holders = list(support.rows) if support is not None else []
    order = [*holders, *(i for i in range(len(shown)) if i not in holders)]
    row["held"] = bool(holders)
    if checker is not None:
        verdict = checker.check(q.question, answer, [shown[i] for i in order])
        row.update(p=round(verdict.probability, 4), ms=round(verdict.ms, 1))
    if reader is not None:  # the same rows, last first: does the model give the same answer?
        staged.rankings["final"] = [*reversed(top), *staged.rankings["final"][SHOWN:]]
        again = engine.read(staged, reader=reader)
        said = "" if again.choice.unknown else again.choice.answer
        row.update(
            again=said,
            again_confidence=round(again.choice.confidence, 4),
            agree=bool(said) and exact_match(said, [answer]) > 0,
            again_f1=round(token_f1(said, [answer]), 4) if said else 0.0,
            again_ms=round(again.reading.ms, 1) if again.reading is not None else 0.0,
        )
    return row


def _verdicts(rows: list[dict], accept) -> tuple[int, int, int, int]:
    """(right accepted, right rejected, wrong accepted, wrong rejected)."""
    ra = sum(1 for r in rows if r["right"] and accept(r))
    wa = sum(1 for r in rows if not r["right"] and accept(r))
    right = sum(1 for r in rows if r["right"])
    return ra, right - ra, wa, len(rows) - right - wa


def _balanced(rows: list[dict], accept) -> float:
    ra, rr, wa, wr = _verdicts(rows, accept)
    return (ra / max(1, ra + rr) + wr / max(1, wa + wr)) / 2


def _both(c: float, t: float):
    return lambda r: r["answered"] and r["confidence"] >= c and r["p"] >= t


def fit_both(tune: list[dict]) -> tuple[float, float, float]:
    """The confidence floor and P(correct) floor with the best balanced accuracy on ``tune`` (ties: the
    lower floors), and that accuracy."""
    pairs = [(a, b) for a in FLOORS for b in FLOORS]
    c, t = max(pairs, key=lambda f: (_balanced(tune, _both(*f)), -f[0], -f[1]))
    return c, t, _balanced(tune, _both(c, t))


def _again(c: float):
    return lambda r: r["answered"] and r.get("agree", False) and r["confidence"] >= c


def _rules(tune: list[dict]) -> list[tuple[str, object]]:
    """Each validator with its floors fitted on ``tune``."""
    c = max(FLOORS, key=lambda f: (_balanced(tune, _both(f, 0.0)), -f))
    rules: list[tuple[str, object]] = [(f"confidence ≥ {c}", _both(c, 0.0))]
    if any(r["p"] for r in tune):
        t = max(FLOORS, key=lambda f: (_balanced(tune, _both(0.0, f)), -f))
        both = fit_both(tune)
        rules += [
            (f"answer check: P(correct) ≥ {t}", _both(0.0, t)),
            (f"both: confidence ≥ {both[0]} and P(correct) ≥ {both[1]}", _both(*both[:2])),
        ]
    if any("agree" in r for r in tune):
        a = max(FLOORS, key=lambda f: (_balanced(tune, _again(f)), -f))
        rules += [
            ("the same answer again (rows in reverse order)", _again(0.0)),
            (f"the same answer again and confidence ≥ {a}", _again(a)),
        ]
    return [*rules, ("accept every answer", lambda r: r["answered"])]


def _report(argv, rows: list[dict], model: str, version: str, benchmark: str) -> list[str]:
    command = shlex.join(
        [
            "python",
            "docs/experiments/2026-11-25-validator-answer-check/validator_answers.py",
            *(argv or sys.argv[1:]),
        ]
    )
    tune = [r for r in rows if r["fold"] == "tune"]
    report = [r for r in rows if r["fold"] == "report"]
    answered = [r for r in report if r["answered"]]
    held = [r for r in rows if r["held"] is not None]
    ms = [r["ms"] for r in rows if r["answered"]]

    def count(part):
        return f"{sum(r['right'] for r in part)} right of {len(part)}"

    lines = [
        f"# graph-critic validator on the LLM reader's answers ({benchmark}, report fold)",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {version}; checking model {model}; machine: "
        + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        f"Readings: tune {count(tune)}, report {count(report)} ({len(answered)} answered). The answer was "
        f"found in the reader's top {SHOWN} rows for {sum(r['held'] for r in held)} of {len(held)} answered "
        f"questions (the index was rebuilt since the readings). Answer check: p50 "
        f"{statistics.median(ms) if ms else 0:.0f} ms a judgement. Floors fitted on the tuning fold.",
        "",
        "| validator | balanced accuracy, all readings | right accepted | wrong rejected | "
        "balanced accuracy, answered only |",
        "|---|---:|---:|---:|---:|",
    ]
    for name, accept in _rules(tune):
        ra, rr, wa, wr = _verdicts(report, accept)
        lines.append(
            f"| {name} | {100 * _balanced(report, accept):.1f} % | {ra}/{ra + rr} | {wr}/{wa + wr} | "
            f"{100 * _balanced(answered, accept):.1f} % |"
        )
    lines += ["", "The issue's bar: the validator right on ≥ 80 % of a labelled sample."]
    return lines


if __name__ == "__main__":
    sys.exit(main())
