"""Memory across index version switches, in process: does a ``LiveEngine`` keep anything per version?

    .venv/bin/python benchmarks/serve_switch_memory.py [--index .state/indexes] [--switches 15]
        [--reader candidates] [--trim] [--arenas 2] [--out benchmarks/results/serve/switch_memory/x.json]

The sample index's current version is published as ``v1`` of a fresh index root (hard links, as
``serve_load.py`` does); a ``LiveEngine`` answers a few questions on it from a pool of threads (the
serve lanes' shape: Kùzu opens a connection per thread). Then, ``--switches`` times: a new version is
published, old ones are pruned to 2, the questions are asked again (the first one moves the engine to the
new version and closes the old one), and after a ``gc.collect()`` the process is sampled:

- RSS, and glibc's own view of its heap (``mallinfo2``: bytes in use, bytes free but kept);
- how many objects of the engine's per-version types are alive (``gc``), and whether the weak references
  to every retired engine are dead;
- Arrow's pool (mimalloc: outside glibc's figures), and how many objects ``gc`` tracks in all;
- with ``--trim``: RSS again after ``malloc_trim(0)`` (and Arrow's ``release_unused``), which return the
  allocators' free pages to the kernel — a rise that trimming undoes is the allocator keeping freed
  memory, not objects kept alive.

No HTTP: this isolates the engine's switch from the server's traffic.
"""

from __future__ import annotations

import argparse
import ctypes
import gc
import json
import os
import sys
import tempfile
import time
import weakref
from collections import Counter
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import psutil
import pyarrow as pa

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from serve_load import QUESTIONS, publish  # noqa: E402

from index.versions import VersionStore  # noqa: E402
from query import EngineConfig  # noqa: E402
from query.live import LiveEngine  # noqa: E402
from query.serve.arenas import cap_malloc_arenas  # noqa: E402

WATCHED = (
    "Engine",
    "IndexReader",
    "GraphStore",
    "Database",
    "Connection",
    "VectorIndex",
    "LanceTable",
    "Bm25Index",
    "EvidenceStore",
    "VectorMatrix",
    "StatementStore",
    "TableStore",
    "EntityTable",
    "AliasIndex",
    "Llm",
    "VersionLease",
    "Router",
    "DuckDBPyConnection",
)
"""Class names of what one version's engine opens; counted among the objects ``gc`` tracks."""

_LIBC = ctypes.CDLL("libc.so.6")
_MALLINFO2_FIELDS = ("arena", "ordblks", "smblks", "hblks", "hblkhd", "usmblks", "fsmblks")
_MALLINFO2_FIELDS += ("uordblks", "fordblks", "keepcost")


class _Mallinfo2(ctypes.Structure):
    _fields_ = [(name, ctypes.c_size_t) for name in _MALLINFO2_FIELDS]


_LIBC.mallinfo2.restype = _Mallinfo2


def heap_mb() -> dict[str, float]:
    """glibc's heap: ``in_use`` (allocated chunks and mmapped blocks) and ``free`` (freed, still held)."""
    info = _LIBC.mallinfo2()
    return {
        "in_use": round((info.uordblks + info.hblkhd) / 2**20, 1),
        "free": round(info.fordblks / 2**20, 1),
    }


def rss_mb() -> float:
    return round(psutil.Process().memory_info().rss / 2**20, 1)


def rss_parts_mb() -> dict[str, float]:
    """RSS split as the kernel counts it: anonymous (heaps, arrays) and file-backed (mapped index files)."""
    fields = dict(line.split(":", 1) for line in Path("/proc/self/status").read_text().splitlines())
    return {k: round(int(fields[f"Rss{k.title()}"].split()[0]) / 1024, 1) for k in ("anon", "file")}


def alive_types() -> dict[str, int]:
    counts = Counter(type(o).__name__ for o in gc.get_objects())
    return {name: counts[name] for name in WATCHED if counts[name]}


def ask_round(live: LiveEngine, pool: ThreadPoolExecutor, questions: list[str]) -> set[str]:
    """The questions once, on the pool's threads; the versions that answered."""
    return {result.index_version for result in pool.map(live.ask, questions)}


