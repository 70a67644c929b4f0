"""Per-stage figures of each size's rebuild, the issue's two checks, and ``scaling.json`` / ``.md``.

A stage's ``rows`` is what it made: ingest the rows of every table it wrote, verbalize the evidence
rows, entities the aliases, bm25 the documents, vectors the vectors, graph its nodes plus edges,
statements the typed statements, tables the table rows. ``seconds`` is the wall time of its processes
(several for ingest and verbalize, one per job, run one after another); ``work_seconds`` leaves out
each process's start and imports, and ``seconds_per_row`` is taken from it, so a small corpus is not
charged seconds of start-up per row. CPU seconds are given beside wall seconds: the machine is shared,
and CPU time moves less with the load than wall time does.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from typing import Any

from scale_steps import INDEX_STAGES, StepRecord

STAGES = ("ingest", "verbalize", *INDEX_STAGES)
OTHER_STEPS = ("discover", "plan", "evidence", "validate", "publish")
MAX_SLOWDOWN = 1.3
MAX_STAGE_RSS_MB = 2048


def _counts(records: list[StepRecord], key: str) -> int:
    return sum(r.result["counts"][key] for r in records)


ROWS: dict[str, Callable[[list[StepRecord]], int]] = {
    "ingest": lambda rs: sum(
        n
        for r in rs
        for table, n in r.result["outcome"]["summary"]["counts"].items()
        if table != "quarantine"
    ),
    "verbalize": lambda rs: sum(r.result["stats"]["evidence"] for r in rs),
    "entities": lambda rs: _counts(rs, "aliases"),
    "bm25": lambda rs: _counts(rs, "documents"),
    "vectors": lambda rs: _counts(rs, "vectors"),
    "graph": lambda rs: sum(sum(r.result["counts"].values()) for r in rs),
    "statements": lambda rs: _counts(rs, "statements"),
    "tables": lambda rs: _counts(rs, "rows"),
}


def step_records(records: dict[str, StepRecord], stage: str) -> list[StepRecord]:
    if stage in ("ingest", "verbalize"):
        return [r for k, r in records.items() if k.startswith(f"{stage}:")]
    key = f"stage:{stage}" if stage in INDEX_STAGES else stage
    return [records[key]] if key in records else []


def _sum(values: list[float | None]) -> float | None:
    return round(sum(v for v in values if v is not None), 3) if values else None


def summarize(records: list[StepRecord], rows: Callable[[list[StepRecord]], int] | None) -> dict[str, Any]:
    """One stage (or step) over its processes: the worst status, summed times, the largest peak."""
    if not records:
        return {"status": "missing"}
    status = next((r.status for r in records if not r.ok), "ok")
    measured = [r.measured for r in records if r.measured is not None]
    out: dict[str, Any] = {
        "status": status,
        "rows": rows(records) if rows is not None and status == "ok" else None,
        "seconds": _sum([m.seconds for m in measured]),
        "work_seconds": _sum([r.work_seconds for r in records]),
        "cpu_seconds": _sum([m.cpu_seconds for m in measured]),
        "work_cpu_seconds": _sum([r.work_cpu_seconds for r in records]),
        "peak_rss_mb": max((m.peak_rss_mb for m in measured), default=None),
        "processes": len(measured),
        "load_after": max((m.load_after for m in measured), default=None),  # 1-minute load average
    }
    if status != "ok":
        out["reason"] = next(r.reason for r in records if not r.ok)
    if out["rows"]:
        out["seconds_per_row"] = out["work_seconds"] / out["rows"]
        out["cpu_seconds_per_row"] = out["work_cpu_seconds"] / out["rows"]
    return out


def size_entry(
    records: dict[str, StepRecord], corpus: dict[str, Any], load: dict[str, str]
) -> dict[str, Any]:
    evidence = records.get("evidence")
    return {
        "entities": corpus["spec"]["entities"],
        "pages": corpus["spec"]["pages"],
        "evidence_rows": evidence.result["counts"]["evidence_rows"] if evidence and evidence.ok else None,
        "stages": {stage: summarize(step_records(records, stage), ROWS[stage]) for stage in STAGES},
        "other_steps": {step: summarize(step_records(records, step), None) for step in OTHER_STEPS},
        "corpus": {
            "statements": corpus["items"]["statements"],
            "statements_median": corpus["items"]["statements_median"],
            "statements_mean": corpus["items"]["statements_mean"],
            "whole_items": corpus["items"]["whole_copies"],
            "articles": corpus["pages"]["articles"],
            "redirects": corpus["pages"]["redirects"],
            "bytes": {name: f["bytes"] for name, f in corpus["files"].items()},
            "generation_seconds": corpus["seconds"],
        },
        "load": load,
    }


def growth_exponent(small: dict[str, Any], large: dict[str, Any], key: str) -> float | None:
    """``b`` in ``time ∝ rows^b`` between two sizes: 1 is linear, above 1 super-linear."""
    if not (small.get("rows") and large.get("rows") and small.get(key) and large.get(key)):
        return None
    if large["rows"] == small["rows"]:
        return None
    return math.log(large[key] / small[key]) / math.log(large["rows"] / small["rows"])


def checks(sizes: list[dict[str, Any]]) -> dict[str, Any]:
    """The issue's two checks, between the smallest and the largest size run."""
    if not sizes:
        return {}
    small, large = sizes[0], sizes[-1]
    per_stage = {}
    for stage in STAGES:
        a, b = small["stages"][stage], large["stages"][stage]
        ratio = (
            b["seconds_per_row"] / a["seconds_per_row"]
            if "seconds_per_row" in a and "seconds_per_row" in b
            else None
        )
        cpu = (
            b["cpu_seconds_per_row"] / a["cpu_seconds_per_row"]
            if a.get("cpu_seconds_per_row") and b.get("cpu_seconds_per_row")
            else None
        )
        peak = b.get("peak_rss_mb")
        per_stage[stage] = {
            "seconds_per_row_ratio": round(ratio, 3) if ratio is not None else None,
            "cpu_seconds_per_row_ratio": round(cpu, 3) if cpu is not None else None,
            "time_ok": ratio is not None and ratio <= MAX_SLOWDOWN,
            "peak_rss_mb": peak,
            "memory_ok": b["status"] == "ok" and peak is not None and peak <= MAX_STAGE_RSS_MB,
            "status_at_largest": b["status"],
        }
    return {
        "smallest": {"entities": small["entities"], "pages": small["pages"]},
        "largest": {"entities": large["entities"], "pages": large["pages"]},
        "max_slowdown": MAX_SLOWDOWN,
        "max_stage_rss_mb": MAX_STAGE_RSS_MB,
        "stages": per_stage,
        "time_ok": all(s["time_ok"] for s in per_stage.values()),
        "memory_ok": all(s["memory_ok"] for s in per_stage.values()),
    }


