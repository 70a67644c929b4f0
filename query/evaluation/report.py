"""The benchmark report: ``report.json`` (everything, for machines and regression checks), ``report.md``
(for people) and two plots, ``ap_at_k.png`` and ``latency.png``.

The first summary is the baseline: it is the first row of every table and the reference of the deltas.
Every file is written to a temporary name and moved into place, so a reader never sees half a report.
"""

from __future__ import annotations

import json
import logging
import os
from collections.abc import Callable, Sequence
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from query.evaluation.metrics import AP_KS, TOTAL_STAGE, ConfigSummary

log = logging.getLogger(__name__)

MAIN_HIT_KS = (1, 10)
_NA = "n/a"  # a figure that does not apply (no gold tables, no timings, nothing answered)
DELTA_KS = (30, 100)


class ReportMeta(BaseModel):
    title: str
    command: str = Field(description="the exact command line that produced the report")
    benchmark: str
    questions_path: str
    index_version: str | None = None
    limit: int | None = None
    machine: dict[str, Any] = Field(default_factory=dict, description="cores, memory, cpu, python, ...")
    started: datetime
    seconds: float = Field(ge=0.0, description="wall time of the whole run")
    notes: list[str] = Field(default_factory=list)


class Report(BaseModel):
    """The content of ``report.json``."""

    meta: ReportMeta
    summaries: list[ConfigSummary]


class ReportPaths(BaseModel):
    """The files a report consists of; ``latency`` is None when no configuration has timings."""

    json_path: Path
    markdown: Path
    ap_plot: Path
    latency_plot: Path | None = None

    @property
    def files(self) -> list[Path]:
        return [p for p in (self.json_path, self.markdown, self.ap_plot, self.latency_plot) if p is not None]


def write_report(out_dir: Path, summaries: list[ConfigSummary], meta: ReportMeta) -> ReportPaths:
    """Write the report files into ``out_dir`` (created if missing); the first summary is the baseline."""
    if not summaries:
        raise ValueError("write_report needs at least one configuration summary (the baseline)")
    names = [s.config for s in summaries]
    duplicates = sorted({n for n in names if names.count(n) > 1})
    if duplicates:
        raise ValueError(f"configuration names must be unique in a report; repeated: {', '.join(duplicates)}")
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)

    report = Report(meta=meta, summaries=summaries)
    paths = ReportPaths(
        json_path=out_dir / "report.json", markdown=out_dir / "report.md", ap_plot=out_dir / "ap_at_k.png"
    )
    _write_atomic(paths.json_path, lambda tmp: tmp.write_text(report.model_dump_json(indent=2) + "\n"))
    _write_atomic(paths.ap_plot, lambda tmp: _plot_ap(summaries, tmp))
    if any(s.latency_ms for s in _plotted(summaries)):
        paths.latency_plot = out_dir / "latency.png"
        _write_atomic(paths.latency_plot, lambda tmp: _plot_latency(summaries, tmp))
    markdown = render_markdown(
        summaries, meta, plots=[p.name for p in (paths.ap_plot, paths.latency_plot) if p]
    )
    _write_atomic(paths.markdown, lambda tmp: tmp.write_text(markdown))
    log.info("report written to %s (%d configurations)", out_dir, len(summaries))
    return paths


def read_report(path: Path) -> Report:
    """A ``report.json`` read back, e.g. to compare a run with expected figures."""
    return Report.model_validate_json(Path(path).read_bytes())


def _write_atomic(path: Path, write: Callable[[Path], object]) -> None:
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    try:
        write(tmp)
        os.replace(tmp, path)
    finally:
        tmp.unlink(missing_ok=True)


# --- Markdown --------------------------------------------------------------------------------------


