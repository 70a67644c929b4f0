"""The fast entries of benchmarks/expected.yaml: the evaluation command on the sample index must still
give the recorded figures (a regression in retrieval or ranking quality fails here, not in a report)."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest

from query.cli.main import main
from query.evaluation import ConfigSummary, Report, ReportMeta, read_report
from query.evaluation.expected import ExpectedEntry, ExpectedMatrix, metric_value, misses
from tests.conftest import REPO

MATRIX = ExpectedMatrix.load(REPO / "benchmarks" / "expected.yaml")


@pytest.mark.parametrize("entry", MATRIX.fast, ids=lambda e: e.name)
def test_fast_regression_entry(entry: ExpectedEntry, sample_index, tmp_path: Path, monkeypatch) -> None:
    _, result = sample_index
    monkeypatch.chdir(REPO)
    argv = shlex.split(entry.command.format(sample_index=result.version_dir))
    assert argv[:2] == ["hqa", "eval"]
    assert main([*argv[1:], "--out", str(tmp_path)]) == 0
    report = read_report(tmp_path / "report.json")
    assert report.summaries[0].config == "bm25-baseline"
    assert "hqa eval --benchmark ottqa" in report.meta.command  # the command given, not the test runner's
    assert not misses(report, entry)


@pytest.mark.parametrize("entry", MATRIX.full, ids=lambda e: e.name)
def test_full_entries_match_their_committed_report(entry: ExpectedEntry) -> None:
    """A full run is a benchmark, but its expected figures must be the ones its committed report holds."""
    assert entry.report, f"{entry.name}: a full entry names its committed report"
    report = read_report(REPO / entry.report)
    assert not misses(report, entry)
    assert shlex.split(entry.command)[:2] == ["hqa", "eval"]


def test_a_figure_outside_the_tolerance_is_reported() -> None:
    summary = ConfigSummary(
        config="bm25-baseline",
        description="synthetic",
        questions=10,
        errors=0,
        ap={30: 0.5, 100: 0.7},
        hit={1: 0.4},
        mrr=0.45,
        gold_table_questions=10,
        em=0.1,
        f1=0.2,
        answered=5,
        refrain_rate=0.5,
        precision_answered=0.2,
        mean_pool_size=1000,
        latency_ms={},
    )
    report = Report(
        meta=ReportMeta(
            title="t",
            command="hqa eval",
            benchmark="ottqa",
            questions_path="q",
            started=datetime.now(UTC),
            seconds=1.0,
        ),
        summaries=[summary],
    )
    entry = ExpectedEntry(
        name="shifted",
        command="hqa eval",
        tolerance=0.01,
        expected={
            "bm25-baseline": {"ap@30": 0.55, "ap@100": 0.705, "mrr": 0.45, "hit@1": 0.4},
            "nope": {"em": 0},
        },
    )
    assert misses(report, entry) == [
        "bm25-baseline ap@30: 0.500, expected 0.550 ± 0.01",
        "nope: not in the report",
    ]
    assert metric_value(summary, "refrain_rate") == 0.5
    with pytest.raises(KeyError, match="unknown metric"):
        metric_value(summary, "recall@3")
    with pytest.raises(KeyError, match="ap@k for k in"):
        metric_value(summary, "ap@7")
