"""Atomic file writes: a reader sees the old file or the new one, never half of one.

Reports, batch parts' sidecars, trace caches and assembled models are read by other processes (an
Airflow task, a resumed run, a second CLI) while they may be rewritten; a crash mid-write must leave
the previous file as it was. Everything is first written beside the target under a name no other
writer uses (process id and a random part), then moved over it with ``os.replace``, which is atomic on
one file system. This module sits in the lowest code layer so every other layer can use it.
"""

from __future__ import annotations

import json
import os
import uuid
from collections.abc import Iterator
from contextlib import contextmanager
from pathlib import Path
from typing import Any


def temporary_path(target: Path) -> Path:
    """A hidden name beside ``target`` that no other writer, thread or process, picks at the same time."""
    target = Path(target)
    return target.with_name(f".{target.name}.{os.getpid()}.{uuid.uuid4().hex}.tmp")


@contextmanager
def atomic_path(target: Path) -> Iterator[Path]:
    """A temporary path to write ``target``'s new content to; moved over ``target`` when the block ends
    without an error, removed when it raises (``target`` is then left as it was).

    The parent directory must exist. The temporary name ends in ``.tmp``: a writer that picks the
    format by suffix (Matplotlib, Polars) must be told the format.
    """
    tmp = temporary_path(target)
    try:
        yield tmp
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)


def write_text_atomic(target: Path, text: str, encoding: str = "utf-8") -> None:
    with atomic_path(target) as tmp:
        tmp.write_text(text, encoding=encoding)


def write_json_atomic(target: Path, value: Any, *, indent: int | None = 2) -> None:
    """``value`` as JSON text (UTF-8, a final newline when indented); a value JSON cannot hold raises
    ``TypeError`` before ``target`` is touched."""
    text = json.dumps(value, indent=indent, ensure_ascii=False)
    write_text_atomic(target, text + ("\n" if indent is not None else ""))
