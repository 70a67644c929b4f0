"""The smallest Kùzu buffer pool the graph stage's bulk load needs, at each size of the scale runs.

    python benchmarks/scale/kuzu_pool.py --run WORK/runs/<size> [--run …] [--pools 16,32,…] --out DIR

For each run folder of ``run.py`` (its ingest and its published version), this writes the graph
stage's node and rel tables again with the stage's own code (``write_names``, ``write_graph_tables``:
the first half of the stage, into a scratch folder), then loads them into a fresh Kùzu database with
each buffer pool of the ladder, in a child process of its own, in the stage's order (nodes, then rels),
and records which pools load every table, which table failed first under the others, and the child's
peak RSS. The graph stage gives Kùzu half of ``index.memory_mb``: this is the figure that says how
that setting must grow with the graph (``docs/capacity.md``).

Writes ``kuzu_pool.json`` and ``kuzu_pool.md`` into ``--out``.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parents[2]
sys.path.insert(0, str(REPO))

DEFAULT_POOLS = (16, 32, 48, 64, 96, 128, 192, 256, 320, 384, 512, 768)
VERSION_PARTS = ("evidence", "entities", "evidence_duplicates.parquet")


def write_tables(run: Path, scratch: Path) -> dict[str, int]:
    """The graph stage's Parquet tables for ``run``'s published version, in ``scratch/graph``."""
    import pyarrow.parquet as pq

    from index import layout
    from index.build_plan import BuildPlan, write_names
    from index.duck import MemoryBudget
    from index.graph import NODE_TABLES, REL_TABLES
    from index.graph_tables import WriteRequest, write_here

    args = json.loads((run / "scale-steps" / "stage-graph.args.json").read_text())
    plan = args["plan"]
    version = (run / "indexes" / "current").resolve()
    building = scratch / "building"
    building.mkdir(parents=True)
    for part in VERSION_PARTS:  # hard links: the published version is only read
        source = version / part
        if source.is_dir():
            shutil.copytree(source, building / part, copy_function=os.link)
        else:
            os.link(source, building / part)
    plan.update(building=str(building), ingest_dir=str(run / "ingest"), index_dir=str(run / "indexes"))
    plan["unit_table"] = str(REPO / "data" / "wikidata-units.tsv")
    build = BuildPlan.model_validate(plan)
    write_names(build)
    (scratch / "graph").mkdir()
    write_here(  # the stage's own write phase, in this process
        WriteRequest(
            ingest_dir=run / "ingest",
            evidence_dir=building,
            entity_records=building / layout.ENTITY_TABLE,
            names_dir=Path(build.names_dir),
            unit_table=Path(build.unit_table),
            work_dir=scratch / "graph",
            budget=MemoryBudget(memory_mb=build.memory_mb),
        )
    )
    return {
        name: pq.ParquetFile(scratch / "graph" / f"{name}.parquet").metadata.num_rows
        for name in (*NODE_TABLES, *REL_TABLES)
        if (scratch / "graph" / f"{name}.parquet").is_file()
    }


def load(tables_dir: Path, pool_mb: int, database: Path) -> dict:
    """Child process: every table into a fresh database with this pool, as the stage loads them
    (``load_tables``: nodes then rels, each in slices); the table that failed, if one did."""
    import pyarrow.parquet as pq

    from index.graph import NODE_TABLES, REL_TABLES
    from index.graph_build import load_tables
    from index.kuzu_store import GraphMemoryError, GraphStore

    rows = {
        name: pq.ParquetFile(tables_dir / f"{name}.parquet").metadata.num_rows
        for name in (*NODE_TABLES, *REL_TABLES)
    }
    rss_before = _rss_mb()
    started = time.perf_counter()
    failed = error_text = None
    with GraphStore.create(database, buffer_pool_mb=pool_mb) as store:
        try:
            load_tables(store, tables_dir, rows)
        except GraphMemoryError as error:
            failed = error.table
        except RuntimeError as error:  # Kùzu's other failures under a small pool (see kuzu_pool.md)
            failed, error_text = "?", str(error)[:200]
    return {
        "pool_mb": pool_mb,
        "loaded": failed is None,
        "failed_table": failed,
        "error": error_text,
        "seconds": round(time.perf_counter() - started, 2),
        "rss_before_mb": rss_before,
        "peak_rss_mb": _status_mb("VmHWM"),
    }


def _rss_mb() -> float:
    """This process's resident memory now (after its imports, before the load)."""
    return _status_mb("VmRSS")


