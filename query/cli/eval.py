"""``hqa eval``: run the engine over a benchmark with its stage, pool and source ablations; write a report."""

from __future__ import annotations

import argparse
import os
import shlex
import time
from datetime import UTC, datetime
from pathlib import Path

from query.cli.console import console
from query.evaluation.machine import machine
from schemas.settings import HqaSettings

STAGE_ORDER = [
    "bm25-baseline",
    "bm25",
    "dense",
    "kg",
    "hop",
    "rrf-bm25-dense",
    "rrf-no-hop",
    "rrf-all",
    "rerank1-hand",
    "rerank1-learned",
    "rerank1-learned-head300",
    "rerank1-learned-head1000",
    "rerank2",
]
SOURCE_CONFIGS = ["rrf-all", "rerank1-learned"]
ANSWER_TRAINING = "rerank1-learned"
"""The ranking whose top evidence the answer scorer is fitted on (every question has it)."""


def add_eval(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("eval", help="evaluate the engine on a benchmark: metrics, ablations, report")
    p.add_argument("--benchmark", default="ottqa", help="question format: ottqa or kgqa")
    p.add_argument("--questions", type=Path, required=True, help="benchmark question file or folder")
    p.add_argument("--index", type=Path, help="index root or version (default <state_dir>/indexes)")
    p.add_argument("--limit", type=int, help="first N questions only")
    p.add_argument("--sample", type=int, help="a fixed random sample of N questions (with --seed)")
    p.add_argument("--seed", type=int, default=13, help="seed of --sample and of the readers' folds")
    p.add_argument(
        "--readers",
        help="reader axis, comma-separated: candidates and LLM backends "
        "(e.g. candidates,qwen2.5-coder-0.5b-instruct,qwen2.5-coder-1.5b-instruct); resumable with --out",
    )
    p.add_argument(
        "--tune-share", type=float, default=0.2, help="share of questions in the readers' tuning fold"
    )
    p.add_argument(
        "--fold", choices=("tune", "report"), help="evaluate one fold of the (sampled) questions only"
    )
    p.add_argument(
        "--no-ablations",
        action="store_true",
        help="skip stage two, the source and learned-reader ablations and the fitted weights' files",
    )
    p.add_argument("--engine-config", "--eval-config", dest="engine_config", type=Path, help="engine config")
    p.add_argument(
        "--reader", choices=("llm", "candidates"), help="the engine's reader (default: the engine config's)"
    )
    p.add_argument("--out", type=Path, help="results folder (default <state_dir>/eval/<benchmark>-<time>)")
    p.add_argument("--folds", type=int, default=2, help="cross-fitting folds of the learned ranker")
    p.add_argument("--no-stage2", action="store_true", help="skip the late-interaction stage (slow)")
    p.add_argument("--stage2-limit", type=int, help="run stage two on the first N questions only")
    p.add_argument("--source-limit", type=int, help="source-restricted retrieval on the first N only")
    p.add_argument("--traces", type=Path, help="pass cache: read if it exists, else written after the passes")
    p.add_argument(
        "--sources", default="text;table", help="source ablations, ';'-separated sets: 'text;table;kg+text'"
    )


def cmd_eval(args: argparse.Namespace, settings: HqaSettings) -> int:
    from query.cli.ask import engine_config
    from query.engine import Engine
    from query.evaluation.baseline import PlainBm25
    from query.evaluation.crossfit import fit_answer_scorer, fit_ranker
    from query.evaluation.loaders import load_benchmark
    from query.evaluation.passes import BASELINE
    from query.evaluation.report import ReportMeta, write_report
    from query.evaluation.routing import route_evals, route_summaries
    from query.evaluation.runner import EvalSettings, Evaluator, rerank_all, run_ablation_passes
    from query.evaluation.traces import load_traces, save_traces

    started_at, started = datetime.now(UTC), time.perf_counter()
    questions = load_benchmark(args.benchmark, args.questions, args.limit)
    if args.sample:
        from query.evaluation.readers import sample_questions

        questions = sample_questions(questions, args.sample, args.seed)
    if args.fold:
        from query.evaluation.readers import folds

        fold_of = folds(questions, args.tune_share, args.seed)
        questions = [q for q in questions if fold_of[q.id] == args.fold]
    config = engine_config(args, settings)
    sources = [part.split("+") for part in args.sources.replace(",", ";").split(";") if part]
    if args.no_ablations:
        sources = []
    stage2 = not (args.no_stage2 or args.no_ablations)
    eval_settings = EvalSettings(folds=args.folds, stage2=stage2, source_ablations=sources)
    out = args.out or settings.state_dir / "eval" / f"{args.benchmark}-{started_at:%Y%m%dT%H%M%S}"
    index_dir = args.index or settings.index_dir
    with console.status("opening the index and loading models"):
        engine = Engine.open(index_dir, config, state_dir=settings.state_dir)
    with engine:
        with console.status("opening (or building) the plain BM25 baseline"):
            baseline = PlainBm25.open_or_build(engine.reader.path, settings.state_dir / "eval" / "baseline")
        evaluator = Evaluator(engine, eval_settings, baseline)
        if args.traces is not None and args.traces.exists():
            main, by_source = load_traces(args.traces)
            rerank_all(evaluator, main, by_source)
        else:
            main, by_source = run_ablation_passes(evaluator, questions, index_dir, args.source_limit)
            if args.traces is not None:
                save_traces(args.traces, main, by_source)
        examples = [] if args.no_ablations else evaluator.fit_answer_folds(main, ANSWER_TRAINING)
        summaries = evaluator.summaries(main, STAGE_ORDER[:-1])
        by_name = {s.config: s for s in summaries}
        base = max(
            ("rerank1-hand", "rerank1-learned"), key=lambda c: by_name[c].ap[30] if c in by_name else -1
        )
        if eval_settings.stage2 and evaluator.pair_scorer is None:  # off in the engine: ablate it anyway
            from query.rerank.pair_scorers import open_pair_scorer, pair_scorer_settings

            evaluator.pair_scorer = open_pair_scorer(pair_scorer_settings(eval_settings.stage2_scorer))
        if eval_settings.stage2:
            from ingest.progress import progress

            subset = main[: args.stage2_limit] if args.stage2_limit else main
            bar = progress("eval stage two", total=len(subset), unit="question")
            for trace in subset:
                evaluator.stage2(trace, base)
                bar.update(1)
            bar.close()
            prefix = f"first{len(subset)}/" if len(subset) < len(main) else ""
            weights = ["rerank2", *(f"rerank2-w{w:g}" for w in eval_settings.stage2_weights[1:])]
            configs = [BASELINE, base, *weights] if prefix else weights
            stage2 = evaluator.summaries(subset, configs, prefix=prefix)
            for summary in stage2[-len(weights) :]:
                summary.description += f" (on {base})"
            summaries += stage2
        for sources in eval_settings.source_ablations:
            name = "+".join(sources)
            filtered = evaluator.summaries(main, [f"only-{name}/{c}" for c in SOURCE_CONFIGS])
            for s in filtered:
                s.description = f"{s.config.split('/')[1]}, the all-source pool filtered to {name} evidence"
            summaries += filtered
        n_source = len(next(iter(by_source.values()), main))
        prefix = f"first{n_source}/" if n_source < len(main) else ""
        if prefix:  # the all-source figures on the same questions, to compare the restricted passes with
            have = {s.config for s in summaries}
            todo = [c for c in SOURCE_CONFIGS if prefix + c not in have]
            summaries += evaluator.summaries(main[:n_source], todo, prefix)
        for name, traces in by_source.items():
            restricted = evaluator.summaries(traces, SOURCE_CONFIGS, prefix=f"{prefix}sources={name}/")
            for s in restricted:
                s.description = f"{s.config.rsplit('/', 1)[1]}, retrieval restricted to {name} evidence"
            summaries += restricted
        # the reader's ablation: the default ranking read with a candidate scorer fitted on folds
        if not args.no_ablations:
            summaries += evaluator.summaries(main, [base], learned_reader=True)
        # end to end as shipped: the retrieve-read mode alone, and the router over every configured mode
        reader = engine.pipeline.reader.name
        summaries += route_summaries(route_evals(evaluator, main), main, reader)
        if args.readers:
            summaries += _reader_axis(evaluator, main, questions, args, out)
        out.mkdir(parents=True, exist_ok=True)
        everyone = f"all {len(main)} {args.benchmark} questions"
        if not args.no_ablations:  # the learned weights belong to the ablations
            fit_ranker(main, everyone, config.rerank.stage1_keep).save(out / "ranker.json")
            fit_answer_scorer(examples, f"{ANSWER_TRAINING} candidates of {everyone}").save(
                out / "answer_scorer.json"
            )
        meta = ReportMeta(
            title=f"hqa evaluation on {args.benchmark} ({len(questions)} questions)",
            command=_command_line(args.argv),
            benchmark=args.benchmark,
            questions_path=str(args.questions),
            index_version=engine.index_version,
            limit=args.limit,
            machine=machine(),
            started=started_at,
            seconds=round(time.perf_counter() - started, 1),
            notes=[
                f"embedding model of the index: {engine.pipeline.retrieval.embedder.model_name}",
                f"learned stage one: pairwise logistic regression cross-fitted on {args.folds} folds of "
                "these questions (out-of-sample figures); ranker.json holds the weights fitted on all",
                f"answers: a logistic-regression candidate scorer fitted on the candidates of "
                f"{ANSWER_TRAINING}, cross-fitted on the same folds; answer_scorer.json: fitted on all",
                f"stage two re-ranks the top {config.rerank.stage1_keep} of {base}",
                "engine config: " + config.model_dump_json(exclude={"llm"}),
            ],
        )
        paths = write_report(out, summaries, meta)
    console.print(f"report: {paths.markdown}")
    for s in summaries:
        console.print(
            f"{s.config:40s} AP@30 {s.ap[30]:.3f}  AP@100 {s.ap[100]:.3f}  AP@1000 {s.ap[1000]:.3f}  "
            f"Hit@1 {s.hit[1]:.3f}  EM {s.em:.3f}"
        )
    return 0


def _reader_axis(evaluator, traces, questions, args: argparse.Namespace, out: Path):
    """The reader rows: the engine-as-shipped retrieval read by each named reader, on two folds."""
    from query.evaluation.loaders import load_benchmark
    from query.evaluation.readers import (
        folds,
        open_readers,
        reader_evals,
        reader_summaries,
        sample_questions,
        write_sample,
    )

    names = [n.strip() for n in args.readers.split(",") if n.strip()]
    fold_of = folds(questions, args.tune_share, args.seed)
    if args.fold:  # the folds of the whole sample, not of the one fold evaluated
        everyone = load_benchmark(args.benchmark, args.questions, args.limit)
        fold_of = folds(
            sample_questions(everyone, args.sample or len(everyone), args.seed), args.tune_share, args.seed
        )
    write_sample(out / "sample.json", questions, fold_of, args.seed)
    with console.status(f"loading readers {', '.join(names)}"):
        readers = open_readers(evaluator, names)
    settings = evaluator.engine.config.llm_reader.model_dump_json()
    shipped = evaluator.engine.config.llm.backend
    describe = {
        n: "the candidate reader (no model)"
        if n == "candidates"
        else f"LLM reader {n}{' (the configured model)' if n == shipped else ''}, {settings}"
        for n in names
    }
    evals = reader_evals(evaluator, traces, readers, out / "readers")
    return reader_summaries(evals, fold_of, describe)


def _command_line(argv: list[str]) -> str:
    """The command as typed, with the ``HQA_`` settings from the environment that shaped the run."""
    env = [f"{k}={shlex.quote(v)}" for k, v in sorted(os.environ.items()) if k.startswith("HQA_")]
    env = [e for e in env if not e.startswith("HQA_PROGRESS=")]
    return " ".join([*env, "hqa", *(shlex.quote(a) for a in argv)])
