"""Versioned index folders with an atomic ``current`` pointer.

A build writes into ``<root>/.building-<version>``, renames it to ``<root>/<version>`` when complete,
and then replaces the ``current`` symlink in one ``rename`` (atomic on POSIX). A reader resolves
``current`` once, when it opens, and keeps reading that folder, so a rebuild never changes an open
reader's data under it; old versions are pruned to a configured number, never the current one.
"""

from __future__ import annotations

import json
import os
import shutil
from datetime import UTC, datetime
from pathlib import Path

from schemas.build import Manifest

CURRENT = "current"
MANIFEST = "manifest.json"
BUILDING_PREFIX = ".building-"


class VersionStore:
    def __init__(self, root: Path):
        self.root = Path(root)

    def new_version_name(self) -> str:
        return self.version_name(datetime.now(UTC))

    @staticmethod
    def version_name(when: datetime) -> str:
        """Version names sort by time: 'v20261122T031500123456Z'."""
        return f"v{when.astimezone(UTC).strftime('%Y%m%dT%H%M%S%fZ')}"

    def start(self, version: str) -> Path:
        """The folder a build writes into; invisible to readers until ``publish``."""
        path = self.root / f"{BUILDING_PREFIX}{version}"
        path.mkdir(parents=True, exist_ok=False)
        return path

    def publish(self, building: Path, manifest: Manifest) -> Path:
        """Write the manifest, move the folder into place and point ``current`` at it, atomically."""
        (building / MANIFEST).write_text(manifest.model_dump_json(indent=2))
        final = self.root / manifest.version
        os.replace(building, final)
        link_tmp = self.root / f".{CURRENT}.{os.getpid()}"
        if link_tmp.is_symlink() or link_tmp.exists():
            link_tmp.unlink()
        link_tmp.symlink_to(manifest.version)  # relative: the root folder can move
        os.replace(link_tmp, self.root / CURRENT)
        return final

    def abandon(self, building: Path) -> None:
        shutil.rmtree(building, ignore_errors=True)

    def current(self) -> Path | None:
        """The version folder ``current`` points to now (resolved), or None before the first build."""
        link = self.root / CURRENT
        if not link.is_symlink():
            return None
        return (self.root / os.readlink(link)).resolve()

    def manifest(self, version_dir: Path) -> Manifest:
        return Manifest.model_validate(json.loads((Path(version_dir) / MANIFEST).read_text()))

    def versions(self) -> list[Path]:
        """Published version folders, oldest first."""
        if not self.root.is_dir():
            return []
        return sorted(
            p for p in self.root.iterdir() if not p.is_symlink() and p.is_dir() and (p / MANIFEST).is_file()
        )

    def prune(self, keep: int) -> list[Path]:
        """Delete all but the ``keep`` newest versions (never the current one) and stale build folders."""
        if keep < 1:
            raise ValueError(f"keep must be at least 1, got {keep}")
        current = self.current()
        removed = []
        for path in self.versions()[:-keep]:
            if current is not None and path.resolve() == current:
                continue
            shutil.rmtree(path)
            removed.append(path)
        for stale in self.root.glob(f"{BUILDING_PREFIX}*"):
            if stale.stat().st_mtime < datetime.now(UTC).timestamp() - 24 * 3600:
                shutil.rmtree(stale, ignore_errors=True)
                removed.append(stale)
        return removed


def resolve_index_dir(path: Path) -> Path:
    """An index folder a reader can open: a version folder itself, or a root whose ``current`` is set."""
    path = Path(path)
    if (path / MANIFEST).is_file():
        return path.resolve()
    current = VersionStore(path).current()
    if current is None:
        raise FileNotFoundError(f"{path} holds no published index version: run `hqa build` first")
    return current


def link_tree(src: Path, dst: Path) -> None:
    """Reuse a finished stage's output from an older version: hard links, no copy, no extra space."""
    shutil.copytree(src, dst, copy_function=os.link)
