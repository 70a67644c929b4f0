"""Build the knowledge graph: the tables ``index.graph_tables`` writes, COPYed into Kùzu.

The stage has two halves in two processes. The writes (DuckDB's joins and sorts into Parquet files)
run in a child started with ``subprocess`` - not ``multiprocessing``: Airflow's Celery workers run a
task in a daemonic process, which ``multiprocessing`` refuses children. The bulk load (Kùzu's ``COPY``,
every Kùzu call in ``index.kuzu_store``) runs here, in a process that never held DuckDB's working
memory: at 1M entities the stage in one process peaked at 2,176 MB, most of it Kùzu's load standing on
the ~600 MB the writes left resident (benchmarks/results/scale/graph_memory.md). Per-row ``CREATE``
would be orders of magnitude slower than ``COPY``. The database is built beside ``out_path`` and moved
into place when complete, so a reader never opens a half-built graph.
"""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

from index.duck import MemoryBudget
from index.evidence_reader import EvidenceReader
from index.graph import COPY_COLUMNS, NODE_TABLES, REL_TABLES, SCHEMA, GraphStats
from index.graph_tables import WriteRequest, WriteResult, peak_rss_mb
from index.kuzu_store import NODE_GROUP_ROWS, GraphStore
from index.names import NameStore
from ingest.progress import progress


def rel_slice_rows(buffer_pool_mb: int | None) -> int:
    """Rows of one rel COPY: 1,024 a MB of pool (a narrow edge costs ~100-250 bytes of pool while its
    COPY runs, in both directions; benchmarks/results/scale/kuzu_pool.md), at least a node group's."""
    return max(NODE_GROUP_ROWS, (buffer_pool_mb or 1024) * 1024)


def node_slice_rows(buffer_pool_mb: int | None) -> int:
    """Rows of one node COPY: 2,048 a MB of pool in whole node groups (8 groups for the stage's 512 MB),
    at least one group. Every COPY ends in a checkpoint that costs more the more of the table is already
    stored: at 1M entities, one node group a COPY made the Evidence table's 73 COPYs take 0.14 s at first
    and 1.55 s by the last (67 s in all); eight groups a COPY, 15 s, at the same peak RSS
    (benchmarks/results/scale/graph_memory.md)."""
    groups = (buffer_pool_mb or 1024) * 2048 // NODE_GROUP_ROWS
    return max(1, groups) * NODE_GROUP_ROWS


def write_apart(request: WriteRequest) -> WriteResult:
    """The write phase (``index.graph_tables.write_here``) in a child process; its result. The child's
    progress and any traceback go to this process's stderr (the task's log)."""
    request.work_dir.mkdir(parents=True, exist_ok=True)
    request_path = request.work_dir / "write-request.json"
    result_path = request.work_dir / "write-result.json"
    result_path.unlink(missing_ok=True)
    request_path.write_text(request.model_dump_json())
    command = [sys.executable, "-m", "index.graph_tables", str(request_path), str(result_path)]
    # the child imports the very code this process runs, wherever this process found it (a checkout put
    # first on sys.path by a script, not only the installed package)
    env = {**os.environ, "PYTHONPATH": os.pathsep.join(path for path in sys.path if path)}
    status = subprocess.run(command, check=False, env=env).returncode
    if status != 0 or not result_path.is_file():
        raise RuntimeError(
            f"the graph's table writes failed in their own process (exit status {status}; its traceback "
            f"is above in this log): {' '.join(command)}"
        )
    return WriteResult.model_validate_json(result_path.read_text())


def load_tables(
    store: GraphStore, tables_dir: Path, rows: dict[str, int], peaks: dict[str, float] | None = None
) -> float:
    """COPY every node table, then every rel table, from ``tables_dir`` into ``store`` (schema included),
    each in slices that keep to the store's pool; the seconds the rel tables took. ``peaks`` gets the
    process's peak RSS after each table's COPY ("copy NAME")."""
    store.ddl(SCHEMA)
    peaks = {} if peaks is None else peaks
    bar = progress("graph: COPY", total=sum(rows.values()), unit="row", unit_scale=True)
    for name in NODE_TABLES:
        if rows[name]:
            store.copy_from(
                name,
                tables_dir / f"{name}.parquet",
                slice_rows=node_slice_rows(store.buffer_pool_mb),
                columns=COPY_COLUMNS[name],
            )
        peaks[f"copy {name}"] = peak_rss_mb()
        bar.update(rows[name])
    started = time.perf_counter()
    for name in REL_TABLES:
        if rows[name]:
            store.copy_from(
                name,
                tables_dir / f"{name}.parquet",
                slice_rows=rel_slice_rows(store.buffer_pool_mb),
                columns=COPY_COLUMNS[name],
            )
        peaks[f"copy {name}"] = peak_rss_mb()
        bar.update(rows[name])
    bar.close()
    return time.perf_counter() - started


def build_graph(
    ingest_dir: Path,
    evidence: EvidenceReader,
    entity_records: Path,
    names: NameStore,
    out_path: Path,
    work_dir: Path,
    budget: MemoryBudget,
) -> GraphStats:
    """Build the Kùzu graph at ``out_path`` (replacing an older one) from Parquet files in ``work_dir``."""
    started = time.perf_counter()
    out_path, work_dir = Path(out_path), Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    request = WriteRequest(
        ingest_dir=Path(ingest_dir),
        evidence_dir=evidence.dir,
        entity_records=Path(entity_records),
        names_dir=names.dir,
        unit_table=names.unit_table,
        work_dir=work_dir,
        budget=budget,
    )
    written = write_apart(request)
    rows, skipped = written.rows, written.links_skipped
    peaks: dict[str, float] = dict(written.peak_rss_mb)
    building = out_path.with_name(f".{out_path.name}.building")
    for leftover in (building, building.with_name(building.name + ".wal")):
        leftover.unlink(missing_ok=True)
    with GraphStore.create(building, buffer_pool_mb=budget.memory_mb // 2) as store:
        copy_seconds = load_tables(store, work_dir, rows, peaks)
        nodes = {name: store.count(name) for name in NODE_TABLES}
        edges = {name: store.count(name) for name in REL_TABLES}
    os.replace(building, out_path)
    return GraphStats(
        nodes=nodes,
        edges=edges,
        links_skipped=skipped,
        seconds=round(time.perf_counter() - started, 3),
        copy_seconds=round(copy_seconds, 3),
        edges_per_second=round(sum(edges.values()) / copy_seconds, 1) if copy_seconds else 0.0,
        peak_rss_mb=peaks,
    )
