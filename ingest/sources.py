"""Open dump files of any compression as one stream of decompressed bytes, read ahead in a thread.

Dumps come as bz2 (often multistream), gzip or plain files. The compression is detected from
the first bytes, not the file name. Decompression runs in a background thread: both zlib and
bz2 release the GIL, so on two cores parsing and decompression overlap instead of adding up.
A truncated archive does not raise in the middle of a run: the stream ends early and reports
where (``ChunkStream.truncated``), so the caller can keep everything before the cut.
"""

from __future__ import annotations

import bz2
import gzip
import hashlib
import queue
import threading
import zlib
from collections.abc import Callable, Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import BinaryIO

CHUNK_BYTES = 1 << 20


def detect_compression(path: Path) -> str:
    """'bz2', 'gzip' or 'none', from the file's magic bytes."""
    with open(path, "rb") as f:
        head = f.read(3)
    if head[:3] == b"BZh":
        return "bz2"
    if head[:2] == b"\x1f\x8b":
        return "gzip"
    return "none"


def open_decompressed(path: Path) -> BinaryIO:
    """A file object of the decompressed bytes, for readers that want one (e.g. text wrappers)."""
    kind = detect_compression(path)
    if kind == "bz2":
        return bz2.open(path, "rb")  # type: ignore[return-value]
    if kind == "gzip":
        return gzip.open(path, "rb")  # type: ignore[return-value]
    return open(path, "rb")


def _new_decompressor(kind: str) -> bz2.BZ2Decompressor | zlib._Decompress:
    return bz2.BZ2Decompressor() if kind == "bz2" else zlib.decompressobj(wbits=31)


def decompressed_blocks(
    path: Path, raw_block: int = 1 << 20, start: int = 0, raw_digest: hashlib._Hash | None = None
) -> Iterator[bytes]:
    """Decompressed bytes of a bz2/gzip/plain file from offset ``start``, across concatenated streams.

    A plain file seeks to ``start``; a compressed one is decompressed up to it and the bytes
    before it are dropped. ``raw_digest`` is updated with every raw byte read (from ``start`` on,
    for a plain file), which checksums the input in the same pass.

    Driving the decompressor directly (instead of through ``bz2.open``) means a truncated
    archive still yields every byte it holds before raising ``EOFError``: a buffered reader
    would drop the last partly filled buffer along with the exception.
    """
    kind = detect_compression(path)
    with open(path, "rb") as f:
        if kind == "none":
            f.seek(start)
            while block := f.read(raw_block):
                if raw_digest is not None:
                    raw_digest.update(block)
                yield block
            return
        decompressor = _new_decompressor(kind)
        to_skip = start
        while True:
            block = f.read(raw_block)
            if not block:
                break
            if raw_digest is not None:
                raw_digest.update(block)
            while block:
                out = decompressor.decompress(block)
                if to_skip and out:
                    dropped = min(to_skip, len(out))
                    out, to_skip = out[dropped:], to_skip - dropped
                if out:
                    yield out
                if not decompressor.eof:
                    break
                # a stream ended: the next one (multistream bz2, multi-member gzip) starts in unused_data
                block = decompressor.unused_data
                decompressor = _new_decompressor(kind)
                if not block:
                    block = f.read(raw_block)
                    if not block:
                        return
                    if raw_digest is not None:
                        raw_digest.update(block)
        if not decompressor.eof:
            raise EOFError("compressed file ended before the end-of-stream marker was reached")


def file_sha256(path: Path, block: int = 1 << 20, tick: Callable[[int], object] | None = None) -> str:
    """Checksum of a file (a raw input, to skip unchanged shards; an index file, to find damage);
    ``tick`` gets the bytes read, for a progress bar."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        while data := f.read(block):
            digest.update(data)
            if tick is not None:
                tick(len(data))
    return digest.hexdigest()


@dataclass
class Truncation:
    """Where and why a compressed stream ended before its end-of-stream marker."""

    byte_offset: int
    error: str


class ChunkStream:
    """Decompressed chunks of a file, read ahead by a background thread.

    ``start`` skips that many decompressed bytes (seeking where the file is not compressed, or where
    ``seek(start, chunk_bytes)`` yields the decompressed bytes from ``start`` on, e.g. from a block index).
    Chunks are as large as one raw block decompresses to.
    Iterating yields ``bytes`` chunks; after the iteration ``truncated`` tells whether the
    archive broke off, and ``bytes_read`` how many decompressed bytes were delivered.
    """

    def __init__(
        self,
        path: Path,
        *,
        start: int = 0,
        chunk_bytes: int = CHUNK_BYTES,
        prefetch: int = 4,
        seek: Callable[[int, int], Iterator[bytes]] | None = None,
    ):
        if start < 0:
            raise ValueError(f"start must be >= 0, got {start}")
        self.path = Path(path)
        self.start = start
        self.chunk_bytes = chunk_bytes
        self._seek = seek if start > 0 else None
        self.truncated: Truncation | None = None
        self.bytes_read = 0
        self._digest = hashlib.sha256() if start == 0 else None
        self._complete = False
        self._queue: queue.Queue[bytes | BaseException | None] = queue.Queue(maxsize=prefetch)
        self._stop = threading.Event()

    def _produce(self) -> None:
        offset = self.start
        try:
            if self._seek is not None:
                blocks = self._seek(self.start, self.chunk_bytes)
            else:
                blocks = decompressed_blocks(self.path, self.chunk_bytes, self.start, self._digest)
            for block in blocks:
                if self._stop.is_set():
                    break
                offset += len(block)
                self._queue.put(block)
            else:
                self._complete = True
        except (EOFError, OSError, ValueError, zlib.error) as exc:
            # A cut or corrupt archive: keep what came before, report where it broke.
            self.truncated = Truncation(offset, f"{type(exc).__name__}: {exc}")
        except BaseException as exc:  # surfaced to the consumer, never swallowed
            self._queue.put(exc)
        finally:
            self._queue.put(None)

    @property
    def sha256(self) -> str | None:
        """Checksum of the whole raw file, when this stream read all of it (else None)."""
        return self._digest.hexdigest() if self._complete and self._digest is not None else None

    def __iter__(self) -> Iterator[bytes]:
        thread = threading.Thread(target=self._produce, name=f"read:{self.path.name}", daemon=True)
        thread.start()
        try:
            while True:
                item = self._queue.get()
                if item is None:
                    break
                if isinstance(item, BaseException):
                    raise item
                self.bytes_read += len(item)
                yield item
        finally:
            self._stop.set()
            while thread.is_alive():  # unblock a producer waiting on a full queue
                try:
                    self._queue.get_nowait()
                except queue.Empty:
                    thread.join(0.05)


def iter_lines(chunks: ChunkStream, first_offset: int = 0) -> Iterator[tuple[int, bytes]]:
    """(decompressed byte offset, line without its newline) for every line of the stream.

    A last line without a newline (a cut file) is yielded too: it is the caller's to judge.
    """
    offset = first_offset
    tail = b""
    for chunk in chunks:
        parts = chunk.split(b"\n")
        parts[0] = tail + parts[0]
        tail = parts.pop()
        for line in parts:
            yield offset, line
            offset += len(line) + 1
    if tail:
        yield offset, tail
