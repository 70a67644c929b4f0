"""The embedder table (issue 34 part 6): texts/s of MiniLM, the MiniLM distilled with model2vec and
wordllama on the same texts in one run, beside OTT-QA answer presence of an index built with each.

    # 0. a seeded OTT-QA subset (every sampled question's gold table and the passages its cells link to,
    #    plus random other tables with theirs), built once per model with HQA_INDEX__EMBEDDING_MODEL
    python benchmarks/embedders.py subset /work/shared/data/bench/ottqa OUT --questions 150 --tables 150
    # 1. speed: the same seeded sample of an index version's evidence texts, every model in turn, in
    #    interleaved rounds (the build's batch policy: IndexSettings' batch size, workers and precision)
    python benchmarks/embedders.py speed --evidence VERSION_DIR --texts 4000 --rounds 2 --out speed.json
    # 2. answer presence of the retrieval configurations on each model's index (hqa eval's passes)
    python benchmarks/embedders.py ap --index VERSION_DIR --questions OUT --out ap-MODEL.json
    # 3. the table
    python benchmarks/embedders.py table --speed speed.json --report all-MiniLM-L6-v2=ap-minilm.json \\
        --report minilm-l6-m2v-256=ap-m2v.json --report wordllama-l2-256=ap-wordllama.json \\
        --rows 250000000 --out benchmarks/results/embedders

A model's encode is timed against itself only; the figures are ratios to MiniLM in the same run, with
the load average (``uptime``) before and after each timing, since the machine is shared.
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import random
import sys
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))  # before benchmarks/: its ingest.py would shadow the ingest package

from index.build_stages import DISTILLED_MODELS, build_embedder  # noqa: E402
from index.evidence_reader import EvidenceReader  # noqa: E402
from schemas.settings import HqaSettings  # noqa: E402

MODELS = ("all-MiniLM-L6-v2", "minilm-l6-m2v-256", "wordllama-l2-256")
FUSED = ("dense", "bm25", "rrf-bm25-dense", "rrf-no-hop", "rrf-all", "rerank1-learned")
AP_KS = ("10", "30", "100")


def linked_passages(table: dict) -> set[str]:
    """The passage keys (``/wiki/…``) a table's header and cells link to."""
    links: set[str] = set()
    for cell in table.get("header", []):
        links.update(cell[1])
    for row in table.get("data", []):
        for cell in row:
            links.update(cell[1])
    return links


def make_subset(release: Path, questions: int, extra_tables: int, seed: int) -> tuple[list, dict, dict]:
    rng = random.Random(seed)
    dev = json.loads((release / "dev.json").read_text())
    with gzip.open(release / "tables.json.gz", "rt") as f:
        tables = json.load(f)
    with gzip.open(release / "passages.json.gz", "rt") as f:
        passages = json.load(f)
    asked = rng.sample([q for q in dev if q["table_id"] in tables], questions)
    gold = sorted({q["table_id"] for q in asked})
    others = sorted(set(tables) - set(gold))
    kept_tables = gold + rng.sample(others, min(extra_tables, len(others)))
    kept = {t: tables[t] for t in kept_tables}
    links = set().union(*(linked_passages(t) for t in kept.values()))
    kept_passages = {k: passages[k] for k in sorted(links) if k in passages}
    return asked, kept, kept_passages


def subset(args: argparse.Namespace) -> None:
    """Write the subset as a release folder ``hqa build --ottqa`` and ``hqa eval`` read, with subset.json."""
    asked, tables, passages = make_subset(args.release, args.questions, args.tables, args.seed)
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dev.json").write_text(json.dumps(asked))
    with gzip.open(args.out / "tables.json.gz", "wt") as f:
        json.dump(tables, f)
    with gzip.open(args.out / "passages.json.gz", "wt") as f:
        json.dump(passages, f)
    summary = {
        "command": "python benchmarks/embedders.py " + " ".join(sys.argv[1:]),
        "seed": args.seed,
        "questions": len(asked),
        "gold_tables": len({q["table_id"] for q in asked}),
        "tables": len(tables),
        "table_rows": sum(len(t["data"]) for t in tables.values()),
        "passages": len(passages),
    }
    (args.out / "subset.json").write_text(json.dumps(summary, indent=2))
    print(json.dumps(summary, indent=2))


def load_average() -> float:
    return round(os.getloadavg()[0], 2)


def sample_texts(version_dir: Path, n: int, seed: int) -> list[str]:
    """``n`` evidence texts drawn with ``seed`` from every evidence file of a built version."""
    texts: list[str] = []
    for batch in EvidenceReader(version_dir).batches(["text"], 50_000):
        texts += batch.column("text").to_pylist()
    return random.Random(seed).sample(texts, min(n, len(texts)))


def speed(args: argparse.Namespace) -> dict:
    settings = HqaSettings()
    texts = sample_texts(args.evidence, args.texts, args.seed)
    cache = args.embedding_cache or settings.embedding_cache_dir
    embedders = {}
    for name in args.models:
        index = settings.index.model_copy(update={"embedding_model": name})
        embedders[name] = build_embedder(index, cache)
        embedders[name].encode(texts[:64], on_progress=lambda n: None)  # load and warm up, untimed
    runs: dict[str, list[dict]] = {name: [] for name in args.models}
    for _ in range(args.rounds):
        for name, embedder in embedders.items():
            before = load_average()
            started = time.perf_counter()
            embedder.encode(texts, on_progress=lambda n: None)
            seconds = time.perf_counter() - started
            runs[name].append(
                {
                    "seconds": round(seconds, 3),
                    "texts_per_s": round(len(texts) / seconds, 1),
                    "load_before": before,
                    "load_after": load_average(),
                }
            )
    result = {
        "command": "python benchmarks/embedders.py " + " ".join(sys.argv[2:]),
        "texts": len(texts),
        "mean_chars": round(sum(map(len, texts)) / len(texts), 1),
        "seed": args.seed,
        "models": {
            name: {
                "model_name": embedders[name].model_name,
                "dimension": embedders[name].dimension,
                "batch_size": embedders[name].settings.batch_size,
                "workers": embedders[name].settings.workers,
                "precision": embedders[name].bulk_precision,
                "runs": rs,
                "best_texts_per_s": max(r["texts_per_s"] for r in rs),
            }
            for name, rs in runs.items()
        },
    }
    args.out.write_text(json.dumps(result, indent=2))
    print(json.dumps(result, indent=2))
    return result


