"""Where the graph stage's memory goes: the stage re-run on a finished scale run, with the process's
current and peak RSS at every phase mark (``GraphStats.peak_rss_mb``), or Kùzu's bulk load alone.

    python benchmarks/scale/graph_phases.py --run WORK/runs/<size> --work /tmp/graph-phases
    python benchmarks/scale/graph_phases.py --run WORK/runs/<size> --work /tmp/graph-phases \
        --kuzu-only [--pool 512] [--rel-slice-rows N]

The stage's inputs are the run's ingest folder and its published version (evidence, entity records); the
name tables are built again into ``--work`` on a DuckDB that is then closed, so the stage starts, as in
its own Airflow task, on a fresh connection. ``--kuzu-only`` loads the tables a previous stage run left
in ``--work/graph`` into a new database in this fresh process. ``HQA_CODE`` puts another checkout's code
first on the path (the same probe on the code before a change).
"""

from __future__ import annotations

import argparse
import json
import os
import resource
import shutil
import sys
import time
from pathlib import Path

REPO = Path(os.environ.get("HQA_CODE", Path(__file__).resolve().parents[2]))
sys.path.insert(0, str(REPO))

import pyarrow.parquet as pq  # noqa: E402

import index.graph as graph  # noqa: E402
import index.graph_build as graph_build  # noqa: E402
from index import layout  # noqa: E402
from index.duck import MemoryBudget, connect  # noqa: E402
from index.evidence_reader import EvidenceReader  # noqa: E402
from index.graph import NODE_TABLES, REL_TABLES, SCHEMA  # noqa: E402
from index.kuzu_store import NODE_GROUP_ROWS, GraphStore  # noqa: E402
from index.names import NameStore, build_names  # noqa: E402

SLICES: list[dict] = []  # one entry a COPY and a reopen: table, rows, seconds, RSS after


def time_slices() -> None:
    """Note the seconds of every COPY and every reopen (``SLICES``): does either grow as the database does?"""
    copy, reopen = GraphStore._copy, GraphStore.reopen

    def timed_copy(self: GraphStore, table: str, path: Path) -> None:
        clock = time.perf_counter()
        copy(self, table, path)
        rows = pq.ParquetFile(path).metadata.num_rows
        SLICES.append({"table": table, "rows": rows, "copy_s": round(time.perf_counter() - clock, 2)})

    def timed_reopen(self: GraphStore) -> None:
        clock = time.perf_counter()
        reopen(self)
        if SLICES:
            SLICES[-1].update(
                reopen_s=round(time.perf_counter() - clock, 2), current_mb=round(current_mb(), 1)
            )

    GraphStore._copy, GraphStore.reopen = timed_copy, timed_reopen