def _status_mb(field: str) -> float:
    """A memory figure of this process from /proc (VmHWM: its peak RSS since exec; ``ru_maxrss`` would
    carry the parent's peak at fork into the child)."""
    for line in Path("/proc/self/status").read_text().splitlines():
        if line.startswith(field + ":"):
            return round(int(line.split()[1]) / 1024, 1)
    raise RuntimeError(f"no {field} in /proc/self/status")


def ladder(tables_dir: Path, pools: list[int], scratch: Path) -> list[dict]:
    """Each pool in its own child (a fresh process: ru_maxrss is that load's alone)."""
    results = []
    for pool in pools:
        database = scratch / f"pool-{pool}.kuzu"
        out = subprocess.run(
            [sys.executable, __file__, "--child", str(tables_dir), str(pool), str(database)],
            capture_output=True,
            text=True,
            check=True,
        )
        results.append(json.loads(out.stdout.strip().splitlines()[-1]))
        for leftover in scratch.glob(f"pool-{pool}.kuzu*"):
            leftover.unlink()
        print(f"  pool {pool} MB: {results[-1]}", file=sys.stderr)
    return results


def render(sizes: list[dict], command: str) -> str:
    lines = [
        "# The Kùzu buffer pool the graph stage's bulk load needs",
        "",
        f"Command: `{command}`",
        "",
        "Each pool loads the stage's own tables (written by `write_graph_tables`) into a fresh database, "
        "nodes then rels, in a process of its own; *needed* is the smallest pool of the ladder that loads "
        "every table. The graph stage gives Kùzu half of `index.memory_mb` (1,024 MB by default: 512 MB).",
        "",
        "| run | nodes | rels | needed pool MB | first failure below it | RSS MB before / peak at it |",
        "|---|--:|--:|--:|---|--:|",
    ]
    for size in sizes:
        passing = [r for r in size["pools"] if r["loaded"]]
        needed = passing[0] if passing else None
        below = [r for r in size["pools"] if not r["loaded"]]
        lines.append(
            f"| {size['run']} | {size['nodes']:,} | {size['rels']:,} | "
            f"{needed['pool_mb'] if needed else 'over the ladder'} | "
            f"{(below[-1]['failed_table'] + ' at ' + str(below[-1]['pool_mb']) + ' MB') if below else '-'} | "
            f"{(str(needed['rss_before_mb']) + ' / ' + str(needed['peak_rss_mb'])) if needed else '-'} |"
        )
    return "\n".join(lines) + "\n"


def main() -> int:
    if len(sys.argv) > 1 and sys.argv[1] == "--child":
        print(json.dumps(load(Path(sys.argv[2]), int(sys.argv[3]), Path(sys.argv[4]))))
        return 0
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--run", type=Path, action="append", required=True, help="a run folder of run.py")
    parser.add_argument("--pools", default=",".join(map(str, DEFAULT_POOLS)), help="buffer pools to try, MB")
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    from index.graph import NODE_TABLES

    pools = sorted(int(p) for p in args.pools.split(","))
    sizes = []
    for run in args.run:
        with tempfile.TemporaryDirectory(prefix="kuzu-pool-") as tmp:
            scratch = Path(tmp)
            print(f"{run.name}: writing the graph tables", file=sys.stderr)
            rows = write_tables(run.resolve(), scratch)
            sizes.append(
                {
                    "run": run.name,
                    "tables": rows,
                    "nodes": sum(n for t, n in rows.items() if t in NODE_TABLES),
                    "rels": sum(n for t, n in rows.items() if t not in NODE_TABLES),
                    "pools": ladder(scratch / "graph", pools, scratch),
                }
            )
    args.out.mkdir(parents=True, exist_ok=True)
    command = "python " + " ".join([str(Path(sys.argv[0]).resolve().relative_to(REPO)), *sys.argv[1:]])
    report = {"command": command, "sizes": sizes}
    (args.out / "kuzu_pool.json").write_text(json.dumps(report, indent=2) + "\n")
    (args.out / "kuzu_pool.md").write_text(render(sizes, command))
    print(render(sizes, command))
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
