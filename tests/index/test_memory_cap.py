"""A small build in its own process under a memory cap the kernel enforces (issue 34: "the test suite
runs a small build under a memory cap").

The input is the sample ingest plus ``NAMES`` items that have only a name, with their articles and a
redirect to each (``grown_ingest.add_names``): a million names, as many as the issue measured the old
``Lexicon`` dicts at, which made the name tables large (+1.35 GB RSS for them alone) while adding no
evidence. Today's build keeps those tables in DuckDB and Parquet, so its memory does not follow them;
the build at commit 8b2f308 (the dict ``Lexicon``) fails under the same cap (measured once:
``benchmarks/results/scale/memory_cap.md``).

The cap is ``RLIMIT_DATA``, set in the child before it imports anything: the kernel refuses any private
writable mapping past it (heap, anonymous ``mmap``: Python objects, Arrow buffers, DuckDB, LanceDB),
and the build fails (``MemoryError``, or the library's own error: the old build's graph stage got
Kùzu's "Mmap … failed"). Why not a cgroup's ``memory.max``, which would cap resident
memory: this machine's cgroup v2 hierarchy has no controller to delegate
(``/sys/fs/cgroup/unified/cgroup.controllers`` is empty) and its v1 memory hierarchy belongs to the
machinery that runs the session, so a test cannot count on creating one. ``RLIMIT_DATA`` counts
address space reserved as well as touched, so the child bounds the two reservations Kùzu makes up
front and never touches on a small graph (its maximum database size, 8 TiB by default, and the buffer
pool of a database opened for reading, 80 % of the machine's memory): 1 GiB and 256 MiB. Measured on
this machine (2 cores; ``benchmarks/results/scale/memory_cap.md``): today's build peaks at 4,600 MB
of data (1,387 MB resident), the build at 8b2f308 at 5,598 MB (2,234 MB resident) on the same input;
``CAP_MB`` sits between. Thread stacks count too, so a machine with many more cores (more library
threads) may need the cap raised by their stacks. About 10 to 20 minutes on 2 shared cores: ``slow``.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import polars as pl
import pytest

from index import layout
from tests.index.grown_ingest import add_names

REPO = Path(__file__).resolve().parents[2]
NAMES = 1_000_000
CAP_MB = 5_100

CHILD = """
import json, resource, sys
from pathlib import Path
cap = {cap_mb} << 20
resource.setrlimit(resource.RLIMIT_DATA, (cap, cap))
import functools, kuzu
kuzu.Database = functools.partial(kuzu.Database, max_db_size=1 << 30, buffer_pool_size=256 << 20)
from schemas.settings import HqaSettings
from index.build import build_index
settings = HqaSettings(state_dir=Path({state!r}))
settings.index.embedding_model = "wordllama-l2-256"
result = build_index(settings, ingest_dir=Path({ingest!r}), force=True)
print(json.dumps({{"counts": result.manifest.counts, "version": str(result.version_dir)}}))
"""


def capped_build(code: Path, state: Path, ingest: Path, cap_mb: int) -> subprocess.CompletedProcess[str]:
    """``build_index`` of ``code`` on ``ingest`` in a fresh interpreter held to ``cap_mb`` of data."""
    script = textwrap.dedent(CHILD).format(cap_mb=cap_mb, state=str(state), ingest=str(ingest))
    env = {**os.environ, "PYTHONPATH": str(code), "HQA_PROGRESS": "0", "HF_HUB_OFFLINE": "1"}
    env["TRANSFORMERS_OFFLINE"] = "1"
    return subprocess.run(
        [sys.executable, "-c", script], cwd=code, env=env, capture_output=True, text=True, timeout=3600
    )


@pytest.fixture(scope="module")
def named_ingest(sample_ingest, tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("named") / "ingest"
    shutil.copytree(sample_ingest.out_dir, out)
    return add_names(out, NAMES)


@pytest.mark.slow
def test_a_build_with_a_million_names_fits_under_the_cap(named_ingest: Path, tmp_path: Path) -> None:
    run = capped_build(REPO, tmp_path / "state", named_ingest, CAP_MB)
    assert run.returncode == 0, f"the capped build failed:\n{run.stderr[-4000:]}"
    built = json.loads(run.stdout.strip().splitlines()[-1])
    # every name went into the build, and every redirect resolved through the name tables: the alias
    # "Also 0000123" names Q900000123 (the ids add_names gave, not read back from the code under test)
    aliases = pl.scan_parquet(Path(built["version"]) / layout.ALIAS_TABLE)
    added = aliases.filter(pl.col("entity_id").str.slice(1).cast(pl.Int64, strict=False) >= 900_000_000)
    assert added.select(pl.col("entity_id").n_unique()).collect().item() == NAMES
    redirects = aliases.filter(pl.col("alias").str.starts_with("Also ")).collect()
    expected = pl.format("Q{}", pl.col("alias").str.slice(5).cast(pl.Int64) + 900_000_000)
    assert redirects.height == NAMES
    resolved = redirects.filter((pl.col("entity_id") == expected) & (pl.col("source") == "redirect"))
    assert resolved.height == NAMES


def test_the_cap_is_enforced(tmp_path: Path) -> None:
    """The child's cap is real: a child that allocates past it fails (a cap never hit proves nothing)."""
    cap = "import resource; resource.setrlimit(resource.RLIMIT_DATA, (256 << 20, 256 << 20))"
    script = f"{cap}; b = bytearray({512 << 20})"
    run = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, timeout=60)
    assert run.returncode != 0 and "MemoryError" in run.stderr
