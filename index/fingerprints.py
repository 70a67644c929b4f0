"""Fingerprints that decide whether a build stage can reuse the previous version's output.

A stage's fingerprint hashes the exact bytes of its inputs and its settings, plus a format number
bumped by hand whenever the code changes what the stage writes. Equal fingerprint, equal output.
"""

from __future__ import annotations

import hashlib
import json
from pathlib import Path
from typing import Any

CHUNK = 1 << 20


def hash_files(paths: list[Path], root: Path) -> str:
    """Hash of the names (relative to ``root``) and contents of the files, in sorted order."""
    digest = hashlib.blake2b(digest_size=16)
    for path in sorted(paths):
        digest.update(str(Path(path).relative_to(root)).encode() + b"\0")
        with open(path, "rb") as f:
            while chunk := f.read(CHUNK):
                digest.update(chunk)
    return digest.hexdigest()


def combine(*parts: Any) -> str:
    """Hash of fingerprints and JSON-able settings."""
    payload = json.dumps(parts, sort_keys=True, default=str).encode()
    return hashlib.blake2b(payload, digest_size=16).hexdigest()
