"""benchmarks/scale/capacity.py: a full build's rows and core-hours from a scaling run, checked by hand."""

from __future__ import annotations

import json
import sys

import pytest

from tests.conftest import REPO, load_script

SCALE = REPO / "benchmarks" / "scale"


@pytest.fixture(scope="module")
def capacity():
    sys.path.insert(0, str(SCALE))  # capacity.py imports its neighbours by name, as run.py does
    return load_script(SCALE / "capacity.py")


def stage(rows: int, cpu_seconds: float, peak: float = 500.0) -> dict:
    return {"status": "ok", "rows": rows, "cpu_seconds": cpu_seconds, "peak_rss_mb": peak}


def size(entities: int, evidence: int, scale: float) -> dict:
    names = ("ingest", "entities", "graph", "tables")
    stages = {name: stage(int(1000 * scale), 2.0 * scale) for name in names}
    stages.update(
        verbalize=stage(evidence, 0.5 * evidence / 1000),
        bm25=stage(evidence, 0.1 * evidence / 1000),
        vectors=stage(evidence, 3.6 * evidence / 1000, peak=1500.0),
        statements={"status": "killed_memory"},
    )
    return {"entities": entities, "evidence_rows": evidence, "corpus": {"statements": 900}, "stages": stages}


def test_rates_come_from_the_largest_size_that_has_the_stage(capacity, tmp_path):
    path = tmp_path / "scaling.json"
    path.write_text(json.dumps({"sizes": [size(10, 1_000, 1.0), size(100, 10_000, 10.0)]}))
    plans = {p["stage"]: p for p in (capacity.stage_plan(json.loads(path.read_text())["sizes"], s)
                                     for s in capacity.STAGES)}  # fmt: skip
    # vectors: 3.6 ms a row at the 100-entity size, 250M rows -> 250e6 * 3.6e-3 / 3600 = 250 core-hours
    assert plans["vectors"]["from_size"] == 100
    assert plans["vectors"]["rows"] == pytest.approx(250e6)
    assert plans["vectors"]["core_hours"] == pytest.approx(250.0)
    assert plans["vectors"]["peak_rss_mb"] == 1500.0
    # entities grow with kept items: 10,000 aliases for 100 entities -> 100 a item x 15M items
    assert plans["entities"]["rows"] == pytest.approx(100 * 15e6)
    # a stage that never finished is said to be unmeasured, not priced at zero
    assert plans["statements"] == {"stage": "statements", "status": "not measured"}


def test_minilm_embedding_cost_follows_the_measured_rate(capacity):
    # 250M texts at 194.5 texts/s on 2 cores = 97.25 texts/s a core
    assert capacity.embedding()["bfloat16"] == pytest.approx(250e6 / 97.25 / 3600)
