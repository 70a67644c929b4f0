"""Load on ``hqa serve``: N clients for a fixed time on 127.0.0.1 while new index versions are published.

    .venv/bin/python benchmarks/serve_load.py [--index .state/indexes] [--clients 6] [--seconds 150]
        [--llm-seconds 240] [--versions 3] [--llm-versions N] [--readers candidates,llm]
        [--llm qwen2.5-coder-0.5b-instruct] [--malloc-arenas N] [--rss-band 10]
        [--publish-with links|dag] [--out benchmarks/results/serve]

For each reader: the sample index's current version is published as the first version of a fresh index
root (hard links, no copy), ``hqa serve`` is started on it (a subprocess, a free port), and ``--clients``
asyncio clients ask the README's questions round and round for the run's seconds. Meanwhile
``--versions`` (``--llm-versions`` for the LLM reader) new versions are published at even intervals (a
re-publish of the same build: hard links, a new manifest, ``current`` moved), each followed by a prune to
2 versions (leases keep what the server still reads); a publish first waits (at most ``SETTLE_S``) for the
server to answer from the version before with no other open, nudging it with one candidate-reader
question if it has not moved yet. With ``--publish-with dag`` the rebuild DAG itself makes every version
instead (``airflow dags test hqa_index_rebuild`` in a state folder of its own, the first run before the
server starts, later runs with ``force``; it keeps 2 versions), as a scheduled rebuild would.
Even-numbered clients send ``"fallback": true``, odd ones do not and
wait ``Retry-After`` on a 429, as a polite client would.

Reported per reader: requests, throughput, p50/p95 latency, 429s, fallbacks, errors (anything else that is
not a 200 or a transport failure: 0 is the bar), the versions answers were tagged with (each answer must
name one), the HTTP overhead against the engine's own total time for the same request (the raw engine in
the same run: a ratio survives a loaded machine better than a figure), and the server's memory over
time: RSS (anonymous and file-backed) every 2 s, right before each publish (the settled figure of the
version answering then), at the end, and whether it is stable — each settled figure after the 3rd publish
on within ``--rss-band`` (percent) of the one after the 2nd, where the first switches' one-off growth
(allocator pools reaching their working size) is over — with the least-squares growth per version over
those figures. With ``--screenshot`` the evidence page is photographed (Playwright on Debian's chromium)
after the first reader's run.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Callable
from pathlib import Path

import httpx
import psutil

REPO = Path(__file__).resolve().parents[1]
sys.path[:0] = [str(REPO), str(REPO / "benchmarks")]  # the repo's packages and benchmarks_common

from benchmarks_common import airflow_env, run_command  # noqa: E402

from index.versions import MANIFEST, READER_STATE, VersionStore  # noqa: E402
from query.evaluation.machine import machine  # noqa: E402
from query.evaluation.metrics import percentile  # noqa: E402

BIN = Path(sys.executable).parent
QUESTIONS = [  # the README's and the demo's questions
    "What is the area of Belgium?",
    "What was the population of Belgium in 2014?",
    "Which city has the most inhabitants?",
    "How many of the Chilean places in the index have more than 100,000 inhabitants?",
    "What was the name of Aristotle's father?",
    "Who was the interior decorator of the film Sunrise in 1927/28?",
    "What is the favourite colour of the invisible dragon Zorblax?",
]
SCREENSHOT_QUESTION = "Which city has the most inhabitants?"
SETTLE_S = 120.0
"""Longest wait, before a publish, for the server to settle on the version published before."""


def publish(root: Path, source: Path, version: str) -> None:
    """``source``'s files as a new published version of ``root``: hard links, its own lease and manifest."""
    store = VersionStore(root)
    building = store.start(version)
    building.rmdir()
    shutil.copytree(
        source, building, copy_function=os.link, ignore=shutil.ignore_patterns(*READER_STATE, MANIFEST)
    )
    store.publish(building, store.manifest(source).model_copy(update={"version": version}))


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Server:
    """``hqa serve`` in a subprocess, stopped by its own pid."""

    def __init__(self, root: Path, reader: str, args: argparse.Namespace, log: Path):
        self.port = free_port()
        self.url = f"http://127.0.0.1:{self.port}"
        cmd = [str(BIN / "hqa"), "--state-dir", str(args.state_dir), "serve", "--index", str(root)]
        cmd += ["--port", str(self.port), "--reader", reader, "--llm-queue", "2", "--deadline", "300"]
        if reader == "llm":
            cmd += ["--llm", args.llm]
        if args.malloc_arenas is not None:
            cmd += ["--malloc-arenas", str(args.malloc_arenas)]
        self.command = cmd
        env = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HQA_PROGRESS": "0"}
        self.log = log.open("w")
        self.process = subprocess.Popen(cmd, env=env, cwd=REPO, stdout=self.log, stderr=subprocess.STDOUT)
        self.ps = psutil.Process(self.process.pid)

    def wait_ready(self, timeout: float = 900) -> float:
        started = time.monotonic()
        while time.monotonic() - started < timeout:
            if self.process.poll() is not None:
                raise RuntimeError(f"hqa serve exited with {self.process.returncode}; see {self.log.name}")
            try:
                if httpx.get(f"{self.url}/readyz", timeout=5).status_code == 200:
                    return time.monotonic() - started
            except httpx.TransportError:
                pass
            time.sleep(1)
        raise RuntimeError(f"hqa serve was not ready in {timeout} s")

    def rss_mb(self) -> float:
        return round(self.ps.memory_info().rss / 2**20, 1)

    def memory(self, started: float) -> dict:
        """RSS now, split as the kernel counts it: anonymous (heaps, arrays) and file-backed (mapped
        index files and models), with the run's clock."""
        status = Path(f"/proc/{self.process.pid}/status").read_text().splitlines()
        fields = dict(line.split(":", 1) for line in status)
        mb = {k: round(int(fields[f"Rss{k.title()}"].split()[0]) / 1024, 1) for k in ("anon", "file")}
        return {"at_s": round(time.monotonic() - started, 1), "rss_mb": round(sum(mb.values()), 1), **mb}

    def settled(self, started: float, version: str, timeout: float = SETTLE_S) -> dict:
        """``memory`` once the server answers from ``version`` with no other version open (a switch
        holds two for a moment; on a loaded machine that moment is long), or after ``timeout`` seconds;
        with the version it answered from then and whether it had settled."""
        waited = time.monotonic()
        while True:
            versions = httpx.get(f"{self.url}/v1/versions", timeout=60).json()
            done = versions["answering"] == version and versions["open"] == [version]
            if done or time.monotonic() - waited > timeout:
                break
            if versions["answering"] != version:  # a question moves it (when the clients have stopped too)
                nudge = {"question": QUESTIONS[0], "reader": "candidates"}  # the fast lane: not a 429 loop
                httpx.post(f"{self.url}/v1/ask", json=nudge, timeout=330)
            time.sleep(1)
        return {
            **self.memory(started),
            "answering": versions["answering"],
            "settled": done,
            "waited_s": round(time.monotonic() - waited, 1),
        }

    def stop(self) -> None:
        self.process.send_signal(signal.SIGINT)
        try:
            self.process.wait(timeout=120)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        self.log.close()


