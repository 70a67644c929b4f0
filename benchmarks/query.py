"""Query-engine latency per stage and batch throughput, on a built index (the OTT-QA one for the record).

    .venv/bin/python benchmarks/query.py --index DIR --questions PATH [--benchmark ottqa] [--limit 200]
        [--workers 2] [--engine-config FILE] [--out benchmarks/results]

Sequential ``Engine.ask`` over the questions gives p50/p95 per stage (intent, linking, each retriever,
fusion, features, both re-ranking stages, answer) and in total; ``ask_many`` with ``--workers``
threads on the same questions gives batch throughput. The raw-engine reference beside them is a bare
Tantivy BM25 top-1000 query of each question, the floor any retrieval stage builds on.
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
sys.path.insert(0, str(REPO))

import tantivy  # noqa: E402
from benchmarks_common import machine  # noqa: E402

from index.tantivy_text import safe_query_text  # noqa: E402
from query.config import EngineConfig  # noqa: E402
from query.engine import Engine  # noqa: E402
from query.evaluation.loaders import load_benchmark  # noqa: E402
from query.evaluation.metrics import percentile  # noqa: E402


def stage_table(results: list) -> dict[str, dict[str, float]]:
    by_stage: dict[str, list[float]] = {}
    for result in results:
        for timing in result.timings:
            by_stage.setdefault(timing.stage, []).append(timing.ms)
    return {
        stage: {
            "p50": round(percentile(values, 50), 1),
            "p95": round(percentile(values, 95), 1),
            "mean": round(statistics.fmean(values), 1),
        }
        for stage, values in by_stage.items()
    }


def bare_tantivy_ms(path: Path, questions: list[str], k: int = 1000) -> list[float]:
    """Milliseconds per question of bare Tantivy: parse the words, top-k, read each hit's stored id."""
    index = tantivy.Index.open(str(path))
    searcher = index.searcher()
    out = []
    for q in questions:
        t0 = time.perf_counter()
        words = safe_query_text(q)
        if words:
            for _, address in searcher.search(index.parse_query(words, ["text"]), k).hits:
                searcher.doc(address)["evidence_id"][0]  # what a caller needs of each hit: its id
        out.append((time.perf_counter() - t0) * 1000)
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--questions", type=Path, required=True)
    parser.add_argument("--benchmark", default="ottqa")
    parser.add_argument("--limit", type=int, default=200)
    parser.add_argument("--workers", type=int, default=2)
    parser.add_argument("--engine-config", type=Path)
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()

    questions = [q.question for q in load_benchmark(args.benchmark, args.questions, args.limit)]
    started = time.perf_counter()
    engine = Engine.open(args.index, EngineConfig.load(args.engine_config))
    open_s = time.perf_counter() - started
    engine.ask(questions[0])  # warm-up: models loaded, vector matrix read

    raw = bare_tantivy_ms(engine.reader.bm25.path, questions)

    t0 = time.perf_counter()
    results = [engine.ask(q) for q in questions]
    sequential_s = time.perf_counter() - t0
    t0 = time.perf_counter()
    threaded = list(engine.ask_many(questions, workers=args.workers))
    threaded_s = time.perf_counter() - t0
    same = sum(a.answer == b.answer for a, b in zip(results, threaded, strict=True))

    stages = stage_table(results)
    record = {
        "command": " ".join(shlex.quote(a) for a in ["python", *sys.argv]),
        "machine": machine(),
        "index_version": engine.index_version,
        "embedding_model": engine.embedder.model_name,
        "questions": len(questions),
        "engine_open_s": round(open_s, 2),
        "stages_ms": stages,
        "raw_bm25_top1000_ms": {"p50": round(percentile(raw, 50), 1), "p95": round(percentile(raw, 95), 1)},
        # the engine's BM25 stage against bare Tantivy on the same questions (mean times; 1.0 = raw speed)
        "bm25_stage_vs_raw": round(statistics.fmean(raw) / stages["retrieve_bm25"]["mean"], 3)
        if "retrieve_bm25" in stages
        else None,
        "sequential_qps": round(len(questions) / sequential_s, 3),
        "threaded_qps": round(len(questions) / threaded_s, 3),
        "workers": args.workers,
        "threaded_same_answers": same,
        "config": json.loads(engine.config.model_dump_json(exclude={"llm"})),
    }
    engine.close()
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "query.json").write_text(json.dumps(record, indent=2) + "\n")
    lines = [
        "# Query engine latency and throughput",
        "",
        f"Command: `{record['command']}`",
        "",
        f"Machine: {record['machine']}",
        f"Index {record['index_version']} (embeddings: {record['embedding_model']}), "
        f"{record['questions']} questions, engine opened in {record['engine_open_s']} s.",
        "",
        "| stage | p50 ms | p95 ms | mean ms |",
        "|---|---:|---:|---:|",
        *(f"| {s} | {v['p50']} | {v['p95']} | {v['mean']} |" for s, v in stages.items()),
        "",
        f"Raw Tantivy BM25 top-1000 per question: p50 {record['raw_bm25_top1000_ms']['p50']} ms, "
        f"p95 {record['raw_bm25_top1000_ms']['p95']} ms; the engine's BM25 stage (intent query, entity "
        f"boosts) runs at {record['bm25_stage_vs_raw']}x its mean speed.",
        "",
        f"Batch throughput: {record['sequential_qps']} questions/s sequential, "
        f"{record['threaded_qps']} questions/s with `ask_many(workers={args.workers})` "
        f"({same}/{len(questions)} identical answers).",
        "",
    ]
    (args.out / "query.md").write_text("\n".join(lines))
    print("\n".join(lines))


if __name__ == "__main__":
    main()
