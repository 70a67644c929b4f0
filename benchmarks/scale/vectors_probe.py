"""Re-run only the vectors stage of a finished scale run, on a copy of its state, and profile its memory.

    PYTHONPATH=. python benchmarks/scale/vectors_probe.py RUN_STATE SCRATCH [--warm] [--out RESULT.json]
        [--memory-mb N] [--compare]

``RUN_STATE`` is a state folder ``benchmarks/scale/run.py`` left (``/work/scale/runs/e…``): its published
version's evidence, the duplicates list and the run marker are copied into ``SCRATCH`` (which must not
exist) as the build folder the stage step expects, and the stage runs as the scale run ran it
(``scale_step.py stage`` with the step's own ``ARGS.json``, measured by ``scale_measure.run_measured``).
The embedding cache starts empty (cold: every row is embedded, as in the measured run) unless ``--warm``
copies the run's cache. ``--memory-mb`` overrides the build's budget: the plan's ``memory_mb`` and
``HQA_INDEX__MEMORY_MB`` (which caps the ANN training sample at a quarter of it).

Besides the peak of ``run_measured``, the child's RSS is sampled every 0.1 s with its log lines' times,
so each phase of the stage (counting, embedding, the LanceDB write, the ANN index) gets its own peak.
``--compare`` then checks the new vector table against the run's own: same ids in the same order,
same vectors (bit for bit), read batch by batch. ``SCRATCH`` is left for inspection; remove it after.
"""

from __future__ import annotations

import argparse
import itertools
import json
import os
import re
import shutil
import sys
import threading
import time
from datetime import datetime
from pathlib import Path

import psutil

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(HERE))
sys.path.insert(0, str(REPO))

from scale_measure import run_measured  # noqa: E402

MARKS = [  # (phase that starts at this log line, pattern)
    ("embed", re.compile(r"embedded \d+/\d+ new evidence texts")),
    ("write", re.compile(r"embedded \d+ evidence ids, reused")),
    ("write", re.compile(r"writing the vector table")),
    ("ann_index", re.compile(r"building IVF")),
    ("done", re.compile(r"vector index built")),
]


def prepare(run_state: Path, scratch: Path, warm: bool, memory_mb: int | None) -> Path:
    """The scratch state and the stage's args file; returns the args path."""
    steps = json.loads((run_state / "scale-steps.json").read_text())
    if "stage:vectors" not in steps:
        raise SystemExit(f"{run_state} has no vectors step record")
    args = json.loads((run_state / "scale-steps" / "stage-vectors.args.json").read_text())
    if memory_mb is not None:
        args["plan"]["memory_mb"] = memory_mb
    version = args["plan"]["version"]
    published = run_state / "indexes" / version
    building = scratch / "indexes" / f".building-{version}"
    building.mkdir(parents=True)
    shutil.copytree(run_state / ".runs", scratch / ".runs")
    shutil.copytree(published / "evidence", building / "evidence")
    shutil.copy2(published / "evidence_duplicates.parquet", building / "evidence_duplicates.parquet")
    if warm:
        shutil.copytree(run_state / "embeddings", scratch / "embeddings")
    (scratch / "embeddings").mkdir(exist_ok=True)
    path = scratch / "stage-vectors.args.json"
    path.write_text(json.dumps(args))
    return path


def sample(pid: int, out: list[tuple[float, float]], stop: threading.Event) -> None:
    """(time, RSS MB of the process tree) every 0.1 s until ``stop``."""
    try:
        root = psutil.Process(pid)
    except psutil.NoSuchProcess:
        return
    while not stop.is_set():
        total = 0
        try:
            for p in [root, *root.children(recursive=True)]:
                try:
                    total += p.memory_info().rss
                except psutil.NoSuchProcess:
                    continue
        except psutil.NoSuchProcess:
            return
        out.append((time.time(), total / 2**20))
        time.sleep(0.1)


def phases(log_text: str, samples: list[tuple[float, float]], started: float) -> list[dict]:
    """Each phase's start (s after the process start) and its peak RSS, from the log lines' times."""
    marks: list[tuple[str, float]] = [("start", started)]
    for line in log_text.splitlines():
        stamp = re.match(r"(\d{4}-\d\d-\d\d \d\d:\d\d:\d\d,\d{3}) ", line)
        if not stamp:
            continue
        for name, pattern in MARKS:
            if pattern.search(line) and marks[-1][0] != name:
                when = datetime.strptime(stamp.group(1), "%Y-%m-%d %H:%M:%S,%f").timestamp()
                marks.append((name, when))
                break
    marks.append(("end", float("inf")))
    out = []
    for (name, begin), (_, end) in itertools.pairwise(marks):
        inside = [rss for t, rss in samples if begin <= t < end]
        out.append(
            {
                "phase": name,
                "from_s": round(begin - started, 1),
                "peak_rss_mb": round(max(inside), 1) if inside else None,
                "rss_at_start_mb": round(inside[0], 1) if inside else None,
            }
        )
    return out