def render_markdown(summaries: list[ConfigSummary], meta: ReportMeta, plots: Sequence[str] = ()) -> str:
    """The Markdown report; rates in percent, MRR in [0, 1], latencies in milliseconds."""
    lines = [f"# {meta.title}", "", "Command:", "", "```", meta.command, "```", ""]
    lines += _run_lines(meta)
    lines += ["## Results", "", f"Baseline: **{_cell(summaries[0].config)}** (first row). " + _LEGEND, ""]
    lines += _table(_main_header(), [_main_row(s, i == 0) for i, s in enumerate(summaries)])
    lines += ["", "## Versus the baseline", ""]
    lines += _delta_lines(summaries)
    routed = [s for s in summaries if s.modes]
    if routed:
        lines += ["", "## Modes", "", "Questions each reasoning mode answered; bare-id answers.", ""]
        lines += _mode_lines(routed)
    read = [s for s in summaries if s.config.startswith("reader=")]
    if read:
        lines += ["", "## Readers", "", _READERS_LEGEND, ""]
        lines += _reader_lines(read)
    calibrated = [s for s in summaries if s.threshold is not None]
    if calibrated:
        lines += ["", "## Answer threshold", ""]
        lines += _threshold_lines(calibrated)
    lines += ["", "## Latency per stage (ms)", ""]
    lines += _latency_lines(summaries)
    lines += ["", "## Configurations", ""]
    lines += [_config_line(s) for s in summaries]
    if plots:
        lines += ["", "## Plots", ""]
        lines += [f"![{name.removesuffix('.png')}]({name})" for name in plots]
    if meta.notes:
        lines += ["", "## Notes", ""]
        lines += [f"- {note}" for note in meta.notes]
    return "\n".join(lines) + "\n"


_LEGEND = (
    "AP@k: a gold answer in the first k evidence texts; Hit@k and MRR: the gold table among the "
    "evidence tables; refrain: share answered 'unknown' (or failed); precision: EM over answered "
    "questions. Rates in %."
)


def _run_lines(meta: ReportMeta) -> list[str]:
    lines = [
        f"- Benchmark: {meta.benchmark} (`{meta.questions_path}`)",
        f"- Questions limit: {meta.limit if meta.limit is not None else 'none'}",
        f"- Index version: {meta.index_version or 'n/a'}",
        f"- Started: {meta.started.isoformat(timespec='seconds')}; took {meta.seconds:.1f} s",
    ]
    if meta.machine:
        lines.append("- Machine: " + ", ".join(f"{k} {v}" for k, v in meta.machine.items()))
    return [*lines, ""]


def _main_header() -> list[str]:
    return [
        "Config",
        "Questions",
        "Errors",
        *(f"AP@{k}" for k in AP_KS),
        *(f"Hit@{k}" for k in MAIN_HIT_KS),
        "MRR",
        "EM",
        "F1",
        "Refrain",
        "Precision answered",
        "p50 ms",
        "p95 ms",
    ]


def _main_row(s: ConfigSummary, baseline: bool) -> list[str]:
    has_tables = s.gold_table_questions > 0
    total = s.latency_ms.get(TOTAL_STAGE, {})
    return [
        _cell(s.config) + (" (baseline)" if baseline else ""),
        str(s.questions),
        str(s.errors),
        *(_pct(s.ap.get(k)) for k in AP_KS),
        *(_pct(s.hit.get(k)) if has_tables else _NA for k in MAIN_HIT_KS),
        f"{s.mrr:.3f}" if has_tables else _NA,
        _pct(s.em),
        _pct(s.f1),
        _pct(s.refrain_rate),
        _pct(s.precision_answered) if s.answered else _NA,
        _ms(total.get("p50")),
        _ms(total.get("p95")),
    ]


def _delta_lines(summaries: list[ConfigSummary]) -> list[str]:
    if len(summaries) == 1:
        return ["Only the baseline was run."]
    base = summaries[0]
    header = ["Config"]
    for k in DELTA_KS:
        header += [f"AP@{k}", f"Δ AP@{k} (points)"]
    rows = []
    for s in summaries[1:]:
        row = [_cell(s.config)]
        for k in DELTA_KS:
            value, ref = s.ap.get(k), base.ap.get(k)
            delta = f"{100 * (value - ref):+.1f}" if value is not None and ref is not None else _NA
            row += [_pct(value), delta]
        rows.append(row)
    return _table(header, rows)


