"""The load benchmark's own parts: a re-publish is a real new version made of hard links (no copy), and
the summary counts what the report claims (429s apart from errors, untagged answers, percentiles)."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.versions import LEASE, VersionStore
from tests.conftest import load_script

SCRIPT = Path(__file__).resolve().parents[2] / "benchmarks" / "serve_load.py"


def test_a_republish_is_a_new_current_version_of_hard_links(sample_index, tmp_path: Path) -> None:
    bench = load_script(SCRIPT)
    _, built = sample_index
    root = tmp_path / "root"
    bench.publish(root, built.version_dir, "v1")
    bench.publish(root, built.version_dir, "v2")
    store = VersionStore(root)
    assert store.current() == (root / "v2").resolve() and store.manifest(root / "v2").version == "v2"
    files = [
        p for p in built.version_dir.rglob("*") if p.is_file() and p.name != LEASE and p.suffix != ".json"
    ]
    some = files[0].relative_to(built.version_dir)
    assert (root / "v2" / some).stat().st_ino == files[0].stat().st_ino  # linked, not copied
    assert (root / "v2" / LEASE).stat().st_ino != (built.version_dir / LEASE).stat().st_ino


def test_the_summary_counts_429s_apart_from_errors() -> None:
    bench = load_script(SCRIPT)
    ok = {"status": 200, "queued_ms": 0.0, "mode": "kg-lookup", "reader": "kg-lookup", "fallback": False}
    records = [
        {**ok, "ms": float(ms), "engine_ms": ms / 2, "version": "v1" if ms < 60 else "v2"}
        for ms in range(10, 110, 10)
    ]
    records += [{"status": 429, "ms": 1.0, "error": "queue_full"}, {"status": 504, "ms": 9.0, "error": "x"}]
    records += [{**ok, "ms": 5.0, "engine_ms": 5.0, "version": None}]
    got = bench.summary(records, seconds=11.0)
    assert (got["requests"], got["answered"], got["status_429"], got["errors"]) == (13, 11, 1, 1)
    assert got["untagged"] == 1 and got["answers_by_version"] == {"v1": 5, "v2": 5}
    # 11 latencies 5, 10, ..., 100: linear interpolation between ranks (NumPy's default) gives 50 and 95
    assert got["p50_ms"] == 50.0 and got["p95_ms"] == 95.0
    assert got["error_kinds"] == {"x": 1} and got["throughput_per_s"] == 1.0


def test_rss_stability_is_judged_from_the_figure_after_the_second_publish() -> None:
    bench = load_script(SCRIPT)
    published = [
        {"memory_before": {"answering": v, "rss_mb": rss}}
        for v, rss in [("v1", 600.0), ("v2", 700.0), ("v3", 800.0), ("v4", 820.0), ("v5", 790.0)]
    ]
    settled = bench.settled_rss(published, {"answering": "v6", "rss_mb": 840.0})
    assert settled == {"v1": 600.0, "v2": 700.0, "v3": 800.0, "v4": 820.0, "v5": 790.0, "v6": 840.0}
    got = bench.stability(settled, band_pct=5.0)
    assert got["reference"] == "v3" and got["reference_mb"] == 800.0  # the first switches' growth left out
    assert got["max_deviation_pct"] == pytest.approx(5.0, abs=0.05) and got["stable"] is True
    # least squares over (2, 800), (3, 820), (4, 790), (5, 840): 45 / 5
    assert got["growth_mb_per_version"] == pytest.approx(9.0, abs=0.05)
    leaking = bench.stability({"v1": 600.0, "v3": 800.0, "v4": 850.0, "v5": 900.0}, band_pct=10.0)
    assert leaking["stable"] is False and leaking["max_deviation_pct"] == pytest.approx(12.5, abs=0.05)
    assert bench.stability({"v1": 600.0, "v3": 800.0}, band_pct=10.0)["stable"] is None  # too few


def test_versions_the_rebuild_dag_names_by_time_are_counted_in_publish_order() -> None:
    """With --publish-with dag the DAG names its versions (v<timestamp>): their place in the order they
    were published says how many publishes came before, not the digits of the name."""
    bench = load_script(SCRIPT)
    order = ["v20261127T080000000000Z", "v20261127T080300000000Z", "v20261127T080600000000Z"]
    order.append("v20261127T080900000000Z")
    assert [bench.published_before(v, order) for v in order] == [0, 1, 2, 3]
    settled = dict(zip(order, [600.0, 700.0, 800.0, 880.0], strict=True))
    got = bench.stability(settled, band_pct=5.0, order=order)
    assert got["reference"] == order[2] and got["stable"] is False
    assert got["max_deviation_pct"] == pytest.approx(10.0, abs=0.05)