def timeline(samples: list[tuple[float, float]], started: float, step: float = 2.0) -> list[list[float]]:
    """[seconds after the start, the largest RSS MB in that ``step``] for a plot or a look by eye."""
    out: dict[int, float] = {}
    for t, rss in samples:
        slot = int((t - started) // step)
        out[slot] = max(out.get(slot, 0.0), rss)
    return [[slot * step, round(rss)] for slot, rss in sorted(out.items())]


def compare(run_vectors: Path, new_vectors: Path) -> dict:
    """Same ids, order and vectors in the two LanceDB tables (read batch by batch)."""
    import lancedb
    import numpy as np

    old = lancedb.connect(run_vectors).open_table("evidence")
    new = lancedb.connect(new_vectors).open_table("evidence")
    cols = ["evidence_id", "source_type", "page_title", "vector"]
    rows, differ = 0, 0
    old_batches = old.search().select(cols).limit(None).to_batches(50_000)
    new_batches = new.search().select(cols).limit(None).to_batches(50_000)
    pending_old, pending_new = None, None
    # re-chunk both streams to common lengths
    it_old, it_new = iter(old_batches), iter(new_batches)
    while True:
        if pending_old is None or pending_old.num_rows == 0:
            pending_old = next(it_old, None)
        if pending_new is None or pending_new.num_rows == 0:
            pending_new = next(it_new, None)
        if pending_old is None or pending_new is None:
            break
        n = min(pending_old.num_rows, pending_new.num_rows)
        a, b = pending_old.slice(0, n), pending_new.slice(0, n)
        pending_old, pending_new = pending_old.slice(n), pending_new.slice(n)
        for c in cols[:3]:
            if not a.column(c).equals(b.column(c)):
                differ += 1
        va = a.column("vector").flatten().to_numpy().reshape(n, -1)
        vb = b.column("vector").flatten().to_numpy().reshape(n, -1)
        differ += int(not np.array_equal(va, vb))
        rows += n
    left = (pending_old is not None and pending_old.num_rows) or next(it_old, None) is not None
    right = (pending_new is not None and pending_new.num_rows) or next(it_new, None) is not None
    return {
        "rows_compared": rows,
        "rows_old": old.count_rows(),
        "rows_new": new.count_rows(),
        "differing_chunks": differ,
        "identical": differ == 0 and not left and not right and old.count_rows() == new.count_rows(),
    }


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("run_state", type=Path)
    parser.add_argument("scratch", type=Path)
    parser.add_argument("--warm", action="store_true", help="copy the run's embedding cache")
    parser.add_argument("--memory-mb", type=int, default=None, help="the plan's memory_mb instead of its own")
    parser.add_argument("--compare", action="store_true", help="check the vectors against the run's own")
    parser.add_argument("--out", type=Path, default=None, help="the result as JSON (default: print)")
    parser.add_argument("--model", default="wordllama-l2-256")
    opts = parser.parse_args()
    if opts.scratch.exists():
        raise SystemExit(f"{opts.scratch} exists: give a new scratch folder")
    args_path = prepare(opts.run_state, opts.scratch, opts.warm, opts.memory_mb)
    env = {
        **os.environ,
        "PYTHONPATH": str(REPO),
        "HQA_STATE_DIR": str(opts.scratch),
        "HQA_INDEX__EMBEDDING_MODEL": opts.model,
        "HQA_PROGRESS": "0",
    }
    if opts.memory_mb is not None:
        env["HQA_INDEX__MEMORY_MB"] = str(opts.memory_mb)
    result_path, log_path = opts.scratch / "stage-vectors.result.json", opts.scratch / "stage-vectors.log"
    cmd = [sys.executable, str(HERE / "scale_step.py"), "stage", str(args_path), str(result_path)]
    load_before = os.getloadavg()
    samples: list[tuple[float, float]] = []
    stop = threading.Event()
    started = time.time()
    # run_measured starts the child; the sampler follows it from here

    def follow() -> None:
        me = psutil.Process()
        while not stop.is_set():
            kids = [k for k in me.children() if "scale_step.py" in " ".join(k.cmdline())]
            if kids:
                sample(kids[0].pid, samples, stop)
                return
            time.sleep(0.02)

    thread = threading.Thread(target=follow, daemon=True)
    thread.start()
    measured = run_measured(cmd, env, log_path)
    stop.set()
    thread.join()
    log_text = log_path.read_text()
    record: dict = {
        "command": " ".join(sys.argv),
        "step_command": " ".join(cmd),
        "run_state": str(opts.run_state),
        "warm_cache": opts.warm,
        "memory_mb": json.loads(args_path.read_text())["plan"]["memory_mb"],
        "load_before": [round(x, 2) for x in load_before],
        "measured": measured.model_dump(),
        "phases": phases(log_text, samples, started),
        "timeline": timeline(samples, started),
    }
    if result_path.is_file():
        result = json.loads(result_path.read_text())
        record["work_seconds"] = result["work_seconds"]
        record["rows"] = result["result"]["counts"]
        record["fingerprint"] = result["result"]["fingerprint"]
    if opts.compare and measured.status == "ok":
        version = json.loads(args_path.read_text())["plan"]["version"]
        record["compare"] = compare(
            opts.run_state / "indexes" / version / "vectors",
            opts.scratch / "indexes" / f".building-{version}" / "vectors",
        )
    text = json.dumps(record, indent=1)
    if opts.out:
        opts.out.write_text(text)
    print(text)
    return 0 if measured.status == "ok" else 1


if __name__ == "__main__":
    sys.exit(main())
