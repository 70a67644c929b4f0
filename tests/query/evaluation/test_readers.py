"""The reader axis of ``hqa eval``: a seeded sample, two folds, each reader's results kept and resumed —
on the sample index with the candidate reader and the real bundled 0.5B model."""

from __future__ import annotations

import json
from pathlib import Path

from query.cli.main import main
from query.evaluation import read_report
from query.evaluation.loaders import load_benchmark
from query.evaluation.readers import REPORT, TUNE, folds, sample_questions
from tests.conftest import OTTQA

FAST = "qwen2.5-coder-0.5b-instruct"


def test_sample_and_folds_are_fixed_by_the_seed() -> None:
    questions = load_benchmark("ottqa", OTTQA)
    first, again = sample_questions(questions, 20, 3), sample_questions(questions, 20, 3)
    assert [q.id for q in first] == [q.id for q in again] and len(first) == 20
    order = [q.id for q in questions]
    assert [order.index(q.id) for q in first] == sorted(order.index(q.id) for q in first)  # benchmark order
    assert [q.id for q in sample_questions(questions, 20, 4)] != [q.id for q in first]
    fold_of = folds(first, 0.25, 3)
    assert list(fold_of.values()).count(TUNE) == 5 and list(fold_of.values()).count(REPORT) == 15
    assert folds(first, 0.25, 3) == fold_of


def test_eval_reads_with_each_reader_and_resumes(sample_index, model_cache: Path, tmp_path: Path) -> None:
    _, result = sample_index
    config = tmp_path / "engine.toml"
    config.write_text(f'[llm]\ncache_dir = "{model_cache}"\n[llm_reader]\nevidence = 4\nwindow_chars = 200\n')
    out = tmp_path / "eval"
    argv = [
        "eval", "--benchmark", "ottqa", "--questions", str(OTTQA), "--index", str(result.version_dir),
        "--sample", "6", "--seed", "1", "--tune-share", "0.5", "--no-ablations", "--reader", "candidates",
        "--readers", f"candidates,{FAST}", "--engine-config", str(config), "--out", str(out),
    ]  # fmt: skip
    assert main(argv) == 0
    lines = {
        name: (out / "readers" / f"{name}.jsonl").read_text().splitlines() for name in ("candidates", FAST)
    }
    assert all(len(rows) == 6 for rows in lines.values())
    llm_rows = [json.loads(line) for line in lines[FAST]]
    assert all(r["prompt_tokens"] > 0 and r["read_outcome"] for r in llm_rows)
    assert all(r["cites_answer"] for r in llm_rows if r["answered"])  # every answer is in its cited rows
    sample = json.loads((out / "sample.json").read_text())
    assert sample["seed"] == 1 and sorted(r["fold"] for r in sample["questions"]) == [REPORT] * 3 + [TUNE] * 3

    report = read_report(out / "report.json")
    by_name = {s.config: s for s in report.summaries}
    for name in ("candidates", FAST):
        assert by_name[f"reader={name}"].questions == 6
        assert (
            by_name[f"reader={name}/fold=tune"].questions
            == by_name[f"reader={name}/fold=report"].questions
            == 3
        )
    assert by_name[f"reader={FAST}"].tokens["prompt"] > 0 and by_name[f"reader={FAST}"].read_outcomes
    assert "## Readers" in (out / "report.md").read_text()

    # a second run with the same --out reads nothing again
    assert main(argv) == 0
    assert (out / "readers" / f"{FAST}.jsonl").read_text().splitlines() == lines[FAST]
