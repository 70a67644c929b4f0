"""benchmarks/scale/run.py and its parts: measured processes with memory and time caps, resumable step
records, per-stage rows and the issue's two checks."""

from __future__ import annotations

import json
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests.conftest import REPO, load_script

SCALE = REPO / "benchmarks" / "scale"
MB = 2**20


@pytest.fixture(scope="module")
def harness() -> SimpleNamespace:
    """The harness's modules (``run.py`` puts its folder on the path, the others load from there)."""
    run = load_script(SCALE / "run.py")
    return SimpleNamespace(
        run=run,
        measure=sys.modules["scale_measure"],
        steps=sys.modules["scale_steps"],
        report=sys.modules["scale_report"],
        synth=sys.modules["synth"],
    )


def _python(code: str) -> list[str]:
    return [sys.executable, "-c", code]


ALLOCATING_TREE = """
import multiprocessing, time
def child():
    block = b"x" * (160 << 20)
    time.sleep(1.5)
if __name__ == "__main__":
    held = b"y" * (60 << 20)
    p = multiprocessing.get_context("fork").Process(target=child)
    p.start(); p.join()
"""


def test_peak_memory_counts_the_whole_tree_and_the_largest_process(harness, tmp_path: Path) -> None:
    script = tmp_path / "tree.py"
    script.write_text(ALLOCATING_TREE)
    measured = harness.measure.run_measured(
        [sys.executable, str(script)], {}, tmp_path / "log", sample_seconds=0.05
    )
    assert measured.status == "ok" and measured.returncode == 0
    assert measured.max_process_rss_mb >= 160  # the child's own peak, from wait4
    assert measured.sampled_rss_mb >= 160 + 60  # parent and child held together
    assert measured.peak_rss_mb == max(measured.max_process_rss_mb, measured.sampled_rss_mb)
    assert measured.seconds >= 1.5 and measured.cpu_seconds > 0


FORK_SERVER_WORKER = """
import multiprocessing, time
def burn():
    end = time.process_time() + 1.5
    while time.process_time() < end:
        pass
if __name__ == "__main__":
    ctx = multiprocessing.get_context("forkserver")
    p = ctx.Process(target=burn)
    p.start(); p.join()
"""


def test_cpu_of_fork_server_workers_is_counted(harness, tmp_path: Path) -> None:
    """The ingest parses in a fork server's pool: its workers are not the step's to reap, so ``wait4``
    alone would miss their CPU time."""
    script = tmp_path / "server.py"
    script.write_text(FORK_SERVER_WORKER)
    measured = harness.measure.run_measured(
        [sys.executable, str(script)], {}, tmp_path / "log", sample_seconds=0.05
    )
    assert measured.status == "ok"
    assert measured.cpu_seconds >= 1.4


def test_a_tree_over_its_memory_cap_is_killed(harness, tmp_path: Path) -> None:
    code = "import time\nblock = b'x' * (400 << 20)\ntime.sleep(60)"
    started = time.monotonic()
    measured = harness.measure.run_measured(_python(code), {}, tmp_path / "log", max_rss_mb=150)
    assert measured.status == "killed_memory"
    assert time.monotonic() - started < 30
    assert measured.peak_rss_mb > 150


def test_a_step_past_its_deadline_is_killed_and_a_failure_is_one(harness, tmp_path: Path) -> None:
    slow = harness.measure.run_measured(
        _python("import time; time.sleep(60)"), {}, tmp_path / "log", deadline=time.monotonic() + 1
    )
    assert slow.status == "killed_time" and slow.seconds < 30
    failed = harness.measure.run_measured(_python("raise SystemExit(3)"), {}, tmp_path / "log")
    assert failed.status == "failed" and failed.returncode == 3


def _record(steps, key: str, status: str = "ok", result=None, **work):
    measured = steps.Measured(
        status=status,
        returncode=0,
        seconds=work.get("seconds", 2.0),
        cpu_seconds=work.get("cpu", 1.0),
        peak_rss_mb=work.get("peak", 100.0),
        max_process_rss_mb=work.get("peak", 100.0),
        sampled_rss_mb=work.get("peak", 100.0),
        load_after=1.0,
    )
    return steps.StepRecord(
        key=key,
        step=key.split(":")[0],
        status=status,
        measured=measured,
        result=result,
        work_seconds=work.get("work", 1.0),
        work_cpu_seconds=work.get("work_cpu", 0.5),
    )


def test_steps_after_a_failure_are_skipped_and_done_steps_are_not_run_again(harness, tmp_path: Path) -> None:
    steps = harness.steps
    caps = steps.Caps(max_rss_mb=None, deadline=None)
    run = steps.SizeRun(tmp_path, {}, caps)
    run.records["ingest:0"] = _record(steps, "ingest:0", status="killed_memory")
    skipped = run.step("plan", "plan", {}, [run.records["ingest:0"]])
    assert skipped.status == "skipped" and "ingest:0" in skipped.reason
    # a finished step is kept across runs (saved as soon as it ends), not run again
    run.records["discover"] = _record(steps, "discover", result=[{"reader": "wikidata"}])
    run._save()
    again = steps.SizeRun(tmp_path, {}, caps)
    assert again.step("discover", "discover", {}, []).result == [{"reader": "wikidata"}]
    assert again.step("ingest:0", "ingest", {}, []).status == "killed_memory"  # kept unless retried
    assert not list((tmp_path / "scale-steps").glob("*.log"))  # nothing ran


