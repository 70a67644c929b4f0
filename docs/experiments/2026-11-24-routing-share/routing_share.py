"""Which mode the router gives each question of a benchmark, without retrieving: the share per mode.

    .venv/bin/python docs/experiments/2026-11-24-routing-share/routing_share.py \\
        --index DIR --questions PATH [--benchmark ottqa]
        [--limit N] [--out docs/experiments/2026-11-24-routing-share/routing_share.md]

Each question is understood once (intent, linking); every configured mode but the fallback
(``retrieve-read``, which always answers) is then run in the router's order, exactly as ``Engine.ask``
would run it. A question none of them takes goes to ``retrieve-read``, whose answer does not change by
routing, so the EM of the questions it keeps is the one the full evaluation reports. For the questions
another mode takes, the share and that mode's EM on them are printed: the router takes a benchmark's
questions away from retrieve-read only where this says so.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from collections import Counter
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine  # noqa: E402

from ingest.progress import progress  # noqa: E402
from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import exact_match  # noqa: E402
from query.modes import Declined  # noqa: E402
from query.modes.retrieve_read import NAME as FALLBACK  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--benchmark", default="ottqa")
    parser.add_argument("--limit", type=int)
    parser.add_argument("--out", type=Path)
    args = parser.parse_args(argv)
    questions = load_benchmark(args.benchmark, args.questions, args.limit)
    taken: Counter = Counter()
    reasons: Counter = Counter()
    right: Counter = Counter()
    examples: dict[str, list[str]] = {}
    ms: list[float] = []
    with Engine.open(args.index, EngineConfig(reader="candidates")) as engine:  # routes only, reads nothing
        bar = progress("routing", total=len(questions), unit="question")
        for question in questions:
            started = time.perf_counter()
            understanding = engine.understand(question.question)
            mode_name = FALLBACK
            for mode, estimate, why in engine.router.order(understanding):
                if mode.name == FALLBACK:
                    continue
                outcome = mode.run(understanding) if estimate > 0 else Declined(mode.name, why)
                if isinstance(outcome, Declined):
                    reasons[f"{mode.name}: {_kind(outcome.reason)}"] += 1
                    continue
                mode_name = mode.name
                right[mode_name] += exact_match(outcome.answer, question.answer_texts())
                examples.setdefault(mode_name, []).append(f"{question.question} → {outcome.answer}")
                break
            ms.append((time.perf_counter() - started) * 1000)
            taken[mode_name] += 1
            bar.update(1)
        bar.close()
        version = engine.index_version
    lines = _report(args, argv, questions, taken, right, reasons, examples, ms, version)
    text = "\n".join(lines) + "\n"
    print(text)
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(text)
    return 0


def _kind(reason: str) -> str:
    """A decline reason without its names and numbers, so reasons of one kind count together."""
    for marker in (" (", " for ", " of ", ": "):
        reason = reason.split(marker)[0]
    return reason


def _report(args, argv, questions, taken, right, reasons, examples, ms, version) -> list[str]:
    n = len(questions)
    command = " ".join(
        [
            "python docs/experiments/2026-11-24-routing-share/routing_share.py",
            *(shlex.quote(a) for a in (argv or sys.argv[1:])),
        ]
    )
    lines = [
        f"# Routing share: {args.benchmark} ({n} questions)",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {version}; machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        "| mode | questions | share | EM on them |",
        "|---|---:|---:|---:|",
    ]
    for mode, count in taken.most_common():
        em = "(as in the full evaluation)" if mode == FALLBACK else f"{100 * right[mode] / count:.1f}"
        lines.append(f"| {mode} | {count} | {100 * count / n:.1f} % | {em} |")
    lines += ["", "Why the other modes declined (by kind):", ""]
    lines += [f"- {reason}: {count}" for reason, count in reasons.most_common()]
    for mode, shown in examples.items():
        lines += ["", f"Questions {mode} took (first 10):", ""]
        lines += [f"- {line}" for line in shown[:10]]
    lines += [
        "",
        f"Understanding and routing per question: p50 {statistics.median(ms):.1f} ms, "
        f"max {max(ms):.1f} ms (no retrieval).",
    ]
    return lines


if __name__ == "__main__":
    sys.exit(main())
