"""Dump sources given as ``s3://`` URLs: streamed once to local scratch under the ingest folder, then
ingested like any local dump.

Why a local copy rather than parsing straight from the object stream: the ingest needs a seekable file.
A Wikidata dump split into byte shards is read from the middle, through a block index of the compressed
file (``ingest.seek_index``), by several workers at once; the OTT-QA reader inflates its files with
rapidgzip and reads the tables file twice; and every job checks the file's size and mtime before and after
it runs. Streaming each reader from S3 would re-download the file per shard and per pass. So each object
is downloaded once, chunk by chunk (``RemoteRoot.download``: one chunk of memory), and hashed on the way:
that SHA-256 goes into the ingest's checksum cache, so planning never reads the file again and every
dump is still hashed exactly once. The copy is kept under ``<ingest>/_inputs/remote/`` (the shared
state folder, so every worker sees it) and reused while the object's size and modification time, and
the copy's own, are unchanged; copies of URLs no longer given are deleted, since dumps are large. A copy
takes its object's modification time, so copies made on different workers (a rebuild whose state lives in
object storage: each ingest worker stages its own, ``index.state_exchange``) have the same size and mtime,
the stamp a planned job checks.
Costs: local disk for the compressed dumps, as for dumps on a mounted folder.
"""

from __future__ import annotations

import hashlib
import logging
import os
import shutil
from dataclasses import dataclass, field
from pathlib import Path, PurePosixPath

import pyarrow.fs as pafs
from pydantic import BaseModel

from ingest.checksums import ChecksumCache, FileStamp
from ingest.files import temporary_path
from ingest.object_store import RemoteError, RemoteRoot
from ingest.ottqa import PASSAGE_FILE, TABLE_FILE
from ingest.pipeline import IngestInputs
from ingest.shard_plan import inputs_dir
from schemas.settings import RemoteSettings

log = logging.getLogger(__name__)

REMOTE = "remote"
RECORD_SUFFIX = ".source.json"


class StagedFile(BaseModel):
    """What a local copy was made from: the object as it was, and the copy as it was written."""

    url: str
    remote_size: int
    remote_mtime_ns: int | None
    local: FileStamp
    sha256: str


@dataclass
class StagedInputs:
    """The inputs with every URL replaced by its local copy, and which URLs were downloaded this time."""

    inputs: IngestInputs
    downloaded: list[str] = field(default_factory=list)
    reused: list[str] = field(default_factory=list)


def staging_dir(out_dir: Path) -> Path:
    return inputs_dir(out_dir) / REMOTE


def stage_inputs(
    wikidata: list[str | Path],
    wikipedia: list[str | Path],
    ottqa: str | Path | None,
    *,
    out_dir: Path,
    settings: RemoteSettings,
    prune: bool = True,
) -> StagedInputs:
    """``IngestInputs`` of local paths: ``s3://`` sources are staged under ``out_dir``, others kept as they
    are. An OTT-QA source URL names the release folder (its ``tables.json.gz`` and ``passages.json.gz``).
    ``prune`` deletes the copies of URLs not given (False: a worker staging only the dump of its job)."""
    staged = StagedInputs(IngestInputs())
    folder, cache = staging_dir(out_dir), ChecksumCache(inputs_dir(out_dir) / "checksums")
    used: set[Path] = set()

    def local(source: str | Path, names: tuple[str, ...] = ()) -> Path:
        if not str(source).startswith("s3://"):
            return Path(source)
        url = str(source).rstrip("/")
        target = copy_path(url, out_dir)
        used.add(target.parent)
        for name in names or ("",):
            copied = _stage_file(url, name, target / name if name else target, settings, cache)
            (staged.downloaded if copied else staged.reused).append(f"{url}/{name}" if name else url)
        return target

    staged.inputs.wikidata = [local(s) for s in wikidata]
    staged.inputs.wikipedia = [local(s) for s in wikipedia]
    staged.inputs.ottqa = local(ottqa, (TABLE_FILE, PASSAGE_FILE)) if ottqa is not None else None
    if prune and folder.is_dir():
        for stale in set(folder.iterdir()) - used:  # copies of URLs no longer given
            shutil.rmtree(stale, ignore_errors=True)
            log.info("deleted the local copy %s of a dump no longer given", stale)
    return staged


def copy_path(url: str, out_dir: Path) -> Path:
    """Where the copy of the dump (or OTT-QA folder) at ``url`` is kept under the ingest folder."""
    url = url.rstrip("/")
    home = staging_dir(out_dir) / hashlib.blake2b(url.encode(), digest_size=8).hexdigest()
    return home / PurePosixPath(url).name


def _stage_file(url: str, name: str, target: Path, settings: RemoteSettings, cache: ChecksumCache) -> bool:
    """Download ``url`` (or the file ``name`` in the folder ``url``) to ``target`` unless the copy there is
    still that object's; True when it downloaded. The checksum of the bytes is saved in ``cache``."""
    remote = RemoteRoot.open(url, settings)
    info = remote.info(name)
    full = f"{url}/{name}" if name else url
    if info.type != pafs.FileType.File:
        raise FileNotFoundError(
            f"dump not found: {full} (check the URL, the bucket and HQA_REMOTE__ENDPOINT)"
        )
    record_path = target.with_name(f".{target.name}{RECORD_SUFFIX}")
    if _still_valid(record_path, target, full, info.size, info.mtime_ns, cache):
        return False
    target.parent.mkdir(parents=True, exist_ok=True)
    tmp = temporary_path(target)
    try:
        moved = remote.download(name, tmp)
        if moved.size != info.size:
            raise RemoteError(f"{full} changed while it was downloaded: run again once it is complete")
        if info.mtime_ns is not None:  # the same stamp on every worker's copy (see the module's docstring)
            os.utime(tmp, ns=(info.mtime_ns, info.mtime_ns))
        os.replace(tmp, target)
    finally:
        tmp.unlink(missing_ok=True)
    cache.remember(target, moved.sha256)
    record = StagedFile(
        url=full,
        remote_size=info.size,
        remote_mtime_ns=info.mtime_ns,
        local=FileStamp.of(target),
        sha256=moved.sha256,
    )
    record_path.write_text(record.model_dump_json())
    log.info("downloaded %s to %s (%d bytes)", full, target, moved.size)
    return True


def _still_valid(
    record_path: Path, target: Path, url: str, size: int, mtime_ns: int | None, cache: ChecksumCache
) -> bool:
    """The local copy is the object as it is now, untouched since, and its checksum is still saved."""
    if not record_path.is_file() or not target.is_file():
        return False
    try:
        record = StagedFile.model_validate_json(record_path.read_text())
    except ValueError:
        return False
    same_object = (record.url, record.remote_size, record.remote_mtime_ns) == (url, size, mtime_ns)
    return same_object and record.local == FileStamp.of(target) and cache.saved(target) == record.sha256
