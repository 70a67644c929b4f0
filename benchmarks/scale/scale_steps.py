"""The rebuild of one corpus as separate measured processes, resumable from its saved step records.

Steps run in the DAG's order (``dags/hqa_index_rebuild.py``), one after another so each is measured
alone: discover → ingest (one per shard job) → plan → verbalize (one per ingest file) → evidence →
entities, bm25, vectors, graph (after entities), statements, tables → validate → publish. Each step's
record (status, measurements, JSON result) is saved as soon as it ends; a re-run skips the steps
that succeeded and, unless asked to retry, those that failed or were killed, so a long run that is
stopped picks up where it was. A step whose inputs failed is recorded as skipped.
"""

from __future__ import annotations

import json
import logging
import subprocess
import sys
import time
from pathlib import Path
from typing import Any

from pydantic import BaseModel
from scale_measure import Measured, run_measured

log = logging.getLogger("scale")
HERE = Path(__file__).resolve().parent
STEP_SCRIPT = HERE / "scale_step.py"
INDEX_STAGES = ("entities", "bm25", "vectors", "graph", "statements", "tables")
RUN_AFTER = "2026-01-01T00:00:00+00:00"  # names the version, as the DAG run's time does


def uptime() -> str:
    return subprocess.run(["uptime"], capture_output=True, text=True, check=False).stdout.strip()


class StepRecord(BaseModel):
    key: str
    step: str
    status: str  # ok | failed | killed_memory | killed_time | skipped
    reason: str | None = None
    measured: Measured | None = None
    import_seconds: float | None = None
    work_seconds: float | None = None
    work_cpu_seconds: float | None = None
    result: Any = None

    @property
    def ok(self) -> bool:
        return self.status == "ok"


class Caps(BaseModel):
    max_rss_mb: float | None
    deadline: float | None  # time.monotonic() instant
    retry_failed: bool = False


class SizeRun:
    """The step records of one corpus's rebuild, kept in ``state_dir/scale-steps.json``.

    ``step_script`` runs each step (another checkout's, to measure its code with the same harness)."""

    def __init__(
        self, state_dir: Path, env: dict[str, str], caps: Caps, step_script: Path = STEP_SCRIPT
    ) -> None:
        self.state_dir, self.env, self.caps, self.step_script = state_dir, env, caps, step_script
        self.steps_dir = state_dir / "scale-steps"
        self.steps_dir.mkdir(parents=True, exist_ok=True)
        self.path = state_dir / "scale-steps.json"
        saved = json.loads(self.path.read_text()) if self.path.is_file() else {}
        self.records = {k: StepRecord.model_validate(v) for k, v in saved.items()}
        self.load_path = state_dir / "scale-load.json"
        self.load: dict[str, str] = json.loads(self.load_path.read_text()) if self.load_path.is_file() else {}

    def _note_load(self, when: str) -> None:
        """``uptime`` when the first step ran and when the last one ended, kept across re-runs."""
        if when == "start" and "start" in self.load:
            return
        self.load[when] = uptime()
        self.load_path.write_text(json.dumps(self.load))

    def _save(self) -> None:
        partial = self.path.with_suffix(".partial")
        partial.write_text(json.dumps({k: r.model_dump(mode="json") for k, r in self.records.items()}))
        partial.replace(self.path)

    def step(self, key: str, step: str, args: dict[str, Any], needs: list[StepRecord]) -> StepRecord:
        """Run one step in a fresh process unless its record says it is done."""
        earlier = self.records.get(key)
        if earlier is not None and (
            earlier.ok or (earlier.status != "skipped" and not self.caps.retry_failed)
        ):
            return earlier
        failed = [n.key for n in needs if not n.ok]
        if failed:
            record = StepRecord(key=key, step=step, status="skipped", reason=f"needs {', '.join(failed)}")
        else:
            log.info("%s: running", key)
            self._note_load("start")
            record = self._run(key, step, args)
            self._note_load("end")
        m = record.measured
        log.info(
            "%s: %s%s",
            key,
            record.status,
            f" in {m.seconds:.1f} s, peak {m.peak_rss_mb:,.0f} MB" if m else "",
        )
        self.records[key] = record
        self._save()
        return record

    def log_path(self, key: str) -> Path:
        """Where the output of the step ``key`` goes (appended, run after run)."""
        return self.steps_dir / f"{_file_name(key)}.log"

    def _run(self, key: str, step: str, args: dict[str, Any]) -> StepRecord:
        name = _file_name(key)
        args_path, result_path = self.steps_dir / f"{name}.args.json", self.steps_dir / f"{name}.result.json"
        args_path.write_text(json.dumps(args))
        result_path.unlink(missing_ok=True)
        if self.caps.deadline is not None and time.monotonic() > self.caps.deadline:
            return StepRecord(key=key, step=step, status="skipped", reason="the size's time budget was spent")
        cmd = [sys.executable, str(self.step_script), step, str(args_path), str(result_path)]
        measured = run_measured(
            cmd,
            self.env,
            self.log_path(key),
            max_rss_mb=self.caps.max_rss_mb,
            deadline=self.caps.deadline,
        )
        record = StepRecord(key=key, step=step, status=measured.status, measured=measured)
        if measured.status == "ok":
            saved = json.loads(result_path.read_text())
            record.result = saved["result"]
            record.import_seconds = saved["import_seconds"]
            record.work_seconds = saved["work_seconds"]
            # the tree's CPU after the imports: parser workers of a fork server are seen only from outside
            record.work_cpu_seconds = round(
                max(saved["work_cpu_seconds"], measured.cpu_seconds - saved["cpu_before_work"]), 3
            )
        else:
            record.reason = f"see {self.log_path(key)}"
        return record


def _file_name(key: str) -> str:
    return key.replace(":", "-").replace("/", "_")


def rebuild(run: SizeRun, params: dict[str, Any]) -> dict[str, StepRecord]:
    """Every step of one rebuild, in the DAG's order; returns the records by key."""
    discover = run.step("discover", "discover", {"params": params}, [])
    ingests = [
        run.step(f"ingest:{i}", "ingest", {"params": params, "job": job}, [discover])
        for i, job in enumerate(discover.result or [])
    ]
    outcomes = [r.result for r in ingests]
    plan_args = {"params": params, "outcomes": outcomes, "run_after": RUN_AFTER}
    plan = run.step("plan", "plan", plan_args, [discover, *ingests])
    verbalize_jobs = plan.result["verbalize"] if plan.ok else []
    files = [
        run.step(
            f"verbalize:{job['output']}",
            "verbalize",
            {"params": params, "plan": plan.result, "job": job},
            [plan],
        )
        for job in verbalize_jobs
    ]
    evidence = run.step(
        "evidence", "evidence", {"plan": plan.result, "files": [f.result for f in files]}, [plan, *files]
    )
    stages: dict[str, StepRecord] = {}
    for name in INDEX_STAGES:
        needs = [evidence, *([stages["entities"]] if name == "graph" else [])]
        args = {"params": params, "plan": plan.result, "name": name}
        stages[name] = run.step(f"stage:{name}", "stage", args, needs)
    validate = run.step(
        "validate", "validate", {"params": params, "plan": plan.result}, list(stages.values())
    )
    reports = [evidence.result, *(s.result for s in stages.values())]
    publish_args = {"params": params, "plan": plan.result, "stages": reports, "validation": validate.result}
    run.step("publish", "publish", publish_args, [validate])
    return run.records