def _fmt(value: Any, digits: int = 1) -> str:
    if value is None:
        return "-"
    if isinstance(value, float):
        return f"{value:,.{digits}f}"
    return f"{value:,}" if isinstance(value, int) else str(value)


def _row(cells: list[Any]) -> str:
    return "| " + " | ".join(str(c) for c in cells) + " |"


def _micro(value: float | None) -> str:
    return _fmt(value * 1e6 if value else None)


def _size_table(size: dict[str, Any]) -> list[str]:
    corpus = size["corpus"]
    lines = [
        f"### {size['entities']:,} entities, {size['pages']:,} pages: "
        f"{_fmt(size['evidence_rows'])} evidence rows",
        "",
        f"Load (`uptime`) as the first step started: {size['load'].get('start', '-')}; as the last one "
        f"ended: {size['load'].get('end', '-')}; the load column is the 1-minute load average as each "
        "stage's last process ended  ",
        f"Corpus: {corpus['statements']:,} statements (median {corpus['statements_median']}, "
        f"mean {corpus['statements_mean']}), {corpus['articles']:,} articles, "
        f"{corpus['redirects']:,} redirects; generated in {corpus['generation_seconds']} s",
        "",
        _row(
            [
                "stage",
                "status",
                "rows",
                "wall s",
                "work s",
                "CPU s",
                "µs/row",
                "CPU µs/row",
                "peak RSS MB",
                "load",
            ]
        ),
        "|---|---|--:|--:|--:|--:|--:|--:|--:|--:|",
    ]
    for name, s in [*size["stages"].items(), *size["other_steps"].items()]:
        lines.append(
            _row(
                [
                    name,
                    s["status"],
                    _fmt(s.get("rows")),
                    _fmt(s.get("seconds")),
                    _fmt(s.get("work_seconds")),
                    _fmt(s.get("cpu_seconds")),
                    _micro(s.get("seconds_per_row")),
                    _micro(s.get("cpu_seconds_per_row")),
                    _fmt(s.get("peak_rss_mb"), 0),
                    _fmt(s.get("load_after")),
                ]
            )
        )
    return [*lines, ""]


