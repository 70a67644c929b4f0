"""The scaling harness: the whole index rebuild at several corpus sizes, every step in its own process.

    python benchmarks/scale/run.py [--sizes 10000:1000,100000:10000,1000000:100000] [--seed 1]
        [--work .state/scale] [--out benchmarks/results/scale] [--max-rss-gb 12] [--max-minutes 75]
        [--retry-failed] [--fresh]

For each size ``ENTITIES:PAGES``: the synthetic corpus (``synth.py``; cached under
``WORK/corpora/`` by size, seed and spread, reused when complete), then every step of the rebuild
DAG as a fresh process, measured (``scale_steps.py``, ``scale_measure.py``), into a state folder of
its own under ``WORK/runs/`` with a cold embedding cache. Embeds with ``wordllama-l2-256`` (the
fastest embedder; ``--embedding-model`` to change). Writes ``OUT/scaling.json`` and
``OUT/scaling.md`` after every size, so a stopped run still leaves its figures.

Resumable: a re-run skips what is done (corpora, and each size's finished steps). ``--fresh``
throws away the sizes' step records and state (not the corpora); ``--retry-failed`` runs again
the steps that failed or were killed. A step tree over ``--max-rss-gb`` or a size over
``--max-minutes`` is killed and reported as such (the machine is shared).
"""

from __future__ import annotations

import argparse
import json
import os
import shlex
import shutil
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

from scale_report import checks, render_markdown, size_entry  # noqa: E402
from scale_steps import Caps, SizeRun, rebuild  # noqa: E402
from synth import CorpusSpec, cached_corpus  # noqa: E402

from query.evaluation.machine import machine  # noqa: E402

DEFAULT_SIZES = "10000:1000,100000:10000,1000000:100000"


def parse_sizes(text: str) -> list[tuple[int, int]]:
    sizes = []
    for part in text.split(","):
        entities, sep, pages = part.partition(":")
        if not sep or not entities.strip().isdigit() or not pages.strip().isdigit():
            raise argparse.ArgumentTypeError(f"size {part!r} is not ENTITIES:PAGES (e.g. 10000:1000)")
        sizes.append((int(entities), int(pages)))
    return sorted(sizes)


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


def step_env(state_dir: Path, embedding_model: str) -> dict[str, str]:
    """The environment of every step: this checkout's code, one state folder, offline, no bars."""
    return {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HQA_STATE_DIR": str(state_dir),
        "HQA_INDEX__EMBEDDING_MODEL": embedding_model,
        "HQA_PROGRESS": "0",
        "HF_HUB_OFFLINE": "1",
        "TRANSFORMERS_OFFLINE": "1",
    }


def run_size(args: argparse.Namespace, entities: int, pages: int) -> dict[str, Any]:
    spec = CorpusSpec(entities=entities, pages=pages, seed=args.seed)
    corpus_dir, manifest = cached_corpus(spec, args.work / "corpora", args.gen_workers)
    files = {n: str(corpus_dir / n) for n in manifest.files}
    wikidata, wikipedia = spec.file_names()
    state_dir = args.work / "runs" / corpus_dir.name
    if args.fresh:
        shutil.rmtree(state_dir, ignore_errors=True)
    load = {"start": uptime()}
    caps = Caps(
        max_rss_mb=args.max_rss_gb * 1024,
        deadline=time.monotonic() + args.max_minutes * 60,
        retry_failed=args.retry_failed,
    )
    run = SizeRun(state_dir, step_env(state_dir, args.embedding_model), caps)
    params = {"wikidata": [files[wikidata]], "wikipedia": [files[wikipedia]], "force": True}
    records = rebuild(run, params)
    load["end"] = uptime()
    return size_entry(records, json.loads(manifest.model_dump_json()), load)


def write_results(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "scaling.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "scaling.md").write_text(render_markdown(result) + "\n")


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--sizes", type=parse_sizes, default=parse_sizes(DEFAULT_SIZES), help="ENTITIES:PAGES,…"
    )
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=REPO / ".state" / "scale", help="corpora and run state")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "scale")
    parser.add_argument("--embedding-model", default="wordllama-l2-256")
    parser.add_argument("--max-rss-gb", type=float, default=12.0, help="kill a step tree above this")
    parser.add_argument("--max-minutes", type=float, default=75.0, help="time budget of one size's rebuild")
    parser.add_argument("--gen-workers", type=int, default=2, help="processes generating a corpus")
    parser.add_argument("--retry-failed", action="store_true", help="run failed or killed steps again")
    parser.add_argument("--fresh", action="store_true", help="forget the sizes' finished steps and state")
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    args = parse_args(argv)
    args.work = args.work.resolve()
    result: dict[str, Any] = {
        "command": shlex.join(["benchmarks/scale/run.py", *(sys.argv[1:] if argv is None else argv)]),
        "machine": machine(),
        "embedding_model": args.embedding_model,
        "caps": {"max_rss_gb": args.max_rss_gb, "max_minutes_per_size": args.max_minutes},
        "sizes": [],
    }
    for entities, pages in args.sizes:
        result["sizes"].append(run_size(args, entities, pages))
        result["checks"] = checks(result["sizes"])
        write_results(args.out, result)
    return 0


if __name__ == "__main__":
    sys.exit(main())
