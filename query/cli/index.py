"""``hqa build``, ``hqa info`` and ``hqa verify``: build a new index version, show what the versions hold,
check their bytes; ``hqa index gc``: delete what object storage no longer needs (``index.state_gc``)."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.markdown import Markdown
from rich.table import Table

from index.build import BuildResult, build_index
from index.build_stages import dir_bytes
from index.integrity import damaged_files, repair_hint
from index.rebuild_report import LATEST, make_report, write_report
from index.remote_versions import remote_root, upload_version
from index.state_gc import GcReport, RunInProgress, collect_garbage
from index.state_log import StateDamaged
from index.versions import MANIFEST, VersionGone, VersionLease, VersionStore
from ingest.object_store import RemoteError
from ingest.progress import progress
from query.cli.console import console, error_console, shown
from query.cli.ingest import add_ingest_arguments, print_ingest_report, run_ingest_from_args
from schemas.settings import HqaSettings


def add_build(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("build", help="ingest, verbalize and build the BM25, vector and graph indexes")
    add_ingest_arguments(p)
    p.add_argument("--skip-ingest", action="store_true", help="build from the existing ingest output")
    p.add_argument("--force", action="store_true", help="rebuild every stage even if inputs are unchanged")
    p.add_argument("--keep", type=int, help="index versions to keep (default from settings: 3)")


def add_info(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("info", help="index versions, row counts and sizes")
    p.add_argument("--index", type=Path, help="index root (default <state_dir>/indexes)")


def add_verify(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser(
        "verify", help="check every file of an index version against the SHA-256 its build recorded"
    )
    p.add_argument("--index", type=Path, help="index root or a version folder (default <state_dir>/indexes)")
    p.add_argument("--all", action="store_true", help="every kept version, not only the current one")


def add_index(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("index", help="maintain the index's object storage")
    actions = p.add_subparsers(dest="index_command", required=True)
    gc = actions.add_parser(
        "gc",
        help="delete blobs and checkpoints the shared state no longer needs and published versions beyond "
        "index.keep_versions (remote.state_url, remote.url); never while a rebuild runs",
    )
    gc.add_argument("--dry-run", action="store_true", help="report what would be deleted, delete nothing")
    gc.add_argument(
        "--force",
        action="store_true",
        help="collect although the newest change record is younger than remote.gc_grace_hours (only when "
        "no rebuild is running: a step pushing meanwhile can lose a blob)",
    )


def cmd_index(args: argparse.Namespace, settings: HqaSettings) -> int:
    """``hqa index gc``: 0 when collected (or nothing to collect), 1 when refused or failed, 2 without a
    remote."""
    remote = settings.remote
    if not remote.state_url and not remote.url:
        error_console.print("Nothing to collect: set HQA_REMOTE__STATE_URL and/or HQA_REMOTE__URL.")
        return 2
    try:
        report = collect_garbage(remote, settings.index.keep_versions, dry_run=args.dry_run, force=args.force)
    except RunInProgress as exc:
        error_console.print(f"[red]refused:[/red] {shown(str(exc))}")
        return 1
    except (StateDamaged, RemoteError, OSError) as exc:
        error_console.print(f"[red]gc failed:[/red] {shown(str(exc))}")
        return 1
    print_gc(report)
    return 0


def print_gc(report: GcReport) -> None:
    dry = (report.state or report.versions).dry_run
    table = Table(title="Garbage in object storage" + (" (dry run: nothing deleted)" if dry else ""))
    for column in ("where", "what", "kept", "deleted" if not dry else "would delete", "MB deleted"):
        table.add_column(column, justify="left" if column in {"where", "what"} else "right")
    if (state := report.state) is not None:
        blobs_kept = f"{state.blobs_kept:,}" + (
            f" ({state.blobs_young:,} young)" if state.blobs_young else ""
        )
        table.add_row(
            shown(state.url),
            "blobs",
            blobs_kept,
            f"{state.blobs_deleted:,}",
            f"{state.blobs_deleted_bytes / 1e6:.1f}",
        )
        damaged = f" ({state.checkpoints_damaged} damaged)" if state.checkpoints_damaged else ""
        table.add_row(
            shown(state.url),
            "checkpoints",
            f"{state.checkpoints_kept:,}",
            f"{state.checkpoints_deleted:,}{damaged}",
            f"{state.checkpoints_deleted_bytes / 1e6:.1f}",
        )
    if (versions := report.versions) is not None:
        table.add_row(
            shown(versions.url),
            "versions",
            shown(", ".join(versions.kept) or "none"),
            shown(", ".join(versions.deleted) or "none"),
            f"{versions.deleted_bytes / 1e6:.1f}",
        )
    console.print(table)
    recent = state is not None and state.newest_record_hours is not None
    if recent and dry and state.newest_record_hours < state.grace_hours:
        console.print(
            f"The newest change record is {state.newest_record_hours:.1f} h old, younger than the grace "
            f"period ({state.grace_hours:g} h): a collection now would be refused without --force."
        )
    if state is not None and state.blobs_young:
        console.print(
            f"{state.blobs_young:,} unnamed blobs are younger than {state.grace_hours:g} h "
            "(remote.gc_grace_hours): a later collection deletes them."
        )


def cmd_verify(args: argparse.Namespace, settings: HqaSettings) -> int:
    """Exit 0 when every checked version holds the bytes it was published with, else 1 (naming the
    files, and what to do). Opening an index checks sizes only; this reads every byte, so it also finds
    overwritten files, on which Kùzu can crash the process rather than raise."""
    target = Path(args.index or settings.index_dir)
    store = VersionStore(target.parent if (target / MANIFEST).is_file() else target)
    if (target / MANIFEST).is_file():
        versions = [target]
    else:
        current = store.current()
        versions = store.versions() if args.all else [current] if current is not None else []
    if not versions:
        console.print(f"No index versions under {shown(target)}: run `hqa build`.")
        return 1
    table = Table(title=f"Index versions checked under {shown(store.root)}")
    for column in ("version", "files", "MB", "checked", "result"):
        table.add_column(column, justify="right" if column in {"files", "MB"} else "left")
    damaged = []
    for version in versions:
        try:
            lease = VersionLease(version)  # not pruned while its bytes are read
        except VersionGone:
            table.add_row(version.name, "", "", "nothing", "pruned while the others were checked")
            continue
        manifest = store.manifest(version)
        size = sum(manifest.files.values())
        bar = progress(f"verify {version.name}", total=size, unit="B", unit_scale=True)
        try:
            problems = damaged_files(version, manifest.files, None, manifest.checksums, bar.update)
        finally:
            bar.close()
            lease.release()
        checked = "sizes and SHA-256" if manifest.checksums else "sizes only (published before checksums)"
        if not manifest.files:
            checked = "nothing (published before file lists were kept)"
        if problems:
            damaged.append(version)
        table.add_row(
            version.name,
            f"{len(manifest.files):,}",
            f"{size / 1e6:.1f}",
            checked,
            "[red]damaged[/red]: " + shown("; ".join(problems))
            if problems
            else "ok"
            if manifest.files
            else "unknown: rebuild it (`hqa build --force`) to record its files",
        )
    console.print(table)
    for version in damaged:
        console.print(f"{shown(version)} is damaged: {shown(repair_hint(version))}")
    return 1 if damaged else 0


def cmd_build(args: argparse.Namespace, settings: HqaSettings) -> int:
    if args.keep is not None:
        settings.index.keep_versions = args.keep
    ingest_dir = args.out or settings.ingest_dir
    outcomes, removed = [], []
    if not args.skip_ingest:
        report = run_ingest_from_args(args, settings, skip_unchanged=not args.force, prune=True)
        if report is None:
            return 2
        print_ingest_report(report)
        outcomes, removed = report.outcomes, report.removed
    result = build_index(settings, ingest_dir=ingest_dir, force=args.force)
    plan = result.plan.model_copy(update={"removed_runs": removed})
    path = write_report(make_report(outcomes, plan, result.manifest), settings.reports_dir)
    print_build(result)
    console.print(f"Report: {path}")
    if (remote := remote_root(settings.remote)) is not None:  # as the rebuild DAG's publish step does
        uploaded = upload_version(result.version_dir, remote)
        what = "uploaded to" if uploaded.uploaded else "already at"
        console.print(
            f"Index {uploaded.version} {what} {shown(uploaded.url)}; its remote current points at it."
        )
    return 0


def print_build(result: BuildResult) -> None:
    m = result.manifest
    if not result.built:
        console.print(f"Index {m.version} is up to date with the ingest output: nothing rebuilt.")
        return
    table = Table(title=f"Index build {m.version}")
    for column in ("stage", "what", "rate", "seconds", "size MB", "reused from"):
        table.add_column(column, justify="left" if column in {"stage", "what", "reused from"} else "right")
    for name, stage in m.stages.items():
        table.add_row(
            name,
            ", ".join(f"{k} {v:,}" for k, v in stage.counts.items())
            + (f" (embedded {stage.details['embedded']:,})" if "embedded" in stage.details else ""),
            f"{stage.rate:,.0f} {stage.rate_unit}" if stage.rate else "",
            f"{stage.seconds:.1f}",
            f"{stage.bytes / 1e6:.1f}",
            stage.reused_from or "",
        )
    console.print(table)
    console.print(
        f"Published {result.version_dir} ({m.seconds:.1f} s); validation: "
        + ", ".join(f"{k} {v}" for k, v in m.validation.items())
    )


def cmd_info(args: argparse.Namespace, settings: HqaSettings) -> int:
    store = VersionStore(args.index or settings.index_dir)
    versions = store.versions()
    if not versions:
        console.print(f"No index versions under {store.root}: run `hqa build`.")
        return 1
    current = store.current()
    table = Table(title=f"Index versions under {store.root}")
    for column in ("version", "current", "created", "evidence", "kg/text/table/infobox", "entities", "MB"):
        table.add_column(column, justify="left" if column in {"version", "current", "created"} else "right")
    for path in versions:
        m = store.manifest(path)
        c = m.counts
        split = "/".join(f"{c.get(f'evidence_{t}', 0):,}" for t in ("kg", "text", "table", "infobox"))
        table.add_row(
            m.version,
            "*" if current is not None and path.resolve() == current else "",
            m.created_at,
            f"{c.get('evidence', 0):,}",
            split,
            f"{c.get('entities_entities', 0):,}",
            f"{dir_bytes(path) / 1e6:.1f}",
        )
    console.print(table)
    if current is not None:
        m = store.manifest(current)
        detail = Table(title=f"Current version {m.version}")
        detail.add_column("count")
        detail.add_column("value", justify="right")
        for key, value in m.counts.items():
            detail.add_row(key, f"{value:,}")
        console.print(detail)
        console.print(f"model: {m.model}; libraries: {m.libraries}")
    report = settings.reports_dir / f"{LATEST}.md"
    if report.is_file():
        console.print(Markdown(report.read_text()))
        console.print(f"(from {report})")
    answers = sorted(settings.answers_dir.glob("answers-*.parquet"), key=lambda p: p.stat().st_mtime)
    if answers:
        console.print(f"Latest batch answers: {answers[-1]}")
    return 0
