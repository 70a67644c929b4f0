"""The machine a figure was measured on: every report and benchmark prints it beside its numbers."""

from __future__ import annotations

import os
import platform
from pathlib import Path


def machine() -> dict:
    mem = os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 2**30
    cpuinfo = Path("/proc/cpuinfo")
    lines = cpuinfo.read_text().splitlines() if cpuinfo.exists() else []
    names = (ln.split(":", 1)[1].strip() for ln in lines if ln.startswith("model name"))
    cpu = next(names, platform.processor())
    return {
        "cores": os.cpu_count(),
        "memory_gib": round(mem, 1),
        "cpu": cpu,
        "python": platform.python_version(),
    }
