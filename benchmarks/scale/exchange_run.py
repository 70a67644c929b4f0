"""The rebuild's state exchange measured: every step with and without ``remote.state_url``, before and
after checkpoints, and one step's cost against the length of the change log.

    python benchmarks/scale/exchange_run.py --before-src DIR [--sizes 10000:1000,100000:10000]
        [--history 100,1000,5000] [--work .state/scale-exchange] [--out benchmarks/results/scale]
        [--checkpoint-every 8] [--checkpoint-settle-seconds 0]

``DIR`` holds the code before checkpoints (``git archive <commit> | tar -x -C DIR``); it runs with this
harness, its own ``scale_step.py`` and ``PYTHONPATH=DIR``.

Part 1, per size: the rebuild of ``run.py`` (every step a measured process, ``scale_steps.py``) three
times on one corpus: ``local`` (one state folder, no exchange), then ``before`` (DIR's code) and
``after`` (this checkout's, checkpoints every ``--checkpoint-every`` records and settle
``--checkpoint-settle-seconds``: the steps run one at a time on one host, so no record is in flight and
these small values fold within one rebuild). The exchanged variants run each step on one of two worker
scratches in turn, sharing only a state URL on moto's S3 server, started for the variant on 127.0.0.1
and stopped by its pid (moto holds objects in memory). Per step: the exchange's line (bytes pulled and
pushed; after: the log's listings, records listed, read and downloaded, checkpoints) and the S3
requests it made, counted in the server's access log.

Part 2, per history length N: N change records of earlier steps (three files each, 2 s apart, the last
ten minutes ago: DIR's flat layout for ``before``, the bucketed one for ``after``) are written straight
into a fresh prefix, then three bare exchange steps (``exchange_step.py``) run with the default
checkpoint settings: on a cold scratch, on a second cold scratch, and on the second again (warm).

Writes ``OUT/exchange.json`` and ``OUT/exchange.md`` (``exchange_report.py``) after each part.
"""

from __future__ import annotations

import argparse
import hashlib
import json
import logging
import math
import os
import re
import shlex
import shutil
import subprocess
import sys
import time
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any
from urllib.parse import parse_qs, unquote, urlparse

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path[:0] = [str(HERE), str(REPO)]

import pyarrow.fs as pafs  # noqa: E402
from exchange_report import render_markdown  # noqa: E402
from run import corpus, parse_sizes, step_env  # noqa: E402
from scale_measure import run_measured  # noqa: E402
from scale_steps import Caps, SizeRun, StepRecord, rebuild  # noqa: E402
from synth import CorpusSpec  # noqa: E402

from index.state_listing import ChangeRecord, StateEntry, record_key  # noqa: E402
from query.evaluation.machine import machine  # noqa: E402
from tests import object_store_server  # noqa: E402

log = logging.getLogger("exchange")
BUCKET = "hqa-bench"
EXCHANGE_LINE = re.compile(
    r": pulled (\d+) files \((\d+) bytes, (\d+) removed\), pushed (\d+) files \((\d+) bytes, (\d+) removed\) "
    r"through \S+?(?:; log: (\d+) listings, (\d+) records listed, (\d+) read, (\d+) downloaded \((\d+) bytes "
    r"with checkpoints\), checkpoint read (\S+), written (\S+))?$"
)
LINE_FIELDS = [
    *("pulled_files", "pulled_bytes", "pulled_removed", "pushed_files", "pushed_bytes", "pushed_removed"),
    *("listings", "listed", "read", "fetched", "fetched_bytes", "checkpoint_read", "checkpoint_written"),
]
REQUEST = re.compile(r'"(?:\x1b\[[\d;]*m)*(GET|PUT|HEAD|POST|DELETE) (\S+) HTTP')  # moto colours some


