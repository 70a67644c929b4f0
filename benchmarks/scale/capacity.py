"""The capacity plan's figures, computed from a saved scaling run (``docs/capacity.md`` quotes them).

    python benchmarks/scale/capacity.py [--scaling benchmarks/results/scale/scaling.json] [--json]

Every stage's rows at full size are its rows at a measured size scaled by the quantity that drives
it (``DRIVERS``), times the CPU seconds a row it took there: the CPU seconds of the stage's whole
process trees (``cpu_seconds``, from ``wait4``: parser pools and encoder workers included, which the
in-process ``work_cpu_seconds`` misses while they are alive), interpreter starts included, so the
largest size is used, where they weigh least; CPU rather than wall seconds because the machine was
shared. The
full-size quantities (``FULL``) are assumptions, written down in ``docs/capacity.md`` with their
sources. A stage missing at the largest size is taken from the largest size that has it.
"""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path[:0] = [str(HERE)]

from scale_report import STAGES  # noqa: E402

# Full English Wikipedia + the Wikidata items it links to (assumptions: see docs/capacity.md).
FULL = {
    "evidence_rows": 250e6,  # the estimate: ~175M KG statements, ~45M text windows, ~30M rows
    "entities": 15e6,  # items with an enwiki article (~6.8M) and the items their statements name
    "statements": 175e6,  # ~11.7 statements an item (Wikidata's mean is ~14)
    "table_rows": 30e6,  # table rows and infobox fields of 6.8M articles
    # rows the readers parse: every statement and item of the whole Wikidata dump (1.57B statements,
    # ~110M items), not only the linked ones kept, plus Wikipedia's pages, passages, fields and links
    "ingest_rows_read": 1.9e9,
}
# What each stage's rows grow with: a FULL key.
DRIVERS = {
    "ingest": "ingest_rows_read",
    "verbalize": "evidence_rows",
    "entities": "entities",
    "bm25": "evidence_rows",
    "vectors": "evidence_rows",
    "graph": "evidence_rows",
    "statements": "statements",
    "tables": "table_rows",
}
# MiniLM on CPU, the build's Embedder (2 workers, batch 8) on this machine's 2 cores:
# benchmarks/results/embed_workers.md, bfloat16 and float32.
MINILM_TEXTS_PER_S_2_CORES = {"bfloat16": 194.5, "float32": 112.4}


def measured(size: dict, stage: str) -> float:
    """The measured quantity a stage's rows grow with, at one size."""
    driver = DRIVERS[stage]
    if driver == "ingest_rows_read":  # the synthetic corpus keeps every row it reads
        return size["stages"]["ingest"]["rows"]
    if driver == "evidence_rows":
        return size["evidence_rows"]
    if driver == "entities":
        return size["entities"]
    if driver == "statements":
        return size["corpus"]["statements"]
    return size["stages"]["tables"]["rows"]  # table rows: the tables stage's own rows


def stage_plan(sizes: list[dict], stage: str) -> dict:
    usable = [s for s in sizes if s["stages"].get(stage, {}).get("status") == "ok"]
    if not usable:
        return {"stage": stage, "status": "not measured"}
    size = max(usable, key=lambda s: s["entities"])
    figures = size["stages"][stage]
    rows = figures["rows"] / measured(size, stage) * FULL[DRIVERS[stage]]
    cpu_per_row = figures["cpu_seconds"] / figures["rows"]
    core_hours = rows * cpu_per_row / 3600
    return {
        "stage": stage,
        "from_size": size["entities"],
        "rows": rows,
        "cpu_us_per_row": cpu_per_row * 1e6,
        "core_hours": core_hours,
        "peak_rss_mb": figures["peak_rss_mb"],
    }


def embedding() -> dict[str, float]:
    """Core-hours to embed every evidence row with MiniLM at today's measured rate."""
    return {
        precision: FULL["evidence_rows"] / (rate / 2) / 3600
        for precision, rate in MINILM_TEXTS_PER_S_2_CORES.items()
    }


def render(plans: list[dict], minilm: dict[str, float]) -> str:
    lines = [
        "| stage | measured at (entities) | rows at full size | CPU µs/row | core-hours | peak RSS MB |",
        "|---|--:|--:|--:|--:|--:|",
    ]
    for p in plans:
        if "rows" not in p:
            lines.append(f"| {p['stage']} | {p['status']} | | | | |")
            continue
        lines.append(
            f"| {p['stage']} | {p['from_size']:,} | {p['rows'] / 1e6:,.0f}M | {p['cpu_us_per_row']:,.1f} "
            f"| {p['core_hours']:,.0f} | {p['peak_rss_mb']:,.0f} |"
        )
    total = sum(p.get("core_hours", 0) for p in plans)
    lines += [
        "",
        f"Total of the stages above (vectors embedding with wordllama-l2-256): **{total:,.0f} core-hours**.",
        "MiniLM instead (today's Embedder, benchmarks/results/embed_workers.md): "
        + ", ".join(f"{k} {v:,.0f} core-hours" for k, v in minilm.items())
        + " for the embedding alone.",
    ]
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    default = HERE.parent / "results" / "scale" / "scaling.json"
    parser.add_argument("--scaling", type=Path, default=default)
    parser.add_argument("--json", action="store_true", help="print the figures as JSON, not Markdown")
    args = parser.parse_args(argv)
    sizes = json.loads(args.scaling.read_text())["sizes"]
    plans = [stage_plan(sizes, stage) for stage in STAGES]
    minilm = embedding()
    if args.json:
        print(json.dumps({"plans": plans, "minilm_core_hours": minilm}, indent=2))
    else:
        print(render(plans, minilm))
    return 0


if __name__ == "__main__":
    sys.exit(main())
