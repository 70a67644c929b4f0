"""Files in object storage (``s3://bucket/key``) or a local folder (``file:///abs/path``), through pyarrow.

One small interface for the two places a remote root can be: an S3 bucket (AWS, or an S3-compatible
server such as MinIO or moto, named by its endpoint) and a plain folder, which lets everything above be
exercised and used without a server. pyarrow is a dependency already, and its ``S3FileSystem`` streams
(multipart uploads, ranged reads) without pulling in boto3 or s3fs. Credentials come from the standard
AWS sources (environment, ``~/.aws``), never from our settings.

Files move in ``chunk_bytes`` pieces, hashed (SHA-256) on the way, so a file of any size costs one chunk
of memory and one pass. Every stream is opened with ``compression=None``: pyarrow otherwise guesses a codec
from the name and would inflate a ``.bz2`` dump on download (or deflate a ``.gz`` on upload).

This module sits in ``ingest`` (the lowest layer that reads files) because dumps are read from object
storage too; the index version store builds on it.
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from urllib.parse import urlparse

import pyarrow.fs as pafs

from ingest.files import temporary_path
from schemas.settings import RemoteSettings

REMOTE_SCHEMES = ("s3://", "file://")


class RemoteError(RuntimeError):
    """An object store that cannot be reached or lacks what was asked for (the message says which)."""


def is_remote(source: str | Path) -> bool:
    """True for an ``s3://`` or ``file://`` URL, False for a plain local path."""
    return str(source).startswith(REMOTE_SCHEMES)


@dataclass(frozen=True)
class Moved:
    """What one file transfer moved: its size and the SHA-256 of the bytes that went through."""

    size: int
    sha256: str


@dataclass(frozen=True)
class StoredObject:
    """One object as a listing saw it: its key under the root, its size, and when it was last written
    (an S3 object's LastModified, a file's mtime)."""

    key: str
    size: int
    mtime_ns: int