def sample(live: LiveEngine, retired: list[weakref.ref], trim: bool, step: int, answered: set[str]) -> dict:
    gc.collect()
    row = {
        "switch": step,
        "answering": live.version,
        "answered_from": sorted(answered),
        "open_versions": live.open_versions,
        "rss_mb": rss_mb(),
        "rss_parts_mb": rss_parts_mb(),
        "heap_mb": heap_mb(),
        "arrow_mb": round(pa.default_memory_pool().bytes_allocated() / 2**20, 1),
        "gc_objects": len(gc.get_objects()),
        "retired_engines_alive": sum(ref() is not None for ref in retired),
        "objects": alive_types(),
        "threads": len(psutil.Process().threads()),
        "open_files": len(psutil.Process().open_files()),
    }
    if trim:
        pa.default_memory_pool().release_unused()
        _LIBC.malloc_trim(0)
        row["rss_after_trim_mb"] = rss_mb()
    return row


def run(args: argparse.Namespace, work: Path) -> list[dict]:
    source = VersionStore(args.index).current()
    if source is None:
        raise SystemExit(f"no published index under {args.index}: build the sample first (hqa build)")
    root = work / "root"
    publish(root, source, "v1")
    store = VersionStore(root)
    questions = QUESTIONS[: args.questions]
    rows = [{"switch": 0, "rss_mb": rss_mb(), "heap_mb": heap_mb(), "note": "before the engine opened"}]
    config = EngineConfig(reader=args.reader)
    if args.reader == "llm":
        config = config.model_copy(update={"llm": config.llm.model_copy(update={"backend": args.llm})})
    retired: list[weakref.ref] = []
    with LiveEngine(root, config, state_dir=args.state_dir) as live, ThreadPoolExecutor(args.threads) as pool:
        answered = ask_round(live, pool, questions)
        rows.append(sample(live, retired, args.trim, 0, answered))
        for step in range(1, args.switches + 1):
            retired.append(weakref.ref(live._engine))
            publish(root, source, f"v{step + 1}")
            store.prune(keep=2)
            started = time.perf_counter()
            answered = ask_round(live, pool, questions)
            row = sample(live, retired, args.trim, step, answered)
            row["round_s"] = round(time.perf_counter() - started, 2)
            rows.append(row)
            print(json.dumps(row), flush=True)
    return rows


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--index", type=Path, default=REPO / ".state" / "indexes")
    parser.add_argument("--state-dir", type=Path, default=REPO / ".state")
    parser.add_argument("--switches", type=int, default=15)
    parser.add_argument("--questions", type=int, default=len(QUESTIONS))
    parser.add_argument("--threads", type=int, default=2, help="the fast lane's slots")
    parser.add_argument("--reader", default="candidates", choices=["candidates", "llm"])
    parser.add_argument("--llm", default="qwen2.5-coder-0.5b-instruct")
    parser.add_argument("--trim", action="store_true", help="malloc_trim(0) after each sample")
    parser.add_argument("--arenas", type=int, default=0, help="cap glibc's arenas as hqa serve does (0: not)")
    parser.add_argument("--out", type=Path, help="write the samples here as JSON")
    args = parser.parse_args(argv)
    capped = cap_malloc_arenas(args.arenas)
    with tempfile.TemporaryDirectory(prefix="switch-memory-", dir=args.state_dir) as work:
        rows = run(args, Path(work))
    result = {
        "argv": argv if argv is not None else sys.argv[1:],
        "malloc_arena_max": os.environ.get("MALLOC_ARENA_MAX"),
        "arenas_capped_at": args.arenas if capped else None,
        "load": [round(x, 2) for x in os.getloadavg()],
        "samples": rows,
    }
    if args.out is not None:
        args.out.parent.mkdir(parents=True, exist_ok=True)
        args.out.write_text(json.dumps(result, indent=2) + "\n")
    return 0


if __name__ == "__main__":
    sys.exit(main())
