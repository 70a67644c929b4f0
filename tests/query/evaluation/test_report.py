"""The report writer: report.json, report.md and the plots, written whole, and refused for bad input."""

from __future__ import annotations

from datetime import datetime
from pathlib import Path

import pytest

from query.evaluation import (
    ConfigSummary,
    QuestionEval,
    ReportMeta,
    read_report,
    summarize,
    write_report,
)
from tests.query.evaluation.conftest import hand_made_evals

PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- report ----------------------------------------------------------------------------------------


def _meta() -> ReportMeta:
    return ReportMeta(
        title="OTT-QA dev, first 5",
        command="hqa eval --benchmark ottqa --limit 5",
        benchmark="ottqa",
        questions_path="/data/ottqa/dev.json",
        index_version="v1",
        limit=5,
        machine={"cores": 2, "memory_gib": 8.0, "cpu": "test", "python": "3.11"},
        started=datetime(2025, 1, 2, 3, 4, 5),
        seconds=12.5,
        notes=["hand-made figures"],
    )


def _summaries() -> list[ConfigSummary]:
    evals = hand_made_evals()
    base = summarize("bm25", "BM25 only", [e.model_copy(update={"config": "bm25"}) for e in evals])
    better = [e.model_copy(update={"config": "hybrid", "presence_rank": 2 if e.presence_rank is None else 1,
                                   "confidence": 0.5, "candidate_em": e.em})
              for e in evals]  # fmt: skip
    untimed = [e.model_copy(update={"config": "no-timings", "timings_ms": {}}) for e in evals]
    return [
        base,
        summarize("hybrid", "BM25 + dense | fused", better, settings={"k": 100}),
        summarize("no-timings", "timings off", untimed),
    ]


def test_write_report_writes_all_files(tmp_path: Path) -> None:
    summaries = _summaries()
    paths = write_report(tmp_path / "out", summaries, _meta())
    assert [p.name for p in paths.files] == ["report.json", "report.md", "ap_at_k.png", "latency.png"]
    for png in (paths.ap_plot, paths.latency_plot):
        assert png is not None and png.read_bytes()[:8] == PNG_SIGNATURE
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths.files)

    report = read_report(paths.json_path)
    assert report.meta == _meta()
    assert [s.config for s in report.summaries] == ["bm25", "hybrid", "no-timings"]
    assert report.summaries[0].ap == summaries[0].ap  # int keys survive the JSON round trip

    md = paths.markdown.read_text()
    assert md.startswith("# OTT-QA dev, first 5\n")
    assert "```\nhqa eval --benchmark ottqa --limit 5\n```" in md
    assert "cores 2" in md
    main_rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert main_rows[0].startswith(
        "| Config | Questions | Errors | AP@1 | AP@5 | AP@10 | AP@30 | AP@100 | AP@1000"
    )
    assert main_rows[1].startswith("| bm25 (baseline) | 5 | 1 | 20.0 | 20.0 | 40.0 | 40.0 | 40.0 | 60.0 |")
    assert main_rows[2].startswith("| hybrid | 5 | 1 | 60.0 |")
    assert '- **hybrid**: BM25 + dense | fused — `{"k": 100}`' in md
    # vs baseline: hybrid has AP@30 = AP@100 = 80 (4 of 5, the error misses) against 40
    assert "| hybrid | 80.0 | +40.0 | 80.0 | +40.0 |" in md
    assert "| bm25 | total | 70.0 | 97.0 | 70.0 |" in md
    assert "![ap_at_k](ap_at_k.png)" in md and "- hand-made figures" in md
    # only the read configuration has a threshold sweep: 4 questions without error, 1 right, all at 0.5
    assert "## Answer threshold" in md and "| bm25 | 0.00 |" not in md
    assert "| hybrid | **0.00** | 100.0 | 25.0 | 25.0 | 0.400 |" in md
    assert "| hybrid | 0.50 | 100.0 | 25.0 | 25.0 | 0.400 |" in md


def test_write_report_only_baseline_without_timings(tmp_path: Path) -> None:
    only = QuestionEval(question_id="a", config="base", presence_rank=1, has_gold_table=False)
    summary = summarize("base", "no timings", [only])
    paths = write_report(tmp_path, [summary], _meta())
    assert paths.latency_plot is None and not (tmp_path / "latency.png").exists()
    assert paths.ap_plot.read_bytes()[:8] == PNG_SIGNATURE
    md = paths.markdown.read_text()
    assert "Only the baseline was run." in md and "No configuration recorded timings." in md
    assert "| base (baseline) | 1 | 0 | 100.0 |" in md
    assert "| n/a | n/a | n/a |" in md  # Hit@1, Hit@10, MRR without gold tables
    assert not list(tmp_path.glob(".*.tmp"))


def test_write_report_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one"):
        write_report(tmp_path, [], _meta())
    base = _summaries()[0]
    with pytest.raises(ValueError, match="repeated: bm25"):
        write_report(tmp_path, [base, base], _meta())
