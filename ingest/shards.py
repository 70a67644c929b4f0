"""Shards of a line-oriented dump, so that a DAG can map one task over each part of one file.

A ``bytes`` shard owns the lines whose first byte lies in [start, end) of the decompressed
stream (uncompressed files seek straight there; compressed ones seek through their block index,
``ingest.seek_index``, or without one are decompressed up to it). A
``lines`` shard owns 0-based lines [start, end). Every line belongs to exactly one shard of a
partition, so shard outputs can be concatenated without duplicates or gaps.
"""

from __future__ import annotations

import re
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

from pydantic import BaseModel, model_validator

from ingest.sources import ChunkStream, iter_lines

_SHARD_RE = re.compile(r"^(bytes|lines)[:=-](\d+)[:-](\d*)$")


class Shard(BaseModel):
    kind: Literal["all", "bytes", "lines"] = "all"
    start: int = 0
    end: int | None = None

    @model_validator(mode="after")
    def _check(self) -> Shard:
        if self.start < 0 or (self.end is not None and self.end < self.start):
            raise ValueError(f"bad shard range [{self.start}, {self.end})")
        if self.kind == "all" and (self.start or self.end is not None):
            raise ValueError("an 'all' shard takes no range")
        return self

    @property
    def name(self) -> str:
        """Deterministic part of output file names: 'all', 'bytes-0-1048576', 'lines-100-'."""
        if self.kind == "all":
            return "all"
        return f"{self.kind}-{self.start}-{'' if self.end is None else self.end}"

    @classmethod
    def parse(cls, text: str | None) -> Shard:
        """'all', 'bytes:0:1000000' or 'lines:0:5000' (end may be empty: to the end of the file)."""
        if not text or text == "all":
            return cls()
        match = _SHARD_RE.match(text.strip())
        if not match:
            raise ValueError(
                f"shard must look like 'all', 'bytes:START:END' or 'lines:START:END', got {text!r}"
            )
        kind, start, end = match.groups()
        return cls(kind=kind, start=int(start), end=int(end) if end else None)  # type: ignore[arg-type]


@dataclass
class ShardLine:
    line_no: int | None  # 1-based; unknown inside a bytes shard that does not start at 0
    offset: int  # decompressed byte offset of the line's first byte
    data: bytes


class ShardLines:
    """Iterate the lines of one shard; afterwards ``stream`` tells bytes read and any truncation."""

    def __init__(
        self, path: Path, shard: Shard, *, seek: Callable[[int, int], Iterator[bytes]] | None = None
    ):
        """``seek(offset, block)`` reads the decompressed stream from ``offset`` (a compressed file's block
        index); without it a compressed file is decompressed from its start up to the shard."""
        self.path = Path(path)
        self.shard = shard
        seek_from = max(0, shard.start - 1) if shard.kind == "bytes" else 0
        self.stream = ChunkStream(self.path, start=seek_from, seek=seek)

    def __iter__(self) -> Iterator[ShardLine]:
        shard = self.shard
        lines = iter_lines(self.stream, first_offset=self.stream.start)
        if shard.kind == "bytes":
            yield from self._bytes_shard(lines)
            return
        for index, (offset, data) in enumerate(lines):
            if shard.kind == "lines":
                if index < shard.start:
                    continue
                if shard.end is not None and index >= shard.end:
                    return
            yield ShardLine(index + 1, offset, data)

    def _bytes_shard(self, lines: Iterator[tuple[int, bytes]]) -> Iterator[ShardLine]:
        shard = self.shard
        known_line_numbers = shard.start == 0
        for index, (offset, data) in enumerate(lines):
            if offset < shard.start:
                # We started one byte early: this is the end of the previous shard's last line.
                continue
            if shard.end is not None and offset >= shard.end:
                return
            yield ShardLine(index + 1 if known_line_numbers else None, offset, data)
