"""The benchmark report for people: ``report.md``, its tables, deltas against the baseline and legends.

Rates are in percent, MRR in [0, 1], latencies in milliseconds; a figure that does not apply (no gold
tables, no timings, nothing answered) is written "n/a".
"""

from __future__ import annotations

import json
from collections.abc import Sequence
from typing import TYPE_CHECKING

from query.evaluation.metrics import AP_KS, TOTAL_STAGE, ConfigSummary

if TYPE_CHECKING:
    from query.evaluation.report import ReportMeta

MAIN_HIT_KS = (1, 10)
_NA = "n/a"  # a figure that does not apply (no gold tables, no timings, nothing answered)
DELTA_KS = (30, 100)


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