class Store:
    """moto's S3 server for one variant, its bucket, and what its access log says about requests."""

    def __init__(self, root: Path) -> None:
        self.root = root
        self.server = object_store_server.start(root)
        self.endpoint = self.server.url
        self.fs = pafs.S3FileSystem(
            endpoint_override=self.endpoint.removeprefix("http://"),
            scheme="http",
            region="us-east-1",
            allow_bucket_creation=True,
        )
        self.fs.create_dir(BUCKET)

    def stop(self) -> None:
        object_store_server.stop(self.root)

    def url(self, prefix: str) -> str:
        return f"s3://{BUCKET}/{prefix}"

    def env(self, prefix: str) -> dict[str, str]:
        return {
            **object_store_server.CREDENTIALS,
            "HQA_REMOTE__STATE_URL": self.url(prefix),
            "HQA_REMOTE__ENDPOINT": self.endpoint,
        }

    def records(self, prefix: str) -> int:
        """Change records under ``prefix``, listed straight from the bucket."""
        selector = pafs.FileSelector(f"{BUCKET}/{prefix}/log", recursive=True, allow_not_found=True)
        return sum(i.type == pafs.FileType.File for i in self.fs.get_file_info(selector))

    def offset(self) -> int:
        return Path(self.server.log).stat().st_size

    def requests_since(self, offset: int) -> dict[str, int]:
        with open(self.server.log, "rb") as f:
            f.seek(offset)
            return s3_requests(f.read().decode(errors="replace"))


def s3_requests(access_log: str) -> dict[str, int]:
    """Requests in a part of moto's access log: all, and the LISTs and GETs under log/ and checkpoints/."""
    counts = dict.fromkeys(("requests", "list_log", "get_log", "list_checkpoints", "get_checkpoints"), 0)
    for m in REQUEST.finditer(access_log):
        counts["requests"] += 1
        url = urlparse(m[2])
        listing = "list-type" in url.query
        key = parse_qs(url.query).get("prefix", [""])[0] if listing else unquote(url.path)
        for folder in ("log", "checkpoints"):
            if m[1] == "GET" and f"/{folder}/" in f"/{key}":
                counts[f"{'list' if listing else 'get'}_{folder}"] += 1
    return counts


def exchange_line(log_path: Path) -> dict[str, Any] | None:
    """The last exchange line of a step's output, as numbers (None where the code logs no such field)."""
    found = None
    for line in log_path.read_text(errors="replace").splitlines():
        if m := EXCHANGE_LINE.search(line):
            found = m
    if found is None:
        return None
    values = [None if v in (None, "None") else v for v in found.groups()]
    return {
        k: (int(v) if v is not None and v.isdigit() else v) for k, v in zip(LINE_FIELDS, values, strict=True)
    }


