"""``hqa sync``: bring the remote's current index version to this node, or (``--push``) upload ours.

The remote is ``HQA_REMOTE__URL`` (or ``--remote``); its endpoint and region come from the settings and its
credentials from the standard AWS variables, never from a flag (flags end up in shell histories and in
the reports that record the command).
"""

from __future__ import annotations

import argparse
from pathlib import Path

from index.remote_versions import SyncError, remote_root, sync_version, upload_version
from index.versions import VersionStore
from ingest.object_store import RemoteError, RemoteRoot
from query.cli.console import console, error_console, shown
from schemas.settings import HqaSettings


def add_sync(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("sync", help="download the remote's current index version (or --push the local one)")
    p.add_argument("--remote", help="s3://bucket/prefix or file:///abs/path (default: settings remote.url)")
    p.add_argument("--index", type=Path, help="local index root (default <state_dir>/indexes)")
    p.add_argument("--keep", type=int, help="local index versions to keep (default from settings: 3)")
    p.add_argument("--push", action="store_true", help="upload the local current version instead")


def cmd_sync(args: argparse.Namespace, settings: HqaSettings) -> int:
    remote = remote_root(settings.remote, args.remote)
    if remote is None:
        error_console.print("No remote: set HQA_REMOTE__URL (or a [remote] table), or pass --remote.")
        return 2
    index_dir = Path(args.index or settings.index_dir)
    try:
        return _push(remote, index_dir) if args.push else _pull(remote, index_dir, args.keep, settings)
    except (SyncError, RemoteError) as exc:
        error_console.print(f"[red]sync failed:[/red] {shown(str(exc))}")
        return 1


def _push(remote: RemoteRoot, index_dir: Path) -> int:
    current = VersionStore(index_dir).current()
    if current is None:
        error_console.print(f"No index version under {shown(index_dir)} to upload: run `hqa build`.")
        return 1
    result = upload_version(current, remote)
    what = "uploaded" if result.uploaded else "already uploaded; current pointed at it"
    console.print(
        f"{result.version}: {result.files:,} files, {result.bytes / 1e6:.1f} MB {what} at {shown(result.url)}"
    )
    return 0


def _pull(remote: RemoteRoot, index_dir: Path, keep: int | None, settings: HqaSettings) -> int:
    result = sync_version(remote, index_dir, keep or settings.index.keep_versions)
    if result.downloaded_files:
        done = f"downloaded {result.downloaded_files:,} files ({result.downloaded_bytes / 1e6:.1f} MB)"
        if result.kept_files:
            done += f", kept {result.kept_files:,} an earlier sync had checked"
    else:
        done = "already here, nothing downloaded"
    switch = "now current" if result.switched else "was current already"
    console.print(f"{result.version} from {shown(remote.url)}: {done}; {switch} in {shown(index_dir)}.")
    if result.pruned:
        console.print(f"Pruned older versions: {', '.join(result.pruned)}")
    return 0
