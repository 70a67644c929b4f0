"""The fast entries of benchmarks/expected.yaml: the evaluation command on the sample index must still
give the recorded figures (a regression in retrieval or ranking quality fails here, not in a report)."""

from __future__ import annotations

import json
import shlex
from pathlib import Path

import pytest
import yaml

from query.cli import main
from tests.conftest import REPO

MATRIX = yaml.safe_load((REPO / "benchmarks" / "expected.yaml").read_text())


@pytest.mark.parametrize("entry", MATRIX["fast"], ids=lambda e: e["name"])
def test_fast_regression_entry(entry: dict, sample_index, tmp_path: Path, monkeypatch) -> None:
    _, result = sample_index
    monkeypatch.chdir(REPO)
    argv = shlex.split(entry["command"].format(sample_index=result.version_dir))
    assert argv[:2] == ["hqa", "eval"]
    assert main([*argv[1:], "--out", str(tmp_path)]) == 0
    report = json.loads((tmp_path / "report.json").read_text())
    got = {s["config"]: s for s in report["summaries"]}
    assert report["summaries"][0]["config"] == "bm25-baseline"
    misses = []
    for config, figures in entry["expected"].items():
        for metric, expected in figures.items():
            k = metric.split("@")[1]
            value = got[config]["ap"][k]
            if abs(value - expected) > entry["tolerance"]:
                misses.append(f"{config} {metric}: {value:.3f}, expected {expected:.3f}")
    assert not misses, "; ".join(misses)