def estimated_listed(records: int, list_requests: int) -> int:
    """Records a step of the code before checkpoints listed: it lists the whole log on every read of the
    state, in requests of up to 1,000 names."""
    return records * (list_requests // max(1, math.ceil(records / 1000)))


class TwoWorkers(SizeRun):
    """A rebuild whose steps alternate between two worker scratches that share only a state URL; beside
    each step's measurement, its exchange line and the S3 requests it made."""

    def __init__(self, folder: Path, envs: list[dict[str, str]], caps: Caps, script: Path, store: Store):
        super().__init__(folder, envs[0], caps, script)
        self.envs, self.store, self.prefix, self.turn = envs, store, folder.name, 0
        self.exchange: dict[str, dict[str, Any]] = {}

    def step(self, key: str, step: str, args: dict[str, Any], needs: list[StepRecord]) -> StepRecord:
        worker = self.turn % len(self.envs)
        self.env, self.turn = self.envs[worker], self.turn + 1
        records, offset = self.store.records(self.prefix), self.store.offset()
        record = super().step(key, step, args, needs)
        s3 = self.store.requests_since(offset)
        line = exchange_line(self.log_path(key))
        if line is not None and line["listed"] is None:
            line["listed"] = estimated_listed(records, s3["list_log"])
        self.exchange[key] = {"worker": "ab"[worker], "records_at_start": records, "s3": s3, "line": line}
        return record


def step_entries(run: SizeRun, exchange: dict[str, dict[str, Any]]) -> list[dict[str, Any]]:
    out = []
    for key, record in run.records.items():
        m = record.measured
        entry = {"key": key, "status": record.status, "work_seconds": record.work_seconds}
        if m is not None:
            entry |= {"seconds": m.seconds, "peak_rss_mb": m.peak_rss_mb}
        out.append(entry | exchange.get(key, {}))
    return out


def rebuild_variant(args: argparse.Namespace, spec: CorpusSpec, variant: str) -> dict[str, Any]:
    corpus_dir, manifest, _ = corpus(args, spec)
    files = {n: str(corpus_dir / n) for n in manifest.files}
    params = {"wikidata": [files[spec.file_names()[0]]], "wikipedia": [files[spec.file_names()[1]]]}
    params["force"] = True
    folder = args.work / "runs" / f"{corpus_dir.name}-{variant}"
    shutil.rmtree(folder, ignore_errors=True)  # a fresh store every time: moto starts empty
    caps = Caps(max_rss_mb=args.max_rss_gb * 1024, deadline=time.monotonic() + args.max_minutes * 60)
    if variant == "local":
        run = SizeRun(folder, step_env(folder / "state", args.embedding_model), caps)
        started = time.perf_counter()
        rebuild(run, params)
        return {"wall_seconds": round(time.perf_counter() - started, 1), "steps": step_entries(run, {})}
    src = args.before_src if variant == "before" else REPO
    store = Store(args.work / "s3" / variant)
    try:
        envs = []
        for worker in ("worker-a", "worker-b"):
            env = step_env(folder / worker / "state", args.embedding_model) | store.env(folder.name)
            env["PYTHONPATH"] = str(src)
            if variant == "after":
                env["HQA_REMOTE__CHECKPOINT_EVERY"] = str(args.checkpoint_every)
                env["HQA_REMOTE__CHECKPOINT_SETTLE_SECONDS"] = str(args.checkpoint_settle_seconds)
            envs.append(env)
        run = TwoWorkers(folder, envs, caps, src / "benchmarks" / "scale" / "scale_step.py", store)
        started = time.perf_counter()
        rebuild(run, params)
        wall = round(time.perf_counter() - started, 1)
        return {"wall_seconds": wall, "steps": step_entries(run, run.exchange), "store": store_size(store)}
    finally:
        store.stop()


def store_size(store: Store) -> dict[str, dict[str, int]]:
    """Objects and bytes under each top folder of the state (blobs, log, …) at the end."""
    sizes: dict[str, dict[str, int]] = {}
    for info in store.fs.get_file_info(pafs.FileSelector(BUCKET, recursive=True)):
        if info.type == pafs.FileType.File:
            top = sizes.setdefault(info.path.split("/")[2], {"objects": 0, "bytes": 0})
            top["objects"] += 1
            top["bytes"] += info.size
    return sizes


# --- part 2: one step against the log's length -----------------------------------------------------------


def write_history(store: Store, prefix: str, count: int, flat: bool) -> None:
    """``count`` records of earlier steps, three new files each (their blobs uploaded), 2 s apart."""
    base = f"{BUCKET}/{prefix}"
    end = time.time_ns() - 600 * 10**9

    def put(key: str, data: bytes) -> None:
        with store.fs.open_output_stream(f"{base}/{key}") as out:
            out.write(data)

    def one(i: int) -> None:
        changes: dict[str, StateEntry | None] = {}
        for part in ("entities", "statements", "summary"):
            data = f"history {i} {part}".encode()
            sha = hashlib.sha256(data).hexdigest()
            put(f"blobs/{sha[:2]}/{sha}", data)
            path = f"ingest/history/shard-{i:06d}/{part}.parquet"
            changes[path] = StateEntry(kind="file", size=len(data), sha256=sha, mtime_ns=end)
        stamp = end - (count - 1 - i) * 2 * 10**9
        name = f"{stamp:020d}-history-1-{i:08x}.json"
        record = ChangeRecord(step=f"ingest {i}", host="history", written=stamp / 1e9, changes=changes)
        put(f"log/{name}" if flat else record_key(name), record.model_dump_json(exclude_none=True).encode())

    with ThreadPoolExecutor(8) as pool:
        list(pool.map(one, range(count)))


def probe(args: argparse.Namespace, count: int, variant: str) -> list[dict[str, Any]]:
    src = args.before_src if variant == "before" else REPO
    folder = args.work / "probe" / f"{variant}-{count}"
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    store = Store(args.work / "s3" / f"probe-{variant}")
    prefix = f"probe-{count}"
    try:
        started = time.perf_counter()
        write_history(store, prefix, count, flat=variant == "before")
        log.info("%s, %d records: history written in %.1f s", variant, count, time.perf_counter() - started)
        out = []
        for i, (worker, scratch) in enumerate((("a", "cold"), ("b", "cold"), ("b", "warm"))):
            env = {**os.environ, **store.env(prefix), "PYTHONPATH": str(src), "HQA_PROGRESS": "0"}
            env["HQA_STATE_DIR"] = str(folder / worker)
            records, offset = store.records(prefix), store.offset()
            output = folder / f"step-{i}.log"
            measured = run_measured([sys.executable, str(HERE / "exchange_step.py"), f"s{i}"], env, output)
            s3 = store.requests_since(offset)
            line = exchange_line(output)
            if line is not None and line["listed"] is None:
                line["listed"] = estimated_listed(records, s3["list_log"])
            text = output.read_text().splitlines()
            work = json.loads(text[-1])["seconds"] if measured.status == "ok" else None
            entry = {
                "worker": worker,
                "scratch": scratch,
                "records_at_start": records,
                "status": measured.status,
            }
            entry |= {"seconds": measured.seconds, "work_seconds": work, "peak_rss_mb": measured.peak_rss_mb}
            out.append(entry | {"s3": s3, "line": line})
        return out
    finally:
        store.stop()


def parse_args(argv: list[str] | None) -> argparse.Namespace:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--before-src", type=Path, required=True, help="a checkout of the code before")
    parser.add_argument("--sizes", type=parse_sizes, default=parse_sizes("10000:1000,100000:10000"))
    parser.add_argument("--history", default="100,1000,5000", help="change-log lengths of part 2, or ''")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--work", type=Path, default=REPO / ".state" / "scale-exchange")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "scale")
    parser.add_argument("--embedding-model", default="wordllama-l2-256")
    parser.add_argument("--checkpoint-every", type=int, default=8)
    parser.add_argument("--checkpoint-settle-seconds", type=float, default=0.0)
    parser.add_argument("--max-rss-gb", type=float, default=12.0)
    parser.add_argument(
        "--max-minutes", type=float, default=30.0, help="time budget of one variant's rebuild"
    )
    parser.add_argument("--gen-workers", type=int, default=2)
    return parser.parse_args(argv)


def main(argv: list[str] | None = None) -> int:
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(message)s")
    args = parse_args(argv)
    args.work, args.before_src = args.work.resolve(), args.before_src.resolve()
    if not (args.before_src / "index" / "state_exchange.py").is_file():
        raise SystemExit(f"--before-src {args.before_src} holds no index/state_exchange.py: not a checkout")
    os.environ.update(object_store_server.CREDENTIALS)  # for this process's own S3 client
    for name in [n for n in os.environ if n.startswith("HQA_REMOTE__") or n == "HQA_EMBEDDING_CACHE"]:
        del os.environ[name]  # the cache lives in the state (exchanged); the store is the variant's
    result: dict[str, Any] = {
        "command": shlex.join(
            ["benchmarks/scale/exchange_run.py", *(sys.argv[1:] if argv is None else argv)]
        ),
        "machine": machine(),
        "embedding_model": args.embedding_model,
        "code": {"before": str(args.before_src), "after": _commit()},
        "after_settings": {
            "rebuild": {"every": args.checkpoint_every, "settle_seconds": args.checkpoint_settle_seconds},
            "history": "the defaults",
        },
        "sizes": [],
        "history": [],
    }
    for entities, pages in args.sizes:
        spec = CorpusSpec(entities=entities, pages=pages, seed=args.seed)
        size = {"entities": entities, "pages": pages, "load_before": os.getloadavg()[0], "variants": {}}
        result["sizes"].append(size)
        for variant in ("local", "before", "after"):
            log.info("%d entities, %s", entities, variant)
            size["variants"][variant] = rebuild_variant(args, spec, variant)
            write_results(args.out, result)
    for count in [int(c) for c in args.history.split(",") if c.strip()]:
        entry = {"records": count, "variants": {v: probe(args, count, v) for v in ("before", "after")}}
        result["history"].append(entry)
        write_results(args.out, result)
    return 0


def _commit() -> str:
    head = subprocess.run(["git", "rev-parse", "--short", "HEAD"], cwd=REPO, capture_output=True, text=True)
    return head.stdout.strip() or "unknown"


def write_results(out: Path, result: dict[str, Any]) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "exchange.json").write_text(json.dumps(result, indent=2) + "\n")
    (out / "exchange.md").write_text(render_markdown(result) + "\n")


if __name__ == "__main__":
    sys.exit(main())
