"""The figures of a benchmark's report, as the regression matrix names them: configuration -> metric -> value.

``hqa eval`` reports are read by ``query.evaluation`` (their metric names are the matrix's own). Every
other maintained benchmark writes a report of its own shape, and is read here: from its per-question
rows where it keeps them (table-sql, graph-critic, KG sets), so a figure is recomputed rather than
copied from a summary line; a speed benchmark's figure is a ratio to its raw engine measured in the same
run (what survives another machine's load), recomputed from the two speeds. A reader returns what it
finds; ``check_expected.misses`` says what is missing or off.
"""

from __future__ import annotations

import json
import re
import shlex
import statistics
from collections.abc import Callable
from pathlib import Path

from query.evaluation import read_report
from query.evaluation.expected import ExpectedEntry, metric_value

Figures = dict[str, dict[str, float]]
"""configuration -> metric -> value (shares are fractions, ratios plain numbers)."""


def program(command: str) -> str:
    """What a command runs: ``hqa``, a script (``benchmarks/ingest.py``), a ``-m`` module, ``make``."""
    words = [w for w in shlex.split(command) if not re.fullmatch(r"[A-Z_][A-Z0-9_]*=.*", w)]
    if words and words[0].endswith("python"):
        words = words[1:]
    if words[:1] == ["-m"]:
        return words[1]
    return words[0].removeprefix(".venv/bin/")


def _mean(values: list[float]) -> float:
    return sum(values) / len(values) if values else float("nan")


def _jsonl(path: Path) -> list[dict]:
    return [json.loads(line) for line in path.read_text(encoding="utf-8").splitlines() if line.strip()]


def hqa_eval(path: Path, entry: ExpectedEntry) -> Figures:
    summaries = {s.config: s for s in read_report(path).summaries}
    return {
        config: {metric: metric_value(summaries[config], metric) for metric in metrics}
        for config, metrics in entry.expected.items()
        if config in summaries
    }


def table_sql(path: Path, entry: ExpectedEntry) -> Figures:
    """``table_sql_ottqa.py``'s rows: EM and F1 of both routers; the mode's share of the questions, of
    answers from a chosen row that holds a gold answer, and of those read right (the ceiling line)."""
    rows = _jsonl(path)
    n = len(rows)
    taken = [r for r in rows if r["mode"] == "table-sql"]
    gold_rows = [r for r in taken if r.get("row_holds_gold")]
    return {
        "engine without table-sql": {
            "em": _mean([r["em_without"] for r in rows]),
            "f1": _mean([r["f1_without"] for r in rows]),
        },
        "engine as shipped": {
            "em": _mean([r["em_with"] for r in rows]),
            "f1": _mean([r["f1_with"] for r in rows]),
        },
        "table-sql": {
            "answered": len(taken) / n,
            "row holds gold": len(gold_rows) / n,
            "row holds gold, read right": sum(r["em_with"] for r in gold_rows) / n,
        },
    }


def _graph_critic_rows(rows: list[dict]) -> dict[str, dict[str, float]]:
    def hit1(ranks: list[int | None]) -> float:
        return _mean([float(r == 1) for r in ranks])

    return {
        "single pass": {
            "em": _mean([r["single"]["em"] for r in rows]),
            "hit@1": hit1([r["single"]["rank"] for r in rows]),
        },
        "single pass, cited rows first": {"hit@1": hit1([r["single"]["rank_cited"] for r in rows])},
        "router + critic": {
            "em": _mean([r["critic"]["em"] for r in rows]),
            "hit@1": hit1([r["critic"]["rank"] for r in rows]),
        },
    }


def graph_critic(path: Path, entry: ExpectedEntry) -> Figures:
    """``graph_critic_llm.py``'s rounds: the rows over every question, and over the first 100 (the first
    100 lines of the file are the report fold's first 100 questions, the deeper module's first run)."""
    rows = _jsonl(path)
    figures = _graph_critic_rows(rows)
    figures |= {f"{name}, first 100": values for name, values in _graph_critic_rows(rows[:100]).items()}
    return figures


