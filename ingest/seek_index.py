"""Random access into a compressed dump by decompressed byte offset, from a block index built once per file.

A byte-range shard of a compressed dump owns the lines that start in its range of the *decompressed*
stream. Reaching that range by decompressing everything before it would make N shards cost N²/2
decompressions; instead the file's block index — bz2 block boundaries from ``indexed_bzip2``, gzip
checkpoints with their 32 KiB windows from ``rapidgzip`` — maps decompressed offsets to places in the
compressed file, so a shard decodes its own part (plus at most one block or checkpoint interval before it).

Building the index decodes the file once (with as many threads as the caller gives), so it is done once per
file and saved under the ingest folder, keyed by the file's checksum: every shard job, on any worker that
shares the folder, loads it instead of building it again. An archive that does not decode to its last byte
(cut, or with trailing garbage) gets no index: it is read whole by the plain reader, which keeps every line
before the damage and quarantines the rest with its position.
"""

from __future__ import annotations

import json
import logging
import os
import time
from collections.abc import Iterator
from pathlib import Path
from typing import BinaryIO, Literal

import indexed_bzip2
import pyarrow as pa
import pyarrow.parquet as pq
import rapidgzip
from pydantic import BaseModel, Field

from ingest.sources import detect_compression

log = logging.getLogger(__name__)

GZIP_CHECKPOINT_BYTES = 4 << 20  # compressed bytes between gzip checkpoints (rapidgzip's chunk size)
_BZ2_SCHEMA = pa.schema([("compressed_bit", pa.int64()), ("decompressed_byte", pa.int64())])


class UnindexableArchive(ValueError):
    """The archive does not decode to its end (cut, corrupt, trailing garbage): read it whole instead."""


class SeekIndex(BaseModel):
    """Where a compressed file's blocks start, saved beside the ingest output (one per file checksum)."""

    kind: Literal["bz2", "gzip"]
    sha256: str = Field(description="checksum of the compressed file the index belongs to")
    compressed_bytes: int
    decompressed_bytes: int = Field(description="size of the whole decompressed stream")
    checkpoints: int = Field(description="places decoding can start from")
    index_file: str = Field(description="file name of the index data, in the same folder")
    build_seconds: float

    def meta_path(self, folder: Path) -> Path:
        return Path(folder) / meta_name(self.sha256)


def meta_name(sha256: str) -> str:
    return f"{sha256}.json"


def load_seek_index(folder: Path, sha256: str) -> SeekIndex | None:
    """The saved index of the file with this checksum, if one was built and its data file is there."""
    meta = Path(folder) / meta_name(sha256)
    if not meta.is_file():
        return None
    index = SeekIndex.model_validate_json(meta.read_text())
    return index if (Path(folder) / index.index_file).is_file() else None


def seek_index(source: Path, sha256: str, folder: Path, *, threads: int = 1) -> SeekIndex | None:
    """The index of ``source`` (checksum ``sha256``): loaded when saved, else built once and saved.

    None for an uncompressed file (it seeks by itself). Raises ``UnindexableArchive`` for an archive
    that does not decode to its end.
    """
    kind = detect_compression(Path(source))
    if kind == "none":
        return None
    if (saved := load_seek_index(folder, sha256)) is not None:
        return saved
    Path(folder).mkdir(parents=True, exist_ok=True)
    started = time.perf_counter()
    build = _build_bz2 if kind == "bz2" else _build_gzip
    index_file, decompressed, checkpoints = build(Path(source), Path(folder), sha256, max(1, threads))
    index = SeekIndex(
        kind=kind,  # type: ignore[arg-type]
        sha256=sha256,
        compressed_bytes=Path(source).stat().st_size,
        decompressed_bytes=decompressed,
        checkpoints=checkpoints,
        index_file=index_file,
        build_seconds=round(time.perf_counter() - started, 3),
    )
    _write_atomically(index.meta_path(folder), index.model_dump_json(indent=2).encode())
    log.info(
        "%s: block index of %d checkpoints over %d decompressed bytes built in %.1f s",
        Path(source).name,
        checkpoints,
        decompressed,
        index.build_seconds,
    )
    return index