async def client(url: str, number: int, until: float, records: list[dict]) -> None:
    fallback = number % 2 == 0
    async with httpx.AsyncClient(base_url=url, timeout=httpx.Timeout(330)) as http:
        i = number
        while time.monotonic() < until:
            question = QUESTIONS[i % len(QUESTIONS)]
            i += 1
            started = time.monotonic()
            record: dict = {"client": number, "question": question, "fallback_allowed": fallback}
            try:
                response = await http.post("/v1/ask", json={"question": question, "fallback": fallback})
                record["status"] = response.status_code
                body = response.json()
                if response.status_code == 200:
                    total = next((t["ms"] for t in body["timings"] if t["stage"] == "total"), None)
                    record |= {
                        "version": body["index_version"],
                        "mode": body["mode"],
                        "reader": body["reader"],
                        "fallback": body["served"]["fallback"],
                        "queued_ms": body["served"]["queued_ms"],
                        "engine_ms": total,
                    }
                else:
                    record["error"] = body.get("error", {}).get("code")
                    record["retry_after"] = response.headers.get("Retry-After")
            except (httpx.TransportError, ValueError) as exc:
                record |= {"status": None, "error": f"{type(exc).__name__}: {exc}"}
            record["ms"] = round((time.monotonic() - started) * 1000, 1)
            records.append(record)
            if record.get("status") == 429:
                await asyncio.sleep(
                    min(float(record["retry_after"] or 1), max(0.0, until - time.monotonic()))
                )


