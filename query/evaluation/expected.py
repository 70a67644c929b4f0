"""The regression matrix (``benchmarks/expected.yaml``): an evaluation command and the figures it must give.

``fast`` entries run on the bundled sample index inside the test suite; ``full`` entries are benchmark
runs (the whole OTT-QA dev set) whose committed report is checked with
``benchmarks/check_expected.py`` after a re-run. Both are compared here, the same way: every expected
figure of every configuration must lie within the entry's tolerance of the report's.
"""

from __future__ import annotations

from pathlib import Path

import yaml
from pydantic import BaseModel, ConfigDict, Field

from query.evaluation.metrics import ConfigSummary
from query.evaluation.report import Report

METRICS = ("ap@k", "hit@k", "mrr", "em", "f1", "refrain_rate", "precision_answered")


class ExpectedEntry(BaseModel):
    model_config = ConfigDict(extra="forbid")

    name: str
    command: str = Field(description="the hqa eval command line; {sample_index} is filled in by the test")
    tolerance: float = Field(gt=0.0, le=1.0, description="largest absolute difference allowed")
    expected: dict[str, dict[str, float]] = Field(description="configuration -> metric -> figure")
    report: str | None = Field(None, description="the committed report.json of a full entry")


class ExpectedMatrix(BaseModel):
    model_config = ConfigDict(extra="forbid")

    fast: list[ExpectedEntry] = Field(default_factory=list)
    full: list[ExpectedEntry] = Field(default_factory=list)

    @classmethod
    def load(cls, path: Path) -> ExpectedMatrix:
        return cls.model_validate(yaml.safe_load(Path(path).read_text()) or {})

    def entry(self, name: str) -> ExpectedEntry:
        for entry in (*self.fast, *self.full):
            if entry.name == name:
                return entry
        known = ", ".join(e.name for e in (*self.fast, *self.full))
        raise KeyError(f"no entry {name!r} in the regression matrix; known: {known}")


def metric_value(summary: ConfigSummary, metric: str) -> float:
    """One figure of a summary by its matrix name: ``ap@30``, ``hit@1``, ``mrr``, ``em``, ``f1``, …"""
    name, _, k = metric.partition("@")
    if name in ("ap", "hit") and k.isdigit():
        figures = summary.ap if name == "ap" else summary.hit
        if int(k) not in figures:
            raise KeyError(f"{metric}: the report has {name}@k for k in {sorted(figures)} only")
        return figures[int(k)]
    if not k and name in METRICS:
        return float(getattr(summary, name))
    raise KeyError(f"unknown metric {metric!r}; use one of {', '.join(METRICS)}")


def misses(report: Report, entry: ExpectedEntry) -> list[str]:
    """Every expected figure the report does not reproduce within tolerance (empty: the entry holds)."""
    got = {s.config: s for s in report.summaries}
    out = []
    for config, figures in entry.expected.items():
        if config not in got:
            out.append(f"{config}: not in the report")
            continue
        for metric, expected in figures.items():
            value = metric_value(got[config], metric)
            if abs(value - expected) > entry.tolerance:
                out.append(f"{config} {metric}: {value:.3f}, expected {expected:.3f} ± {entry.tolerance}")
    return out
