"""The LLM reader reading further down the ranking when its top rows give nothing, on OTT-QA dev.

    .venv/bin/python docs/experiments/2026-11-25-read-further/read_further.py \\
        --index DIR --questions OTTQA_DIR \\
        [--sample 500] [--seed 7] [--skip 100] [--limit 100] [--out DIR]

The questions: the graph-critic sample's report fold (``--sample``, ``--seed``, in sample order),
``--limit`` of them after the first ``--skip`` (the first 100 were read by the graph-critic runs, where
the "deeper" module showed that a rejected first read is often answered further down). Each question runs
the engine's single pass and the LLM reader as shipped (its top 8 rows); when that reading gave nothing
(``NOTHING_READ``: the model said unknown, or no row held what it said), the same ranking is read again
with ``read_further`` on: the same first window, which the model's prompt cache answers quickly, then the
next 8 rows. Nothing is fitted: the window is the reader's own size.

Rows: EM of the reader as shipped and with the further read, how many questions read further, and the
seconds it cost. Per question to ``<out>/questions.jsonl`` (resumes), the report to ``<out>/report.md``.
"""

from __future__ import annotations

import argparse
import shlex
import statistics
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[3]  # docs/experiments/<study>/ -> the repository
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the project and benchmarks_common

from benchmarks_common import machine, pct  # noqa: E402
from graph_critic_sample import BENCHMARKS, fold_of, resumed_rows, sample_arguments  # noqa: E402

from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import exact_match  # noqa: E402
from query.evaluation.readers import sample_questions  # noqa: E402
from query.read.llm_reader import NOTHING_READ, LlmReader  # noqa: E402


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sample_arguments(parser)
    parser.add_argument("--skip", type=int, default=100, help="report-fold questions passed over first")
    parser.add_argument("--limit", type=int, default=100, help="report-fold questions run")
    parser.add_argument("--out", type=Path, default=Path(__file__).parent / "further")
    parser.add_argument(
        "--below",
        type=float,
        default=0.0,
        help="also read further under this confidence (llm_reader.further_below; fit it on a tuning fold)",
    )
    args = parser.parse_args(argv)
    questions = sample_questions(load_benchmark(args.benchmark, args.questions), args.sample, args.seed)
    report = [q for q in questions if fold_of(q.id, args.seed) == "report"][
        args.skip : args.skip + args.limit
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    config = EngineConfig.load(None, reader="llm")
    with Engine.open(args.index, config) as engine:
        assert engine.llm_reader is not None, "the LLM reader did not load"
        shipped = engine.llm_reader
        update = {"read_further": True, "further_below": args.below}
        further = LlmReader(shipped.llm, shipped.settings.model_copy(update=update))
        done = resumed_rows(
            args.out / "questions.jsonl",
            report,
            "read further",
            lambda q: _question(engine, further, q, args.below),
        )
        meta = {
            "version": engine.index_version,
            "reader": shipped.llm.name,
            "on": shipped.settings.read_further,
        }
    rows = [done[q.id] for q in report]
    text = "\n".join(_report(args, argv, rows, meta)) + "\n"
    (args.out / "report.md").write_text(text)
    print(text)
    return 0


def _question(engine: Engine, further: LlmReader, q, below: float) -> dict:
    golds = q.answer_texts()
    started = time.perf_counter()
    staged = engine.run(q.question)
    read = engine.read(staged)
    first = engine.result(staged, read)
    first_s = time.perf_counter() - started
    answer = "" if first.unknown else first.answer
    row = {
        "id": q.id,
        "outcome": read.reading.outcome if read.reading else None,
        "answer": answer,
        "em": exact_match(answer, golds),
        "confidence": first.confidence,
        "s": first_s,
        "further": None,
    }
    if read.reading is not None and (read.reading.outcome in NOTHING_READ or first.confidence < below):
        started = time.perf_counter()
        again = engine.read(staged, further)
        second = engine.result(staged, again)
        said = "" if second.unknown else second.answer
        row["further"] = {
            "outcome": again.reading.outcome if again.reading else None,
            "answer": said,
            "em": exact_match(said, golds),
            "s": time.perf_counter() - started,
        }
    return row


def _report(args, argv, rows: list[dict], meta: dict) -> list[str]:
    command = shlex.join(["python", str(Path(__file__).relative_to(REPO)), *(argv or sys.argv[1:])])
    read_on = [r for r in rows if r["further"] is not None]
    with_further = [r["further"]["em"] if r["further"] else r["em"] for r in rows]
    gained = sum(1 for r in read_on if r["further"]["em"] and not r["em"])
    lost = sum(1 for r in read_on if r["em"] and not r["further"]["em"])
    extra = [r["further"]["s"] for r in read_on]
    first_s = [r["s"] for r in rows]
    both_s = [r["s"] + (r["further"]["s"] if r["further"] else 0) for r in rows]
    shipped = "on" if meta["on"] else "off"
    when = f" or an answer under confidence {args.below} (the more confident wins)" if args.below else ""
    return [
        f"# The LLM reader reading further on {BENCHMARKS[args.benchmark]}: report fold questions "
        f"{args.skip + 1} to {args.skip + len(rows)} (sample {args.sample}, seed {args.seed})",
        "",
        f"Command: `{command}`",
        "",
        f"Index version {meta['version']}; reader {meta['reader']} (read_further {shipped} in the config the "
        "run loaded); machine: " + ", ".join(f"{k} {v}" for k, v in machine().items()),
        "",
        "| reader | EM | questions read further | p50 s/question |",
        "|---|---:|---:|---:|",
        f"| top 8 rows only | {pct([r['em'] for r in rows])} | 0 | {statistics.median(first_s):.1f} |",
        f"| then the next 8 when the top 8 gave nothing{when} | {pct(with_further)} | {len(read_on)} | "
        f"{statistics.median(both_s):.1f} |",
        "",
        f"Read further: {len(read_on)} of {len(rows)} questions, at a p50 of "
        f"{statistics.median(extra) if extra else 0:.1f} s more each (the first window again, from the "
        f"prompt cache, then the second); {gained} answers became right and {lost} became wrong. Outcomes of "
        "the first reading that sent the reader on: "
        + ", ".join(
            f"{o} {sum(1 for r in read_on if r['outcome'] == o)}"
            for o in sorted({r["outcome"] for r in read_on})
        )
        + ".",
    ]


if __name__ == "__main__":
    sys.exit(main())