def ap(args: argparse.Namespace) -> None:
    """Answer presence of the retrieval configurations only: ``hqa eval``'s retrieval pass (and its
    cross-fitted stage one), without the end-to-end reading rows, which do not depend on the embedder
    and cost as much again."""
    from query.cli.eval import STAGE_ORDER
    from query.config import EngineConfig
    from query.engine import Engine
    from query.evaluation.baseline import PlainBm25
    from query.evaluation.loaders import load_benchmark
    from query.evaluation.runner import EvalSettings, Evaluator, run_ablation_passes

    settings = HqaSettings()
    questions = load_benchmark("ottqa", args.questions, args.limit)
    started, load_before = time.perf_counter(), load_average()
    with Engine.open(args.index, EngineConfig(reader="candidates"), state_dir=settings.state_dir) as engine:
        baseline = PlainBm25.open_or_build(engine.reader.path, settings.state_dir / "eval" / "baseline")
        evaluator = Evaluator(engine, EvalSettings(stage2=False, source_ablations=[]), baseline)
        main, _ = run_ablation_passes(evaluator, questions, args.index)
        summaries = evaluator.summaries(main, STAGE_ORDER[:-1])
        model = engine.reader.vectors.stats.embedding_model
    result = {
        "command": "python benchmarks/embedders.py " + " ".join(sys.argv[2:]),
        "index": str(args.index),
        "embedding_model": model,
        "questions": len(questions),
        "seconds": round(time.perf_counter() - started, 1),
        "load_before": load_before,
        "load_after": load_average(),
        "summaries": [s.model_dump(mode="json") for s in summaries],
    }
    args.out.write_text(json.dumps(result, indent=2))
    for s in summaries:
        print(f"{s.config:28} " + "  ".join(f"AP@{k} {100 * s.ap[int(k)]:.1f}" for k in AP_KS))


def _ap(report: Path) -> dict[str, dict[str, float]]:
    summaries = json.loads(report.read_text())["summaries"]
    return {
        s["config"]: {k: round(100 * s["ap"][k], 1) for k in AP_KS} for s in summaries if s["config"] in FUSED
    }


def table(args: argparse.Namespace) -> None:
    speeds = json.loads(args.speed.read_text())
    reports = dict(r.split("=", 1) for r in args.report)
    minilm = speeds["models"]["all-MiniLM-L6-v2"]["best_texts_per_s"]
    rows = {}
    for name in MODELS:
        rate = speeds["models"][name]["best_texts_per_s"]
        rows[name] = {
            "model_name": speeds["models"][name]["model_name"],
            "texts_per_s": rate,
            "speed_vs_minilm": round(rate / minilm, 1),
            # a full build's embedding cost, on one core-pair like this one: rows / rate
            "full_build_hours": round(args.rows / rate / 3600, 2),
            "cost_share_of_minilm": round(minilm / rate, 4),
            "ap": _ap(Path(reports[name])) if name in reports else None,
        }
    out = {"speed": speeds, "rows_full_build": args.rows, "models": rows, "reports": reports}
    args.out.with_suffix(".json").write_text(json.dumps(out, indent=2))
    print(json.dumps(rows, indent=2))


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    d = sub.add_parser("subset")
    d.add_argument("release", type=Path, help="OTT-QA release folder (dev.json, tables, passages)")
    d.add_argument("out", type=Path)
    d.add_argument("--questions", type=int, default=150, help="dev questions sampled")
    d.add_argument("--tables", type=int, default=150, help="random tables beyond the gold ones")
    d.add_argument("--seed", type=int, default=34)
    s = sub.add_parser("speed")
    s.add_argument("--evidence", type=Path, required=True, help="a built index version folder")
    s.add_argument("--texts", type=int, default=4000)
    s.add_argument("--rounds", type=int, default=2)
    s.add_argument("--seed", type=int, default=34)
    s.add_argument("--models", nargs="+", default=list(MODELS))
    s.add_argument("--embedding-cache", type=Path, help=f"holds {DISTILLED_MODELS}/ (default: settings')")
    s.add_argument("--out", type=Path, required=True)
    a = sub.add_parser("ap")
    a.add_argument("--index", type=Path, required=True, help="an index version folder")
    a.add_argument("--questions", type=Path, required=True, help="OTT-QA folder (dev.json)")
    a.add_argument("--limit", type=int, help="first N questions")
    a.add_argument("--out", type=Path, required=True)
    t = sub.add_parser("table")
    t.add_argument("--speed", type=Path, required=True)
    t.add_argument("--report", action="append", default=[], help="MODEL=ap.json (or an hqa eval report.json)")
    t.add_argument("--rows", type=int, required=True, help="rows a full build embeds")
    t.add_argument("--out", type=Path, required=True, help="output path without suffix")
    args = parser.parse_args(argv)
    {"subset": subset, "speed": speed, "ap": ap, "table": table}[args.command](args)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