def kg_sets(path: Path, entry: ExpectedEntry) -> Figures:
    """``kg_set_eval.py``'s rows (``results.jsonl``): the share right with and without table-sql."""
    rows = _jsonl(path)
    figures: Figures = {
        "engine as shipped": {"right": _mean([r["right"] for r in rows])},
        "without table-sql": {"right": _mean([r["right_default"] for r in rows])},
    }
    for kind in sorted({r["type"] for r in rows}):
        group = [r for r in rows if r["type"] == kind]
        figures[f"engine as shipped/{kind}"] = {"right": _mean([r["right"] for r in group])}
    return figures


def _stage_ratios(rows: list[dict], key: str, raw: str, ours: str) -> Figures:
    return {row[key]: {"ratio": row[ours] / row[raw]} for row in rows}


def ingest(path: Path, entry: ExpectedEntry) -> Figures:
    return _stage_ratios(json.loads(path.read_text())["rows"], "stage", "raw_MB_s", "ours_MB_s")


def build(path: Path, entry: ExpectedEntry) -> Figures:
    report = json.loads(path.read_text())
    figures = _stage_ratios(report["rows"], "stage", "raw", "ours")
    if "ann" in report:  # a run of some stages only (``--stages bm25``) has no ANN measurement
        figures["ANN"] = {"recall@10": report["ann"]["recall_at_10"]}
    return figures


def query(path: Path, entry: ExpectedEntry) -> Figures:
    report = json.loads(path.read_text())
    return {
        "BM25 stage": {"ratio": report["bm25_stage_vs_raw"]},
        "batch": {"threaded / sequential": report["threaded_qps"] / report["sequential_qps"]},
    }


def dag_rebuild(path: Path, entry: ExpectedEntry) -> Figures:
    rows = json.loads(path.read_text())["rows"]
    return {row["case"]: {"ratio": row["hqa_build_s"] / row["airflow_s"]} for row in rows}


def llm_throughput(path: Path, entry: ExpectedEntry) -> Figures:
    report = json.loads(path.read_text())
    runs = {run["runner"]: run for run in report["runs"]}
    same, total = map(int, report["identical_replies"].split("/"))
    ours, raw = runs["hqa Llm.chat"], runs["raw llama.cpp"]
    return {
        "hqa Llm.chat": {
            "ratio": ours["tokens_per_s"] / raw["tokens_per_s"],
            "identical replies": same / total,
        }
    }


def soak(path: Path, entry: ExpectedEntry) -> Figures:
    report = json.loads(path.read_text())
    return {
        "threads": {
            "errors": report["errors"],
            "answers without a published version": report["answers_without_a_published_version"],
            "questions whose answer changed": len(report["questions_whose_answer_changed_between_versions"]),
        }
    }


def fuzz(path: Path, entry: ExpectedEntry) -> Figures:
    boundaries = json.loads(path.read_text())["boundaries"]
    return {b["boundary"]: {"crashes": b["crashes"], "violations": b["violations"]} for b in boundaries}


def markdown_rows(path: Path) -> dict[str, dict[str, str]]:
    """Every row of every Markdown table in ``path``, by its first cell, as header -> cell text."""
    rows: dict[str, dict[str, str]] = {}
    header: list[str] = []
    for line in path.read_text(encoding="utf-8").splitlines():
        if not line.startswith("|"):
            header = []
            continue
        cells = [c.strip() for c in line.strip().strip("|").split("|")]
        if not header:
            header = cells
        elif not set(line) <= set("|-: "):
            rows[cells[0]] = dict(zip(header, cells, strict=False))
    return rows


def _number(cell: str) -> float:
    return float(re.sub(r"[^\d.]", "", cell))


def embed_workers(path: Path, entry: ExpectedEntry) -> Figures:
    """``embed_workers.py`` writes Markdown only: its table, speed against raw recomputed from texts/s."""
    rows = markdown_rows(path)
    raw = next(_number(row["texts/s"]) for name, row in rows.items() if name.startswith("raw "))
    return {
        name: {
            "ratio": _number(row["texts/s"]) / raw,
            "neighbours kept": _number(row["top-10 neighbours kept"]) / 100,
            "min cosine": _number(row["min cosine to raw"]),
        }
        for name, row in rows.items()
        if "texts/s" in row
    }


