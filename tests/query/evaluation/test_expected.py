"""benchmarks/expected.yaml, the regression matrix: the fast entries' commands on the sample index must still
give the recorded figures (a regression in retrieval, ranking or a mode's answers fails here, not in a
report), every entry's committed report must hold its figures, and every maintained benchmark in
benchmarks/ must have an entry."""

from __future__ import annotations

import shlex
from datetime import UTC, datetime
from pathlib import Path

import pytest

from query.cli.main import main
from query.evaluation import ConfigSummary, Report, ReportMeta
from query.evaluation.expected import ExpectedEntry, ExpectedMatrix, metric_value, misses
from tests.conftest import REPO, load_script

CHECKER = load_script(REPO / "benchmarks" / "check_expected.py")
MATRIX = ExpectedMatrix.load(CHECKER.MATRIX)
COMMITTED = [e for e in (*MATRIX.fast, *MATRIX.full) if e.report]
HELPERS = {
    *("benchmarks_common.py", "check_expected.py", "expected_figures.py", "graph_critic_sample.py"),
    "build_readers.py",  # the two readers build.py times beside their raw engines
}
GENERATORS = {"kg_questions.py", "kg_set_questions.py"}
"""Not benchmarks: shared code, and the question sets' writers (tests/benchmarks checks their output)."""


def _report_name(entry: ExpectedEntry) -> str:
    return Path(entry.report).name if entry.report else "report.json"


@pytest.mark.parametrize("entry", MATRIX.fast, ids=lambda e: e.name)
def test_fast_regression_entry(entry: ExpectedEntry, sample_index, tmp_path: Path, monkeypatch) -> None:
    _, result = sample_index
    monkeypatch.chdir(REPO)
    argv = shlex.split(entry.command.format(sample_index=result.version_dir))
    argv = [str(tmp_path) if word == "OUT" else word for word in argv]
    program = CHECKER.program(entry.command)
    if program == "hqa":
        assert main(argv[1:]) == 0
    else:
        assert argv[0] == "python" and program.startswith("benchmarks/"), entry.command
        assert load_script(REPO / program).main(argv[2:]) == 0
    assert CHECKER.check(entry, tmp_path / _report_name(entry)) == []


@pytest.mark.parametrize("entry", COMMITTED, ids=lambda e: e.name)
def test_committed_report_holds_the_entry(entry: ExpectedEntry) -> None:
    """A full run is a benchmark, but its expected figures must be the ones its committed report holds."""
    assert CHECKER.check(entry, REPO / entry.report) == []


@pytest.mark.parametrize("entry", COMMITTED, ids=lambda e: e.name)
def test_a_figure_moved_past_the_tolerance_misses(entry: ExpectedEntry) -> None:
    """The check can fail: each expected figure moved by twice the tolerance is reported, and only it."""
    for config, figures in entry.expected.items():
        for metric, value in figures.items():
            moved = {c: dict(f) for c, f in entry.expected.items()}
            moved[config][metric] = value + 2 * entry.tolerance
            shifted = entry.model_copy(update={"expected": moved})
            found = CHECKER.check(shifted, REPO / entry.report)
            assert len(found) == 1 and found[0].startswith(f"{config} {metric}: "), found


def test_every_maintained_benchmark_has_an_entry() -> None:
    """benchmarks/ keeps maintained benchmarks only: a script the matrix does not check is a study, and
    goes to docs/experiments/."""
    programs = {CHECKER.program(e.command) for e in (*MATRIX.fast, *MATRIX.full)}
    scripts = {p.name for p in (REPO / "benchmarks").iterdir() if p.suffix in (".py", ".sh")}
    unchecked = {s for s in scripts - HELPERS - GENERATORS if f"benchmarks/{s}" not in programs}
    assert not unchecked, f"no expected.yaml entry runs {sorted(unchecked)}"
    assert all((REPO / e.report).is_file() for e in COMMITTED)


def test_a_missing_configuration_or_metric_is_a_miss() -> None:
    entry = ExpectedEntry(
        name="e", command="hqa eval", tolerance=0.01, expected={"a": {"em": 0.5, "f1": 0.5}}
    )
    assert CHECKER.misses(entry, {"a": {"em": 0.505}}) == ["a f1: not in the report"]
    assert CHECKER.misses(entry, {}) == ["a: not in the report"]
    assert CHECKER.misses(entry, {"a": {"em": float("nan"), "f1": 0.5}}) == ["a em: nan, expected 0.5 ± 0.01"]


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