class LinkPublisher:
    """Versions v1, v2, ... of ``root``: the sample build's files re-published as hard links, each publish
    followed by a prune to 2 versions."""

    def __init__(self, root: Path, source: Path):
        self.root, self.source, self.count = root, source, 0

    def publish(self) -> dict:
        self.count += 1
        name = f"v{self.count}"
        publish(self.root, self.source, name)
        pruned = VersionStore(self.root).prune(keep=2)
        return {"version": name, "pruned": [p.name for p in pruned]}


class DagPublisher:
    """Versions made by the rebuild DAG itself (``airflow dags test hqa_index_rebuild``; the first run
    builds from the samples, later ones with ``force``) in a state folder of its own, keeping 2 versions
    (``HQA_INDEX__KEEP_VERSIONS``; the DAG prunes, leases keep what the server still reads)."""

    def __init__(self, work: Path):
        self.env = airflow_env(work, keep=2)
        self.root = work / "state" / "indexes"
        self.runs = 0
        run_command([str(BIN / "airflow"), "db", "migrate"], self.env, REPO)

    def publish(self) -> dict:
        store = VersionStore(self.root)
        before = {p.name for p in store.versions()} if self.root.exists() else set()
        conf = ["-c", json.dumps({"force": True})] if self.runs else []
        dag = [str(BIN / "airflow"), "dags", "test", "hqa_index_rebuild", *conf]
        seconds = round(run_command(dag, self.env, REPO), 1)
        self.runs += 1
        current = store.current()
        if current is None or current.name in before:
            raise RuntimeError(f"the rebuild DAG ran and published no new version under {self.root}")
        after = {p.name for p in store.versions()}
        return {"version": current.name, "pruned": sorted(before - after), "dag_seconds": seconds}


Publisher = LinkPublisher | DagPublisher


def publisher(
    versions_out: Publisher,
    first: str,
    versions: int,
    seconds: float,
    started: float,
    out: list[dict],
    settled: Callable[[float, str], dict],
) -> None:
    """``versions`` publishes at even intervals of the run; the server's memory is taken right before
    each, once it has settled on the version published before (a publish waits for that, at most
    ``SETTLE_S``): the settled figure of that version."""
    current = first
    for n in range(1, versions + 1):
        time.sleep(max(0.0, started + seconds * n / (versions + 1) - time.monotonic()))
        before = settled(started, current)
        record = versions_out.publish()
        current = record["version"]
        out.append({**record, "at_s": round(time.monotonic() - started, 1), "memory_before": before})


def settled_rss(published: list[dict], end: dict) -> dict[str, float]:
    """Each version's settled RSS: taken right before the next publish (the last version's: at the end),
    named by the version the server answered from then. A version the server had not moved to before the
    next was published (no question came between) has no figure of its own."""
    settled = {p["memory_before"]["answering"]: p["memory_before"]["rss_mb"] for p in published}
    return {**settled, end["answering"]: end["rss_mb"]}


REFERENCE = 2
"""Publishes after which the settled RSS is the reference: the first switches' one-off growth is over."""


def published_before(version: str, order: list[str] | None = None) -> int:
    """How many versions were published after the first when ``version`` came: its place in ``order``
    (the rebuild DAG names its versions by time), else n - 1 of a ``v<n>`` name."""
    if order is not None and version in order:
        return order.index(version)
    return int(version.removeprefix("v")) - 1