@dataclass(frozen=True)
class RemoteRoot:
    """A folder in an object store: a pyarrow file system and the path of the folder inside it."""

    url: str
    fs: pafs.FileSystem
    base: str
    chunk_bytes: int = 8 << 20

    @classmethod
    def open(cls, url: str, settings: RemoteSettings | None = None) -> RemoteRoot:
        """The root named by ``url`` (``s3://bucket/prefix`` or ``file:///abs/path``); ``settings`` gives the
        S3 endpoint, region and chunk size (the url in it is not used: callers pass the one they mean)."""
        settings = settings or RemoteSettings()
        url = url.rstrip("/")
        parsed = urlparse(url)
        chunk = settings.chunk_mb << 20
        if parsed.scheme == "file":
            if parsed.netloc or not parsed.path.startswith("/"):
                raise ValueError(f"{url!r}: a file URL needs an absolute path, file:///abs/path")
            return cls(url, pafs.LocalFileSystem(), parsed.path.rstrip("/") or "/", chunk)
        if parsed.scheme == "s3":
            if not parsed.netloc:
                raise ValueError(f"{url!r}: an S3 URL names its bucket, s3://bucket/prefix")
            return cls(url, _s3(settings), f"{parsed.netloc}{parsed.path}".rstrip("/"), chunk)
        raise ValueError(f"{url!r} is not an s3:// or file:/// URL")

    def path(self, key: str) -> str:
        """The file system path of ``key`` (a '/'-separated name relative to this root)."""
        return f"{self.base}/{key.lstrip('/')}" if key else self.base

    def child(self, key: str) -> RemoteRoot:
        return RemoteRoot(f"{self.url}/{key}", self.fs, self.path(key), self.chunk_bytes)

    def info(self, key: str) -> pafs.FileInfo:
        return self.fs.get_file_info(self.path(key))

    def exists(self, key: str) -> bool:
        return self.info(key).type == pafs.FileType.File

    def objects(self, folder: str) -> list[StoredObject]:
        """Every object under ``folder``, at any depth (none when the folder is missing), in key order."""
        selector = pafs.FileSelector(self.path(folder), recursive=True, allow_not_found=True)
        infos = self.fs.get_file_info(selector)
        found = (
            StoredObject(i.path.removeprefix(self.base + "/"), i.size, i.mtime_ns)
            for i in infos
            if i.type == pafs.FileType.File
        )
        return sorted(found, key=lambda o: o.key)

    def delete(self, key: str) -> bool:
        """Delete one object; False when it was gone already."""
        try:
            self.fs.delete_file(self.path(key))
        except FileNotFoundError:
            return False
        return True

    def delete_folder(self, key: str) -> None:
        """Delete ``key`` and everything under it (nothing when it is missing)."""
        if self.fs.get_file_info(self.path(key)).type != pafs.FileType.NotFound:
            self.fs.delete_dir(self.path(key))

    def read_bytes(self, key: str) -> bytes:
        """A small object's whole content (pointers, file lists); a missing one raises ``RemoteError``."""
        try:
            with self.fs.open_input_stream(self.path(key), compression=None) as f:
                return f.read()
        except FileNotFoundError:
            raise RemoteError(f"{self.url}/{key} does not exist") from None

    def write_bytes(self, key: str, data: bytes) -> None:
        """Replace a small object at once: a reader sees the old content or the new, never a mix.

        An S3 object only appears when its upload completes; a local file is written beside the target
        and renamed over it.
        """
        target = self.path(key)
        if isinstance(self.fs, pafs.LocalFileSystem):
            Path(target).parent.mkdir(parents=True, exist_ok=True)
            tmp = temporary_path(Path(target))
            try:
                tmp.write_bytes(data)
                os.replace(tmp, target)
            finally:
                tmp.unlink(missing_ok=True)
            return
        with self.fs.open_output_stream(target, compression=None) as out:
            out.write(data)

    def upload(self, local: Path, key: str, tick: Callable[[int], object] | None = None) -> Moved:
        """Stream ``local`` to ``key``, chunk by chunk; returns the size and SHA-256 of what was sent."""
        target = self.path(key)
        if isinstance(self.fs, pafs.LocalFileSystem):
            Path(target).parent.mkdir(parents=True, exist_ok=True)
        with open(local, "rb") as src, self.fs.open_output_stream(target, compression=None) as out:
            return self._copy(src, out, tick)

    def download(self, key: str, local: Path, tick: Callable[[int], object] | None = None) -> Moved:
        """Stream ``key`` into the local file ``local`` (replaced); returns the size and SHA-256 of what came.

        The caller checks them against what it expected: a short or changed object is its error to name.
        """
        Path(local).parent.mkdir(parents=True, exist_ok=True)
        try:
            src = self.fs.open_input_stream(self.path(key), compression=None)
        except FileNotFoundError:
            raise RemoteError(f"{self.url}/{key} does not exist") from None
        with src, open(local, "wb") as out:
            return self._copy(src, out, tick)

    def _copy(self, src: Any, out: Any, tick: Callable[[int], object] | None) -> Moved:
        """Copy ``src`` to ``out`` a chunk at a time, hashing on the way (one pass over the bytes)."""
        digest, size = hashlib.sha256(), 0
        while chunk := src.read(self.chunk_bytes):
            digest.update(chunk)
            out.write(chunk)
            size += len(chunk)
            if tick is not None:
                tick(len(chunk))
        return Moved(size, digest.hexdigest())


def _s3(settings: RemoteSettings) -> pafs.S3FileSystem:
    """An S3 client for the settings' endpoint (AWS when None) and region; credentials from the standard
    AWS chain. A plain-http endpoint (a local test server) sets the scheme to match."""
    options: dict = {"region": settings.region}
    if settings.endpoint:
        endpoint = urlparse(settings.endpoint)
        options |= {"endpoint_override": endpoint.netloc, "scheme": endpoint.scheme}
    return pafs.S3FileSystem(**options)
