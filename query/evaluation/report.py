"""The benchmark report: ``report.json`` (everything, for machines and regression checks), ``report.md``
(for people, ``query.evaluation.report_markdown``) and two plots, ``ap_at_k.png`` and ``latency.png``
(``query.evaluation.report_plots``).

The first summary is the baseline: it is the first row of every table and the reference of the deltas.
Every file is written to a temporary name and moved into place, so a reader never sees half a report.
"""

from __future__ import annotations

import logging
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ingest.files import atomic_path, write_text_atomic
from query.evaluation.metrics import ConfigSummary
from query.evaluation.report_markdown import render_markdown
from query.evaluation.report_plots import plot_ap, plot_latency, plotted

log = logging.getLogger(__name__)


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
    write_text_atomic(paths.json_path, report.model_dump_json(indent=2) + "\n")
    with atomic_path(paths.ap_plot) as tmp:
        plot_ap(summaries, tmp)
    if any(s.latency_ms for s in plotted(summaries)):
        paths.latency_plot = out_dir / "latency.png"
        with atomic_path(paths.latency_plot) as tmp:
            plot_latency(summaries, tmp)
    markdown = render_markdown(
        summaries, meta, plots=[p.name for p in (paths.ap_plot, paths.latency_plot) if p]
    )
    write_text_atomic(paths.markdown, markdown)
    log.info("report written to %s (%d configurations)", out_dir, len(summaries))
    return paths


def read_report(path: Path) -> Report:
    """A ``report.json`` read back, e.g. to compare a run with expected figures."""
    return Report.model_validate_json(Path(path).read_bytes())