def stability(settled: dict[str, float], band_pct: float, order: list[str] | None = None) -> dict:
    """Is RSS stable across versions? Each settled figure after a later publish against the first one after
    ``REFERENCE`` publishes: the largest deviation, whether all are within the band, and the least-squares
    growth per version from the reference on (a leak of a few MB a version shows there before it leaves a
    band)."""
    tail = {v: rss for v, rss in settled.items() if published_before(v, order) >= REFERENCE}
    if len(tail) < 2:
        return {"reference": None, "band_pct": band_pct, "max_deviation_pct": None, "stable": None}
    (reference, reference_mb), *later = tail.items()
    deviations = [100 * (rss - reference_mb) / reference_mb for _, rss in later]
    slope = statistics.linear_regression(
        [published_before(v, order) for v in tail], list(tail.values())
    ).slope
    return {
        "reference": reference,
        "reference_mb": reference_mb,
        "band_pct": band_pct,
        "max_deviation_pct": round(max(deviations, key=abs), 1),
        "stable": all(abs(d) <= band_pct for d in deviations),
        "growth_mb_per_version": round(slope, 1),
    }


def percentile_ms(values: list[float], q: float) -> float | None:
    """The q-th percentile (0-100) of some milliseconds, rounded; None when there are none."""
    return round(percentile(values, q), 1) if values else None


def summary(records: list[dict], seconds: float) -> dict:
    ok = [r for r in records if r["status"] == 200]
    overhead = [r["ms"] - r["queued_ms"] - r["engine_ms"] for r in ok if r.get("engine_ms") is not None]
    ratio = [r["ms"] / r["engine_ms"] for r in ok if r.get("engine_ms")]
    errors = [r for r in records if r["status"] not in (200, 429)]
    return {
        "requests": len(records),
        "answered": len(ok),
        "throughput_per_s": round(len(ok) / seconds, 3),
        "p50_ms": percentile_ms([r["ms"] for r in ok], 50),
        "p95_ms": percentile_ms([r["ms"] for r in ok], 95),
        "status_429": sum(r["status"] == 429 for r in records),
        "fallbacks": sum(bool(r.get("fallback")) for r in ok),
        "errors": len(errors),
        "error_kinds": dict(Counter(str(r.get("error")) for r in errors)),
        "untagged": sum(not r.get("version") for r in ok),
        "answers_by_version": dict(sorted(Counter(r["version"] for r in ok if r.get("version")).items())),
        "modes": dict(Counter(r["mode"] for r in ok)),
        "readers": dict(Counter(r["reader"] for r in ok)),
        "http_overhead_ms_p50": percentile_ms(overhead, 50),
        "latency_over_engine_p50": round(statistics.median(ratio), 3) if ratio else None,
    }


