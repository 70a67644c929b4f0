"""The one progress helper: tqdm bars on stderr, silenced with HQA_PROGRESS=0 (e.g. in CI logs)."""

from __future__ import annotations

import os

from tqdm import tqdm


def progress(
    desc: str, *, total: float | None = None, unit: str = "it", unit_scale: bool = False, shown: bool = True
) -> tqdm:
    """A progress bar; ``update(n)`` it as work is done and ``close()`` it at the end. ``shown=False``
    gives a silent one, for loops that are slow only sometimes."""
    disabled = not shown or os.environ.get("HQA_PROGRESS", "1") == "0"
    return tqdm(
        desc=desc,
        total=total,
        unit=unit,
        unit_scale=unit_scale,
        disable=disabled,
        dynamic_ncols=True,
        mininterval=0.5,
        leave=True,
    )