def embedders(path: Path, entry: ExpectedEntry) -> Figures:
    """``embedders.py table``: each model's speed against MiniLM in the same run, and answer presence
    at 30 (percent in the file) of dense retrieval alone and of the BM25 + dense + KG fusion."""
    models = json.loads(path.read_text())["models"]
    return {
        name: {
            "speed vs minilm": row["speed_vs_minilm"],
            "dense ap@30": row["ap"]["dense"]["30"] / 100,
            "fused ap@30": row["ap"]["rrf-no-hop"]["30"] / 100,
        }
        for name, row in models.items()
        if row.get("ap")
    }


def serve_load(path: Path, entry: ExpectedEntry) -> Figures:
    """``serve_load.py``: per reader, errors besides 429s and answers without a version (both 0), and the
    number of versions answers came from while new ones were published."""
    return {
        f"reader {run['reader']}": {
            "errors": run["errors"],
            "untagged": run["untagged"],
            "versions answered from": len(run["server_versions"]["answered_from"]),
        }
        for run in json.loads(path.read_text())
    }


def serve_switch_memory(path: Path, entry: ExpectedEntry) -> Figures:
    """``serve_switch_memory.py``: retired engines still alive at the end (0), the most engines alive at
    once after a switch (1) and RSS's least-squares growth a switch from the 2nd switch on, in units of 5 MB
    (the matrix's tolerances are at most 1: 0.9 of them is 4.5 MB a switch, the uncapped growth's size)."""
    samples = [s for s in json.loads(path.read_text())["samples"] if "answering" in s]
    tail = [s for s in samples if s["switch"] >= 2]
    slope = statistics.linear_regression([s["switch"] for s in tail], [s["rss_mb"] for s in tail]).slope
    return {
        "switches": {
            "retired engines alive": samples[-1]["retired_engines_alive"],
            "engines alive": max(s["objects"].get("Engine", 0) for s in samples),
            "RSS growth in 5 MB a switch": slope / 5,
        }
    }


def setup_time(path: Path, entry: ExpectedEntry) -> Figures:
    """``setup_time.md``: the latest clean ``make demo``, its wall clock (the first one the file gives)."""
    seconds = re.search(r"Wall clock \*\*([\d.]+) s", path.read_text(encoding="utf-8"))
    return {"make demo": {"minutes": float(seconds.group(1)) / 60}} if seconds else {}


READERS: dict[str, Callable[[Path, ExpectedEntry], Figures]] = {
    "hqa": hqa_eval,
    "benchmarks/llm_reader_report.sh": hqa_eval,
    "benchmarks/table_sql_ottqa.py": table_sql,
    "benchmarks/graph_critic_llm.py": graph_critic,
    "benchmarks/kg_set_eval.py": kg_sets,
    "benchmarks/ingest.py": ingest,
    "benchmarks/build.py": build,
    "benchmarks/query.py": query,
    "benchmarks/dag_rebuild.py": dag_rebuild,
    "benchmarks/llm_throughput.py": llm_throughput,
    "benchmarks/soak.py": soak,
    "benchmarks/embed_workers.py": embed_workers,
    "benchmarks/embedders.py": embedders,
    "benchmarks/serve_load.py": serve_load,
    "benchmarks/serve_switch_memory.py": serve_switch_memory,
    "tests.fuzz": fuzz,
    "make": setup_time,
}
"""The report reader of each program an entry's command runs."""


def figures(entry: ExpectedEntry, report: Path) -> Figures:
    """The figures ``report`` holds for ``entry``, read the way the entry's command wrote them."""
    name = program(entry.command)
    if name not in READERS:
        raise KeyError(f"{entry.name}: no report reader for {name!r}; add one to expected_figures.READERS")
    return READERS[name](report, entry)
