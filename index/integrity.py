"""What a published index version holds, file by file, and the check that it still holds it.

The build records every file's size in the version's manifest when it publishes; ``IndexReader`` checks
them when it opens the version. A file cut short or deleted (a disk that filled while the folder was
copied, a partial sync, a stray ``rm``) is then named at open, with what to do, instead of surfacing as a
Kùzu, Lance or Tantivy error in the middle of a query. The check costs one ``stat`` per file (49 files for
the sample index). It cannot see damage that keeps a file's size (overwritten bytes): Kùzu can crash the
process on such a file (SIGSEGV when it opens it), Lance can serve the damaged vectors silently. For that
the manifest also keeps every file's SHA-256, checked on demand (``hqa verify``, ``verify_version``): a
hash of every byte is too slow for each open of a large index, and right for a scheduled check.

A rebuild checks sizes and checksums before it hard-links an unchanged stage from the current version,
so a damaged stage is built again rather than carried into the next version.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from pathlib import Path

from ingest.sources import file_sha256

MANIFEST = "manifest.json"  # index.versions.MANIFEST: written after the file list, so not in it
PINS = ".pins"  # index.versions.PINS: batch jobs' pins come and go after publishing
SKIPPED_SUFFIXES = (".lock",)
"""Lock files (Tantivy's, the readers' lease): empty, created and recreated by whoever opens the folder."""
SHOWN_PROBLEMS = 3


class IndexDamaged(RuntimeError):
    """An index version's files are not what its build published, or a library cannot open them."""


def file_sizes(version_dir: Path) -> dict[str, int]:
    """Every file under ``version_dir`` (relative path → bytes), the manifest and lock files left out."""
    root = Path(version_dir)
    return {
        str(p.relative_to(root)): p.stat().st_size
        for p in sorted(root.rglob("*"))
        if p.is_file()
        and not p.is_symlink()
        and not p.name.endswith(SKIPPED_SUFFIXES)
        and p.name != MANIFEST
        and PINS not in p.relative_to(root).parts
    }


def file_checksums(version_dir: Path, names: Iterable[str]) -> dict[str, str]:
    """SHA-256 of each of ``names`` (paths relative to ``version_dir``)."""
    return {name: file_sha256(Path(version_dir) / name) for name in names}


def damaged_files(
    version_dir: Path,
    files: dict[str, int],
    under: Iterable[str] | None = None,
    checksums: dict[str, str] | None = None,
    tick: Callable[[int], object] | None = None,
) -> list[str]:
    """What differs from the published ``files`` (all, or only ``under``: those files and the files in
    those folders): each missing file, or one whose size changed, with the sizes; with ``checksums``,
    also each file of the right size whose SHA-256 changed (``tick`` gets the bytes hashed)."""
    parts = [u.rstrip("/") for u in under] if under is not None else None
    problems = []
    for name, size in files.items():
        if parts is not None and not any(name == u or name.startswith(f"{u}/") for u in parts):
            continue
        path = Path(version_dir) / name
        try:
            actual = path.stat().st_size
        except FileNotFoundError:
            problems.append(f"{name} is missing")
            continue
        if actual != size:
            problems.append(f"{name} has {actual:,} bytes, {size:,} when published")
        elif checksums and name in checksums and file_sha256(path, tick=tick) != checksums[name]:
            problems.append(f"{name} has other bytes than when published (its SHA-256 changed)")
    return problems


def repair_hint(version_dir: Path) -> str:
    """What to do about a damaged version: rebuild it, or serve an older one meanwhile."""
    version_dir = Path(version_dir)
    older = sorted(
        p.name
        for p in version_dir.parent.iterdir()
        if not p.name.startswith(".")  # a build being published, a version being pruned
        and p.is_dir()
        and not p.is_symlink()
        and (p / MANIFEST).is_file()
        and p.name < version_dir.name
    )
    serve = (
        f"to serve an older version meanwhile, open its folder (e.g. `hqa ask --index "
        f"{version_dir.parent / older[-1]}`; kept: {', '.join(older)})"
        if older
        else "no older version is kept to serve meanwhile"
    )
    return f"rebuild it with `hqa build` (it builds the damaged parts again); {serve}"


def check_version(version_dir: Path, files: dict[str, int]) -> None:
    """Raise ``IndexDamaged`` naming the files that differ from the published ``files`` (a version
    published before file lists were recorded has none: nothing to check)."""
    problems = damaged_files(version_dir, files)
    if problems:
        shown = "; ".join(problems[:SHOWN_PROBLEMS])
        more = f" (and {len(problems) - SHOWN_PROBLEMS} more)" if len(problems) > SHOWN_PROBLEMS else ""
        raise IndexDamaged(
            f"index version {version_dir} is damaged: {shown}{more}; {repair_hint(version_dir)}"
        )


def unreadable(version_dir: Path, part: str, exc: Exception) -> IndexDamaged:
    """The error for a part of a version that a library refused to open (damage the sizes did not show,
    or a version published before they were recorded)."""
    path = Path(version_dir) / part
    return IndexDamaged(
        f"{path} cannot be opened ({type(exc).__name__}: {str(exc)[:300]}); the index version may be "
        f"damaged: {repair_hint(version_dir)}"
    )