def test_a_step_runs_in_its_own_process_with_the_runs_settings(harness, tmp_path: Path) -> None:
    spec = harness.synth.CorpusSpec(entities=100, pages=30, seed=2)
    folder, _ = harness.synth.cached_corpus(spec, tmp_path / "corpora", workers=1)
    state = tmp_path / "state"
    steps = harness.steps
    run = steps.SizeRun(
        state, harness.run.step_env(state, "wordllama-l2-256"), steps.Caps(max_rss_mb=4096, deadline=None)
    )
    wikidata, wikipedia = spec.file_names()
    params = {"wikidata": [str(folder / wikidata)], "wikipedia": [str(folder / wikipedia)], "force": True}
    record = run.step("discover", "discover", {"params": params}, [])
    assert record.status == "ok", (state / "scale-steps" / "discover.log").read_text()[-2000:]
    assert [job["job"]["reader"] for job in record.result] == ["wikidata", "wikipedia"]
    assert (state / "ingest" / "properties").is_dir()  # the step wrote into the run's state folder
    assert 0 < record.work_seconds < record.measured.seconds
    saved = json.loads((state / "scale-steps.json").read_text())
    assert saved["discover"]["result"] == record.result


def test_stage_rows_and_checks(harness) -> None:
    steps, report = harness.steps, harness.report
    ingest = [
        _record(
            steps,
            "ingest:0",
            result={"outcome": {"summary": {"counts": {"entities": 10, "statements": 90, "quarantine": 0}}}},
        ),
        _record(
            steps,
            "ingest:1",
            result={"outcome": {"summary": {"counts": {"pages": 5, "passages": 45, "quarantine": 2}}}},
        ),
    ]
    summary = report.summarize(ingest, report.ROWS["ingest"])
    assert summary["rows"] == 150 and summary["processes"] == 2
    assert summary["work_seconds"] == 2.0 and summary["seconds_per_row"] == pytest.approx(2.0 / 150)

    def size(entities: int, rows: int, work: float, peak: float, status: str = "ok") -> dict:
        stage = {"status": status, "rows": rows, "work_seconds": work, "peak_rss_mb": peak}
        stage |= (
            {"seconds_per_row": work / rows, "cpu_seconds_per_row": work / rows} if status == "ok" else {}
        )
        return {"entities": entities, "pages": entities // 10, "stages": dict.fromkeys(report.STAGES, stage)}

    linear = report.checks([size(1_000, 100, 1.0, 300), size(100_000, 10_000, 100.0, 1_500)])
    assert linear["time_ok"] and linear["memory_ok"]
    slower = report.checks([size(1_000, 100, 1.0, 300), size(100_000, 10_000, 131.0, 1_500)])
    assert not slower["time_ok"] and slower["stages"]["bm25"]["seconds_per_row_ratio"] == pytest.approx(1.31)
    killed = report.checks([size(1_000, 100, 1.0, 300), size(100_000, 10_000, 50.0, 12_300, "killed_memory")])
    assert not killed["memory_ok"] and not killed["time_ok"]
    assert report.growth_exponent(
        {"rows": 100, "w": 1.0}, {"rows": 10_000, "w": 100.0}, "w"
    ) == pytest.approx(1.0)
    assert report.growth_exponent(
        {"rows": 100, "w": 1.0}, {"rows": 10_000, "w": 10_000.0}, "w"
    ) == pytest.approx(2.0)


def test_sizes_are_parsed_and_sorted(harness) -> None:
    assert harness.run.parse_sizes("100000:10000,10000:1000") == [(10_000, 1_000), (100_000, 10_000)]
    with pytest.raises(Exception, match="ENTITIES:PAGES"):
        harness.run.parse_sizes("10000")


def test_the_exchange_benchmark_reads_the_exchanges_log_line_and_the_servers_requests(
    tmp_path: Path, caplog
) -> None:
    """``exchange_run.py`` reads what a step moved from the exchange's own log line (before checkpoints the
    line ends after the URL) and counts S3 requests in moto's access log."""
    from index.state_exchange import StateExchange
    from ingest.object_store import RemoteRoot

    bench = load_script(SCALE / "exchange_run.py")
    exchange = StateExchange(tmp_path / "a", RemoteRoot.open(f"file://{tmp_path / 'store'}"), ("ingest",))
    with caplog.at_level("INFO", "index.state_exchange"), exchange.step("write", ("ingest",)):
        (tmp_path / "a" / "ingest").mkdir()
        (tmp_path / "a" / "ingest" / "one.parquet").write_bytes(b"12345")
    (tmp_path / "after.log").write_text(caplog.text)
    line = bench.exchange_line(tmp_path / "after.log")
    assert (line["pushed_files"], line["pushed_bytes"], line["listed"], line["read"]) == (1, 5, 0, 0)
    assert line["checkpoint_read"] is None and line["listings"] >= 1
    before = (
        "ingest: pulled 2 files (30 bytes, 1 removed), pushed 0 files (0 bytes, 0 removed) through s3://b/p"
    )
    (tmp_path / "before.log").write_text(f"2026-11-28 INFO {before}\n")
    assert bench.exchange_line(tmp_path / "before.log")["pulled_bytes"] == 30
    assert bench.estimated_listed(2500, 6) == 2 * 2500  # 3 requests a listing: two listings
    access = (
        '127.0.0.1 - - [28/Nov/2026 02:35:02] "GET /b?delimiter=/&list-type=2&max-keys=1000&prefix=p/log/ '
        'HTTP/1.1" 200 -\n127.0.0.1 - - [28/Nov/2026 02:35:02] "\x1b[35m\x1b[1mGET /b/p/log/000/00/x.json '
        'HTTP/1.1\x1b[0m" 206 -\n'
        '127.0.0.1 - - [28/Nov/2026 02:35:02] "PUT /b/p/blobs/ab/abc HTTP/1.1" 200 -\n'
    )
    counts = bench.s3_requests(access)
    assert (counts["requests"], counts["list_log"], counts["get_log"], counts["list_checkpoints"]) == (
        3,
        1,
        1,
        0,
    )