def _threshold_lines(summaries: list[ConfigSummary]) -> list[str]:
    """Per read configuration: the share answered, precision and EM at each confidence threshold."""
    rule = summaries[0].threshold.rule if summaries[0].threshold else ""
    lines = [f"Answering only at or above a confidence threshold; the recommended one ({rule}) in bold.", ""]
    rows = []
    for s in summaries:
        calibration = s.threshold
        assert calibration is not None
        for p in calibration.points:
            mark = "**" if p.threshold == calibration.chosen else ""
            rows.append(
                [
                    _cell(s.config),
                    f"{mark}{p.threshold:.2f}{mark}",
                    _pct(p.answered),
                    _pct(p.precision),
                    _pct(p.em),
                    f"{p.f1:.3f}",
                ]
            )
    return lines + _table(["Config", "Threshold", "Answered", "Precision", "EM", "F1"], rows)


def _latency_lines(summaries: list[ConfigSummary]) -> list[str]:
    rows = [
        [_cell(s.config), _cell(stage), _ms(stats.get("p50")), _ms(stats.get("p95")), _ms(stats.get("mean"))]
        for s in summaries
        for stage, stats in s.latency_ms.items()
    ]
    if not rows:
        return ["No configuration recorded timings."]
    return _table(["Config", "Stage", "p50", "p95", "mean"], rows, text_columns=2)


def _config_line(s: ConfigSummary) -> str:
    line = f"- **{_cell(s.config)}**: {s.description}"
    if s.settings:
        line += " — `" + json.dumps(s.settings, sort_keys=True, default=str) + "`"
    return line


def _mode_lines(summaries: list[ConfigSummary]) -> list[str]:
    rows = [
        [
            _cell(s.config),
            ", ".join(f"{mode} {n}" for mode, n in sorted(s.modes.items())),
            str(s.questions),
            str(s.bare_id_answers),
            f"{100 * s.em:.1f}",
            f"{s.latency_ms.get(TOTAL_STAGE, {}).get('p50', 0.0):.0f}",
        ]
        for s in summaries
    ]
    header = ["configuration", "answered by", "questions", "bare-id answers", "EM", "p50 ms"]
    return _table(header, rows, text_columns=2)


_READERS_LEGEND = (
    "The same retrieval (the engine as shipped) read by each reader. answered: share not 'unknown'; "
    "precision: EM over answered; s/question: the reading alone; tokens: LLM prompt + completion per "
    "question; cites: share of answered questions whose supporting evidence holds the answer; "
    "outcomes: the LLM reader's (supported, normalized, retried, unknown, unsupported, candidates, error)."
)


def _reader_lines(summaries: list[ConfigSummary]) -> list[str]:
    rows = []
    for s in summaries:
        read = s.latency_ms.get(TOTAL_STAGE, {})
        tokens = f"{s.tokens['prompt']:.0f} + {s.tokens['completion']:.0f}" if s.tokens else _NA
        rows.append(
            [
                _cell(s.config),
                str(s.questions),
                f"{100 * s.em:.1f}",
                f"{100 * s.f1:.1f}",
                f"{100 * (1 - s.refrain_rate):.1f}",
                f"{100 * s.precision_answered:.1f}",
                f"{read.get('p50', 0.0) / 1000:.2f}",
                f"{read.get('mean', 0.0) / 1000:.2f}",
                tokens,
                _pct(s.cites_answer),
                _cell(", ".join(f"{k} {v}" for k, v in sorted(s.read_outcomes.items()))),
            ]
        )
    header = [
        "reader", "questions", "EM", "F1", "answered", "precision", "s/question p50", "s/question mean",
        "tokens", "cites", "outcomes",
    ]  # fmt: skip
    return _table(header, rows)


def _table(header: list[str], rows: list[list[str]], text_columns: int = 1) -> list[str]:
    """A Markdown table: the first ``text_columns`` left-aligned, the figures after them right-aligned."""
    align = ["---"] * text_columns + ["---:"] * (len(header) - text_columns)
    lines = ["| " + " | ".join(header) + " |", "|" + "|".join(align) + "|"]
    lines += ["| " + " | ".join(row) + " |" for row in rows]
    return lines


def _cell(text: str) -> str:
    return text.replace("|", "\\|").replace("\n", " ")


def _pct(value: float | None) -> str:
    return _NA if value is None else f"{100 * value:.1f}"