def _growth_table(sizes: list[dict[str, Any]]) -> list[str]:
    pairs = list(itertools.pairwise(sizes))
    names = [f"{a['entities']:,}→{b['entities']:,}" for a, b in pairs]
    header = [f"b {n}" for n in names] + [f"b CPU {n}" for n in names]
    header += [f"peak MB at {s['entities']:,}" for s in sizes]
    lines = [
        "Growth exponent `b` in `seconds ∝ rows^b` between neighbouring sizes, of work seconds and of work "
        "CPU seconds (1 = linear, above 1 = super-linear), and peak memory at each size:",
        "",
        _row(["stage", *header]),
        "|---|" + "--:|" * len(header),
    ]
    for stage in STAGES:
        cells = []
        for key in ("work_seconds", "work_cpu_seconds"):
            cells += [_fmt(growth_exponent(a["stages"][stage], b["stages"][stage], key), 2) for a, b in pairs]
        cells += [_fmt(s["stages"][stage].get("peak_rss_mb"), 0) for s in sizes]
        lines.append(_row([stage, *cells]))
    return [*lines, ""]


def _checks_table(result: dict[str, Any]) -> list[str]:
    c = result["checks"]
    verdict = {True: "pass", False: "FAIL"}
    lines = [
        f"Checks between {c['smallest']['entities']:,} and {c['largest']['entities']:,} entities: "
        f"seconds per row within {c['max_slowdown']} times the smallest's: **{verdict[c['time_ok']]}**; "
        f"no stage over {c['max_stage_rss_mb']} MB peak RSS at the largest size: "
        f"**{verdict[c['memory_ok']]}**.",
        "",
        _row(["stage", "s/row ratio", "CPU s/row ratio", "time", "peak RSS MB", "memory", "status"]),
        "|---|--:|--:|---|--:|---|---|",
    ]
    for stage, s in c["stages"].items():
        cells = [stage, _fmt(s["seconds_per_row_ratio"], 2), _fmt(s["cpu_seconds_per_row_ratio"], 2)]
        cells += [verdict[s["time_ok"]], _fmt(s["peak_rss_mb"], 0), verdict[s["memory_ok"]]]
        lines.append(_row([*cells, s["status_at_largest"]]))
    return [*lines, ""]


def render_markdown(result: dict[str, Any]) -> str:
    lines = [
        "# Rebuild scaling on the synthetic corpus",
        "",
        f"Command: `{result['command']}`  ",
        f"Machine: {result['machine']}  ",
        f"Embedder: `{result['embedding_model']}` (the fastest; MiniLM's cost a row is measured apart)  ",
        "Every step ran in its own process, one after another, as an Airflow task would "
        "(`benchmarks/scale/scale_step.py` calling `index.rebuild`); memory caps of the run: "
        f"{result['caps']}.",
        "",
    ]
    if result.get("checks"):
        lines += _checks_table(result)
    if len(result["sizes"]) > 1:
        lines += _growth_table(result["sizes"])
    for size in result["sizes"]:
        lines += _size_table(size)
    return "\n".join(lines)