def current_mb() -> float:
    """Resident memory now (``/proc/self/statm``), not the peak."""
    return int(Path("/proc/self/statm").read_text().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20


def peak_mb() -> float:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def children_peak_mb() -> float:
    """The largest peak RSS of a child process that has ended (the graph's write phase)."""
    return resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss / 1024


def stage(run: Path, work: Path, memory_mb: int) -> dict:
    version = (run / "indexes" / "current").resolve()
    budget = MemoryBudget(memory_mb=memory_mb)
    with connect(budget, work / "spill-names") as con:
        build_names(run / "ingest", work / "names", con)
    marks: list[float] = []
    recorded = graph_build.peak_rss_mb

    def mark() -> float:
        marks.append(round(current_mb(), 1))
        return recorded()

    graph_build.peak_rss_mb = mark  # each phase mark also notes the current RSS
    con = connect(budget, work / "spill")
    names = NameStore(work / "names", con, REPO / "data" / "wikidata-units.tsv")
    started = current_mb()
    stats = graph_build.build_graph(
        run / "ingest", EvidenceReader(version), version / layout.ENTITY_TABLE, names, work / "graph.kz",
        work / "graph", budget,
    )  # fmt: skip
    # the writes run in a child process of their own (index.graph_tables): their peaks are the child's,
    # and only the COPY phases, in this process, have a current RSS
    copies = iter(marks)
    phases = [
        {"phase": name, "current_mb": next(copies) if name.startswith("copy ") else None, "peak_mb": peak}
        for name, peak in stats.peak_rss_mb.items()
    ]
    return {"start_mb": round(started, 1), "phases": phases, "seconds": stats.seconds, "edges": stats.edges}


def kuzu_only(
    work: Path, pool_mb: int, rel_slice_rows: int | None = None, node_slice_rows: int | None = None
) -> dict:
    tables, db = work / "graph", work / "kuzu-only.kz"
    for path in (db, db.with_name(db.name + ".wal")):
        path.unlink(missing_ok=True)
    started, phases, clock = current_mb(), [], time.perf_counter()
    with GraphStore.create(db, buffer_pool_mb=pool_mb) as store:
        store.ddl(SCHEMA)
        for name in (*NODE_TABLES, *REL_TABLES):
            parquet = tables / f"{name}.parquet"
            if pq.ParquetFile(parquet).metadata.num_rows:
                rel = name in REL_TABLES
                rel_rows = rel_slice_rows or graph_build.rel_slice_rows(pool_mb)
                node_rows = node_slice_rows or getattr(
                    graph_build, "node_slice_rows", lambda _: NODE_GROUP_ROWS
                )(pool_mb)
                slices = rel_rows if rel else node_rows
                # the columns each COPY loads; None on code from before the graph's integer keys
                columns = getattr(graph, "COPY_COLUMNS", {}).get(name)
                store.copy_from(name, parquet, slice_rows=slices, **({"columns": columns} if columns else {}))
            phases.append(
                {"phase": f"copy {name}", "current_mb": round(current_mb(), 1), "peak_mb": peak_mb()}
            )
    seconds = round(time.perf_counter() - clock, 1)
    return {
        "start_mb": round(started, 1),
        "phases": phases,
        "seconds": seconds,
        "pool_mb": pool_mb,
        "rel_slice_rows": rel_slice_rows or graph_build.rel_slice_rows(pool_mb),
        "node_slice_rows": node_slice_rows,
    }


def main() -> int:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", type=Path, required=True, help="a finished size of benchmarks/scale/run.py")
    parser.add_argument(
        "--work", type=Path, required=True, help="scratch folder (emptied unless --kuzu-only)"
    )
    parser.add_argument("--memory-mb", type=int, default=1024, help="the stage's index.memory_mb")
    parser.add_argument("--kuzu-only", action="store_true", help="only load --work/graph's tables into Kùzu")
    parser.add_argument("--pool", type=int, default=512, help="Kùzu's buffer pool for --kuzu-only (MB)")
    parser.add_argument(
        "--rel-slice-rows", type=int, help="rows of one rel COPY for --kuzu-only (default: the stage's rule)"
    )
    parser.add_argument(
        "--node-slice-rows",
        type=int,
        help="rows of one node COPY for --kuzu-only (default: the stage's)",
    )
    parser.add_argument("--slices", action="store_true", help="time every COPY and reopen (in the JSON)")
    args = parser.parse_args()
    if args.slices:
        time_slices()
    if args.kuzu_only:
        result = kuzu_only(args.work, args.pool, args.rel_slice_rows, args.node_slice_rows)
    else:
        shutil.rmtree(args.work, ignore_errors=True)
        args.work.mkdir(parents=True)
        result = stage(args.run, args.work, args.memory_mb)
    result.update(
        code=str(REPO),
        run=str(args.run),
        peak_mb=round(peak_mb(), 1),
        children_peak_mb=round(children_peak_mb(), 1),
    )
    if args.slices:
        result["slices"] = SLICES
    for phase in result["phases"]:
        now = "-" if phase["current_mb"] is None else f"{phase['current_mb']:.1f}"
        print(f"{phase['phase']:40s} current {now:>8s}  peak {phase['peak_mb']:8.1f}")
    print(json.dumps(result))
    return 0


if __name__ == "__main__":
    sys.exit(main())