def _ms(value: float | None) -> str:
    if value is None:
        return _NA
    return f"{value:.0f}" if value >= 100 else f"{value:.1f}"


# --- plots -----------------------------------------------------------------------------------------


def _figure(width: float, height: float):
    """A Matplotlib figure on the Agg canvas: no display, no pyplot global state."""
    from matplotlib.backends.backend_agg import FigureCanvasAgg
    from matplotlib.figure import Figure

    fig = Figure(figsize=(width, height), dpi=110, layout="constrained")
    FigureCanvasAgg(fig)
    return fig


def _plotted(summaries: list[ConfigSummary]) -> list[ConfigSummary]:
    """The configurations a plot shows: each stage over every question. Subsets (``first300/…``),
    source filters (``only-text/…``) and reader variants (``…+learned-reader``) stay in the tables; a
    plot with all of them cannot be read."""
    return [s for s in summaries if "/" not in s.config and "+" not in s.config]


def _style(i: int) -> dict[str, str]:
    """Colour and line style of the i-th series: ten colours, then the same colours dashed."""
    return {"color": f"C{i % 10}", "linestyle": "-" if i < 10 else "--"}


def _plot_ap(summaries: list[ConfigSummary], path: Path) -> None:
    fig = _figure(9.0, 4.8)
    ax = fig.add_subplot()
    for i, s in enumerate(_plotted(summaries)):
        curve = s.ap_curve or s.ap
        ks = sorted(curve)
        ax.plot(
            ks,
            [100 * curve[k] for k in ks],
            marker="o",
            markersize=3,
            linewidth=2.4 if i == 0 else 1.5,
            label=s.config + (" (baseline)" if i == 0 else ""),
            **_style(i),
        )
    ax.set_xscale("log")
    ax.set_xticks(AP_KS, [str(k) for k in AP_KS])
    ax.minorticks_off()
    ax.set_xlabel("k (evidence texts)")
    ax.set_ylabel("answer presence AP@k (%)")
    ax.set_ylim(0, 100)
    ax.grid(True, alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    ax.set_title("Answer presence in the first k evidence texts")
    fig.savefig(path, format="png")


def _plot_latency(summaries: list[ConfigSummary], path: Path) -> None:
    # i keeps each configuration's colour from the answer-presence plot
    timed = [(i, s) for i, s in enumerate(_plotted(summaries)) if s.latency_ms]
    stages = _stage_order([s for _, s in timed])
    fig = _figure(max(6.0, 1.3 * len(stages) + 2.5), 4.5)
    ax = fig.add_subplot()
    width = 0.8 / len(timed)
    values = []
    for slot, (i, s) in enumerate(timed):
        xs = [j - 0.4 + width * (slot + 0.5) for j in range(len(stages))]
        p50 = [s.latency_ms.get(stage, {}).get("p50", 0.0) for stage in stages]
        p95 = [s.latency_ms.get(stage, {}).get("p95", 0.0) for stage in stages]
        values += p50 + p95
        color = _style(i)["color"]
        hatch = "//" if i >= 10 else None
        ax.bar(xs, p95, width, color=color, alpha=0.35, hatch=hatch)
        ax.bar(xs, p50, width, color=color, label=s.config, hatch=hatch)
    positive = [v for v in values if v > 0]
    if positive and max(positive) / min(positive) > 100:
        ax.set_yscale("log")  # a total of seconds next to a stage of a millisecond: both stay readable
    ax.set_xticks(range(len(stages)), stages, rotation=30, ha="right")
    ax.set_ylabel("milliseconds")
    ax.set_title("Latency per stage: p50 (solid), p95 (light)")
    ax.grid(True, axis="y", alpha=0.3)
    ax.legend(fontsize="small", loc="center left", bbox_to_anchor=(1.01, 0.5))
    fig.savefig(path, format="png")


def _stage_order(summaries: list[ConfigSummary]) -> list[str]:
    """Stages in order of first appearance, the total last."""
    stages: dict[str, None] = {}
    for s in summaries:
        for stage in s.latency_ms:
            if stage != TOTAL_STAGE:
                stages.setdefault(stage)
    return [*stages, *([TOTAL_STAGE] if any(TOTAL_STAGE in s.latency_ms for s in summaries) else [])]
