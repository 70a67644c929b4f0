"""The arena cap ``hqa serve`` sets takes effect: in a fresh process, threads that each allocate share at
most the capped number of glibc arenas (as glibc's own ``malloc_info`` lists them), where without the cap
they get one each; ``MALLOC_ARENA_MAX`` in the environment is left to glibc."""

from __future__ import annotations

import os
import platform
import re
import subprocess
import sys
from pathlib import Path

import pytest

from query.serve.arenas import ENV, cap_malloc_arenas

REPO = Path(__file__).resolve().parents[3]
THREADS = 6
MODULE = REPO / "query" / "serve" / "arenas.py"
PROBE = f"""
import ctypes, importlib.util, sys, threading
spec = importlib.util.spec_from_file_location("arenas", {str(MODULE)!r})  # not the query package: slow
arenas = importlib.util.module_from_spec(spec)
spec.loader.exec_module(arenas)
capped = arenas.cap_malloc_arenas(int(sys.argv[1]))
libc = ctypes.CDLL("libc.so.6")
libc.malloc.restype = libc.fopen.restype = ctypes.c_void_p
libc.malloc_info.argtypes = [ctypes.c_int, ctypes.c_void_p]
libc.fclose.argtypes = [ctypes.c_void_p]
kept, started = [], threading.Barrier({THREADS})
def allocate():
    started.wait()  # all alive at once: none can inherit an ended thread's arena
    kept.append([libc.malloc(4096) for _ in range(100)])
    started.wait()
threads = [threading.Thread(target=allocate) for _ in range({THREADS})]
[t.start() for t in threads]
[t.join() for t in threads]
out = libc.fopen(sys.argv[2].encode(), b"w")
libc.malloc_info(0, out)
libc.fclose(out)
print(capped)
"""

glibc = pytest.mark.skipif(platform.libc_ver()[0] != "glibc", reason="the cap is glibc's")


def arenas_used(cap: int, tmp_path: Path, environ: dict[str, str] | None = None) -> tuple[int, bool]:
    """(arenas glibc reports, whether the cap was set) in a fresh process with ``THREADS`` threads."""
    report = tmp_path / f"malloc-{cap}.xml"
    env = {k: v for k, v in os.environ.items() if k != ENV} | (environ or {})
    done = subprocess.run(
        [sys.executable, "-c", PROBE, str(cap), str(report)],
        env=env,
        capture_output=True,
        text=True,
        timeout=120,
        check=True,
    )
    return len(re.findall(r'<heap nr="\d+">', report.read_text())), done.stdout.strip() == "True"


@glibc
def test_threads_share_the_capped_arenas(tmp_path: Path) -> None:
    uncapped, was_capped = arenas_used(0, tmp_path)
    assert not was_capped and uncapped > 2, f"without a cap {THREADS} threads should get arenas of their own"
    capped, was_capped = arenas_used(2, tmp_path)
    assert was_capped and capped <= 2


@glibc
def test_the_environment_variable_is_left_to_glibc(tmp_path: Path) -> None:
    used, was_capped = arenas_used(2, tmp_path, {ENV: "4"})
    assert not was_capped and 2 < used <= 4


def test_a_negative_cap_is_refused() -> None:
    with pytest.raises(ValueError, match=r"0 .* or more"):
        cap_malloc_arenas(-1)