def run(reader: str, args: argparse.Namespace, work: Path, source: Path) -> dict:
    seconds = args.seconds if reader == "candidates" else args.llm_seconds
    versions = args.versions if reader == "candidates" else (args.llm_versions or args.versions)
    versions_out: Publisher = (
        DagPublisher(work / reader) if args.publish_with == "dag" else LinkPublisher(work / reader, source)
    )
    first = versions_out.publish()["version"]
    server = Server(versions_out.root, reader, args, args.out / f"server-{reader}.log")
    try:
        ready_s = server.wait_ready()
        load_before = os.getloadavg()
        records: list[dict] = []
        published: list[dict] = []
        started = time.monotonic()
        timeline = [server.memory(started)]
        pub = threading.Thread(
            target=publisher,
            args=(versions_out, first, versions, seconds, started, published, server.settled),
        )
        pub.start()

        async def clients() -> None:
            async def sample_rss() -> None:
                while time.monotonic() < started + seconds:
                    await asyncio.sleep(2)
                    timeline.append(server.memory(started))

            await asyncio.gather(
                sample_rss(),
                *(client(server.url, n, started + seconds, records) for n in range(args.clients)),
            )

        asyncio.run(clients())
        elapsed = time.monotonic() - started
        pub.join()
        end = server.settled(started, published[-1]["version"] if published else first)
        timeline.append(end)
        versions = httpx.get(f"{server.url}/v1/versions", timeout=30).json()
        metrics = httpx.get(f"{server.url}/metrics", timeout=30).text
        if args.screenshot and reader == args.readers[0]:
            screenshot(server.url, args.out / "page.png")
    finally:
        server.stop()
    (args.out / f"requests-{reader}.jsonl").write_text("".join(json.dumps(r) + "\n" for r in records))
    (args.out / f"metrics-{reader}.txt").write_text(metrics)
    settled = settled_rss(published, end)
    order = [first, *(p["version"] for p in published)]
    return {
        "reader": reader,
        "command": shlex.join(server.command),
        "clients": args.clients,
        "seconds": round(elapsed, 1),
        "ready_s": round(ready_s, 1),
        "load_before": [round(x, 2) for x in load_before],
        "load_after": [round(x, 2) for x in os.getloadavg()],
        "published": published,
        "server_versions": versions,
        "rss_mb": {
            "start": timeline[0]["rss_mb"],
            "end": end["rss_mb"],
            "peak": max(m["rss_mb"] for m in timeline),
        },
        "rss_settled_mb": settled,
        "rss_stability": stability(settled, args.rss_band, order),
        "versions_order": order,
        "published_with": args.publish_with,
        "rss_timeline": timeline,
        **summary(records, elapsed),
    }


def screenshot(url: str, path: Path) -> None:
    from playwright.sync_api import sync_playwright

    chromium = os.environ.get("HQA_CHROMIUM") or shutil.which("chromium")
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, headless=True)
        page = browser.new_page(viewport={"width": 1280, "height": 1000})
        page.goto(url)
        page.fill("#question", SCREENSHOT_QUESTION)
        page.click("#submit")
        page.wait_for_selector("#result:not([hidden])", timeout=300_000)
        page.screenshot(path=str(path), full_page=True)
        browser.close()


def report(results: list[dict], argv: list[str]) -> str:
    """The Markdown report; results of separate runs (put together in one JSON) each name their command."""
    runs = dict.fromkeys(
        shlex.join([".venv/bin/python", "benchmarks/serve_load.py", *r.get("argv", argv)]) for r in results
    )
    lines = [
        "# `hqa serve` under load, while versions are published",
        "",
        *(f"Command: `{command}`  " for command in runs),
        f"Machine: {machine()}",
        "",
        "| reader | clients | s | requests | answered | /s | p50 ms | p95 ms | 429 | fallbacks | errors "
        "| untagged | versions answered from | RSS MB start → end (peak) | latency / engine p50 | load |",
        "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|",
    ]
    for r in results:
        versions = ", ".join(f"{v}: {n}" for v, n in r["answers_by_version"].items())
        rss = r["rss_mb"]
        lines.append(
            f"| {r['reader']} | {r['clients']} | {r['seconds']} | {r['requests']} | {r['answered']} "
            f"| {r['throughput_per_s']} | {r['p50_ms']} | {r['p95_ms']} | {r['status_429']} "
            f"| {r['fallbacks']} "
            f"| {r['errors']} | {r['untagged']} | {versions} | {rss['start']} → {rss['end']} ({rss['peak']}) "
            f"| {r['latency_over_engine_p50']} | {r['load_before'][0]} → {r['load_after'][0]} |"
        )
    for r in results:
        lines += [
            "",
            f"**{r['reader']}**: `{r['command']}`; ready in {r['ready_s']} s; published "
            + "; ".join(
                f"{p['version']} at {p['at_s']} s (pruned {p['pruned'] or 'none'})" for p in r["published"]
            )
            + f"; the server answered from {r['server_versions']['answered_from']}, "
            f"engines open at the end: {r['server_versions'].get('open', 'not reported')}; "
            f"modes {r['modes']}; "
            f"readers {r['readers']}; errors {r['error_kinds'] or 'none'}.",
        ]
    for r in results:
        if "rss_settled_mb" in r:
            lines += memory_report(r)
    return "\n".join(lines) + "\n"


