"""Input checksums computed once per file and saved, so planning a rebuild does not re-read every dump.

Incremental ingest skips a shard whose input checksum is unchanged, so every run needs each dump's
checksum — and hashing a 100 GB dump takes minutes. The checksum is saved beside the ingest output, keyed
by the file's path, size and modification time: a file that still has all three is not read again (a
changed dump changes its size or mtime; ``touch`` forces a re-hash). Files missing a saved checksum are
hashed in parallel threads (hashlib releases the GIL), one file per thread.
"""

from __future__ import annotations

import hashlib
import logging
import os
from collections.abc import Iterable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

from pydantic import BaseModel

from ingest.sources import file_sha256

log = logging.getLogger(__name__)


class FileStamp(BaseModel):
    """What identifies one version of a file without reading it."""

    path: str
    size: int
    mtime_ns: int

    @classmethod
    def of(cls, path: Path) -> FileStamp:
        stat = Path(path).stat()
        return cls(path=str(Path(path).resolve()), size=stat.st_size, mtime_ns=stat.st_mtime_ns)


class FileChecksum(BaseModel):
    stamp: FileStamp
    sha256: str


class ChecksumCache:
    """Saved checksums in ``folder``, one small JSON file per input path."""

    def __init__(self, folder: Path):
        self.folder = Path(folder)

    def _entry(self, stamp: FileStamp) -> Path:
        key = hashlib.blake2b(stamp.path.encode(), digest_size=16).hexdigest()
        return self.folder / f"{key}.json"

    def saved(self, path: Path) -> str | None:
        """The saved checksum of ``path`` when its size and mtime are still those it was hashed at."""
        stamp = FileStamp.of(path)
        entry = self._entry(stamp)
        if not entry.is_file():
            return None
        try:
            record = FileChecksum.model_validate_json(entry.read_text())
        except ValueError:
            return None  # a damaged entry is hashed again
        return record.sha256 if record.stamp == stamp else None

    def sha256(self, path: Path) -> str:
        """The checksum of ``path``: the saved one, or computed now and saved."""
        if (saved := self.saved(path)) is not None:
            return saved
        before = FileStamp.of(path)
        digest = file_sha256(Path(path))
        if FileStamp.of(path) != before:
            raise RuntimeError(f"{path} changed while it was checksummed: run again once it is complete")
        self._save(before, digest)
        return digest

    def remember(self, path: Path, sha256: str) -> None:
        """Save a checksum computed while the file was written (a dump downloaded and hashed on the way),
        so planning does not read the file again."""
        self._save(FileStamp.of(path), sha256)

    def _save(self, stamp: FileStamp, sha256: str) -> None:
        self.folder.mkdir(parents=True, exist_ok=True)
        entry = self._entry(stamp)
        tmp = entry.with_name(f".{entry.name}.{os.getpid()}.tmp")
        tmp.write_text(FileChecksum(stamp=stamp, sha256=sha256).model_dump_json())
        tmp.replace(entry)

    def sha256_many(self, paths: Iterable[Path], *, threads: int = 1) -> dict[Path, str]:
        """Checksums of ``paths``; those not saved are hashed ``threads`` files at a time."""
        paths = list(dict.fromkeys(Path(p) for p in paths))
        if threads <= 1 or len(paths) <= 1:
            return {p: self.sha256(p) for p in paths}
        with ThreadPoolExecutor(min(threads, len(paths)), thread_name_prefix="sha256") as pool:
            return dict(zip(paths, pool.map(self.sha256, paths), strict=True))
