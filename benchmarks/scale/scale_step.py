"""One step of the index rebuild in a process of its own, as an Airflow task runs it.

    python benchmarks/scale/scale_step.py STEP ARGS.json RESULT.json

``ARGS.json`` holds the step's JSON arguments (those the DAG passes through XCom); the step's
return value goes to ``RESULT.json`` with the seconds and CPU seconds of the call alone, apart from
the interpreter's start and the imports, so a small corpus is not charged a fixed start-up per row.
Settings come from the environment (``HQA_STATE_DIR``, ``HQA_INDEX__EMBEDDING_MODEL``, …), as on a
worker. The steps are ``index.rebuild``'s: discover, ingest, plan, verbalize, evidence, stage,
validate, publish.
"""

from __future__ import annotations

import json
import logging
import resource
import sys
import time
from datetime import datetime
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))


def _cpu() -> float:
    own, children = resource.getrusage(resource.RUSAGE_SELF), resource.getrusage(resource.RUSAGE_CHILDREN)
    return own.ru_utime + own.ru_stime + children.ru_utime + children.ru_stime


def call(step: str, args: dict[str, Any]) -> Any:
    from index import rebuild

    params = args.get("params", {})
    if step == "discover":
        return rebuild.discover(params)
    if step == "ingest":
        return rebuild.ingest(params, args["job"])
    if step == "plan":
        return rebuild.plan(params, args["outcomes"], datetime.fromisoformat(args["run_after"]))
    if step == "verbalize":
        return rebuild.verbalize(params, args["plan"], args["job"])
    if step == "evidence":
        return rebuild.evidence(args["plan"], args["files"])
    if step == "stage":
        return rebuild.stage(params, args["plan"], args["name"])
    if step == "validate":
        return rebuild.validate(params, args["plan"])
    if step == "publish":
        return rebuild.publish(params, args["plan"], args["stages"], args["validation"])
    raise ValueError(f"unknown step {step!r}")


def main(argv: list[str]) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    step, args_path, result_path = argv
    started = time.perf_counter()
    import index.rebuild  # noqa: F401  (imports timed apart from the work)

    imported, cpu_before = time.perf_counter(), _cpu()
    result = call(step, json.loads(Path(args_path).read_text()))
    done = time.perf_counter()
    record = {
        "result": result,
        "import_seconds": round(imported - started, 3),
        "work_seconds": round(done - imported, 3),
        "work_cpu_seconds": round(_cpu() - cpu_before, 3),
        "cpu_before_work": round(cpu_before, 3),
    }
    partial = Path(result_path).with_suffix(".partial")
    partial.write_text(json.dumps(record, default=str))
    partial.replace(result_path)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