def memory_report(r: dict) -> list[str]:
    """The server's settled RSS per version (taken right before the next publish, the last at the end)
    and the stability verdict."""
    settled = {p["memory_before"]["answering"]: p["memory_before"] for p in r["published"]}
    settled[r["rss_timeline"][-1]["answering"]] = r["rss_timeline"][-1]
    lines = [
        "",
        f"**{r['reader']}, memory**: settled RSS of each version (right before the next publish; the last "
        "at the end), anonymous + file-backed MB:",
        "",
        "| version | publishes so far | RSS MB | anon | file | at s | settled (waited s) |",
        "|---|---|---|---|---|---|---|",
    ]
    order = r.get("versions_order")
    for v, m in settled.items():
        lines.append(
            f"| {v} | {published_before(v, order)} | {m['rss_mb']} | {m['anon']} | {m['file']} | {m['at_s']} "
            f"| {'yes' if m['settled'] else 'NO'} ({m['waited_s']}) |"
        )
    st = r["rss_stability"]
    if st["reference"] is not None:
        lines += [
            "",
            f"{'stable' if st['stable'] else 'NOT stable'}: the largest deviation after a later switch is "
            f"{st['max_deviation_pct']:+} % of {st['reference']}'s {st['reference_mb']} MB (after "
            f"{REFERENCE} publishes; band ±{st['band_pct']} %); least-squares growth from {st['reference']} "
            f"on: {st['growth_mb_per_version']} MB a version. Peak {r['rss_mb']['peak']} MB (sampled every "
            "2 s; a switch holds two versions for a moment).",
        ]
    return lines


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument(
        "--index", type=Path, default=REPO / ".state" / "indexes", help="a built sample index root"
    )
    parser.add_argument("--state-dir", type=Path, default=REPO / ".state", help="where the models are")
    parser.add_argument("--clients", type=int, default=6)
    parser.add_argument("--seconds", type=float, default=150, help="the candidate reader's run")
    parser.add_argument("--llm-seconds", type=float, default=240, help="the LLM reader's run")
    parser.add_argument("--versions", type=int, default=3, help="versions published during each run")
    parser.add_argument("--llm-versions", type=int, help="versions published during the LLM run (--versions)")
    parser.add_argument("--malloc-arenas", type=int, help="the server's --malloc-arenas (default: its own)")
    parser.add_argument("--readers", type=lambda s: s.split(","), default=["candidates", "llm"])
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument(
        "--rss-band", type=float, default=10.0, help="percent: the settled RSS band that counts as stable"
    )
    parser.add_argument(
        "--publish-with",
        choices=["links", "dag"],
        default="links",
        help="links: re-publish the sample build as hard links (seconds); dag: the rebuild DAG makes every "
        "version (airflow dags test hqa_index_rebuild, minutes each; a state folder of its own)",
    )
    parser.add_argument("--screenshot", action="store_true", help="photograph the page after the first run")
    parser.add_argument("--report-only", action="store_true", help="rewrite README.md from serve_load.json")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "serve")
    args = parser.parse_args(argv)
    args.out.mkdir(parents=True, exist_ok=True)
    if args.report_only:
        results = json.loads((args.out / "serve_load.json").read_text())
        (args.out / "README.md").write_text(report(results, results[0].get("argv", argv)))
        return 0
    source = VersionStore(args.index).current()
    if source is None:
        raise SystemExit(f"no published index under {args.index}: build the sample first (hqa build)")
    results = []
    with tempfile.TemporaryDirectory(prefix="serve-load-", dir=args.state_dir) as work:
        for reader in args.readers:
            results.append({**run(reader, args, Path(work), source), "argv": argv})
            print(json.dumps(results[-1], indent=2), flush=True)
    (args.out / "serve_load.json").write_text(json.dumps(results, indent=2) + "\n")
    (args.out / "README.md").write_text(report(results, argv))
    return 0


if __name__ == "__main__":
    sys.exit(main())