def _write_atomically(path: Path, data: bytes) -> None:
    """Two shard jobs may build the same missing index at once: each writes whole, the last rename wins."""
    tmp = path.with_name(f".{path.name}.{os.getpid()}.tmp")
    tmp.write_bytes(data)
    tmp.replace(path)


def _complete(offsets: dict[int, int], source: Path) -> None:
    """Both libraries end their offset map with the end of the last stream: short of the file's end, the
    archive was cut or carries bytes that are not a stream (rapidgzip stops there without an error)."""
    end_bit = max(offsets, default=0)
    if end_bit != source.stat().st_size * 8:
        raise UnindexableArchive(
            f"{source}: decoding stops at byte {end_bit // 8} of {source.stat().st_size}; "
            "the archive is cut or damaged, so it is read whole and the damage quarantined"
        )


def _build_bz2(source: Path, folder: Path, sha256: str, threads: int) -> tuple[str, int, int]:
    try:
        with indexed_bzip2.open(str(source), parallelization=threads) as f:
            offsets = f.block_offsets()
    except RuntimeError as exc:  # indexed_bzip2 raises a bare std::exception for a cut or corrupt stream
        raise UnindexableArchive(f"{source}: not a complete bz2 archive ({exc})") from exc
    table = pa.table(
        [pa.array(list(offsets), pa.int64()), pa.array(list(offsets.values()), pa.int64())],
        schema=_BZ2_SCHEMA,
    )
    name = f"{sha256}.bz2-blocks.parquet"
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    pq.write_table(table, tmp, compression="zstd")
    tmp.replace(folder / name)
    return name, max(offsets.values(), default=0), len(offsets)


def _build_gzip(source: Path, folder: Path, sha256: str, threads: int) -> tuple[str, int, int]:
    name = f"{sha256}.gzip-index"
    tmp = folder / f".{name}.{os.getpid()}.tmp"
    try:
        with rapidgzip.RapidgzipFile(
            str(source), parallelization=threads, chunk_size=GZIP_CHECKPOINT_BYTES
        ) as f:
            offsets = f.block_offsets()
            _complete(offsets, source)
            size = f.size()
            with open(tmp, "wb") as out:
                f.export_index(out)
    except RuntimeError as exc:
        tmp.unlink(missing_ok=True)
        raise UnindexableArchive(f"{source}: not a complete gzip archive ({exc})") from exc
    except UnindexableArchive:
        tmp.unlink(missing_ok=True)
        raise
    tmp.replace(folder / name)
    return name, size, len(offsets)


def open_at(source: Path, index: SeekIndex, folder: Path, offset: int, *, threads: int = 1) -> BinaryIO:
    """``source`` opened with its saved index and positioned at decompressed byte ``offset``; close it."""
    data = Path(folder) / index.index_file
    if index.kind == "bz2":
        table = pq.read_table(data)
        blocks = dict(
            zip(table["compressed_bit"].to_pylist(), table["decompressed_byte"].to_pylist(), strict=True)
        )
        handle = indexed_bzip2.open(str(source), parallelization=threads)
        handle.set_block_offsets(blocks)
    else:
        handle = rapidgzip.RapidgzipFile(str(source), parallelization=threads)
        with open(data, "rb") as f:
            handle.import_index(f)
    try:
        handle.seek(offset)
    except BaseException:
        handle.close()
        raise
    return handle  # type: ignore[return-value]


def read_from(
    source: Path, index: SeekIndex, folder: Path, offset: int, *, block: int = 1 << 20, threads: int = 1
) -> Iterator[bytes]:
    """Decompressed bytes of ``source`` from ``offset`` to its end, ``block`` bytes at a time."""
    handle = open_at(source, index, folder, offset, threads=threads)
    try:
        while data := handle.read(block):
            yield data
    finally:
        handle.close()


def saved_indexes(folder: Path) -> dict[str, list[Path]]:
    """Every saved index in ``folder``: checksum → its files (meta and data), for pruning."""
    found: dict[str, list[Path]] = {}
    for meta in Path(folder).glob("*.json"):
        sha = meta.stem
        try:
            data_file = json.loads(meta.read_text()).get("index_file")
        except ValueError:
            data_file = None
        found[sha] = [meta, *([Path(folder) / data_file] if data_file else [])]
    return found
