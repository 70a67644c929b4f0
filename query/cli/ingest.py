"""``hqa ingest``: read dumps into Parquet; its input flags and report are shared by ``hqa build``."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from ingest.pipeline import IngestInputs, IngestReport, run_ingest, sample_inputs
from ingest.remote_inputs import stage_inputs
from ingest.shard_output import ErrorRateExceeded
from ingest.shard_plan import IngestOptions
from ingest.shards import Shard
from ingest.wikidata.ingest import WikidataScope
from query.cli.console import console, shown
from schemas.settings import HqaSettings


def _ids(text: str | None) -> frozenset[str]:
    return frozenset(t.strip() for t in (text or "").split(",") if t.strip())


def _shard(text: str) -> Shard:
    try:
        return Shard.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


def add_ingest(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ingest", help="ingest Wikidata / Wikipedia / OTT-QA dumps into Parquet")
    add_ingest_arguments(p)


def add_ingest_arguments(p: argparse.ArgumentParser) -> None:
    """Input and scope flags shared by ``hqa ingest`` and ``hqa build``."""
    p.add_argument(
        "--wikidata",
        action="append",
        default=[],
        help="Wikidata JSON dump, a path or an s3:// URL (repeatable)",
    )
    p.add_argument("--wikipedia", action="append", default=[], help="pages-articles XML dump (path or s3://)")
    p.add_argument(
        "--ottqa", help="folder (or s3:// prefix) holding OTT-QA tables.json.gz and passages.json.gz"
    )
    p.add_argument("--ottqa-limit", type=int, help="read only the first N tables and passages")
    p.add_argument(
        "--samples", action="store_true", help="ingest the bundled sample dumps (default if no input)"
    )
    p.add_argument("--out", type=Path, help="output folder (default: <state_dir>/ingest)")
    p.add_argument("--language", help="label language (default en)")
    p.add_argument(
        "--shard",
        type=_shard,
        default=Shard(),
        help="Wikidata shard: all | bytes:START:END | lines:START:END",
    )
    p.add_argument("--ids", help="keep only these Wikidata ids (comma-separated)")
    p.add_argument("--instance-of", help="keep only items that are instances of these classes")
    p.add_argument("--require-enwiki", action="store_true", help="keep only items with an English article")
    p.add_argument(
        "--workers",
        type=int,
        help="parser processes for Wikidata and Wikipedia (0 = this task's share of the cores it may use)",
    )
    p.add_argument("--max-error-rate", type=float, help="fail when a larger share of records is quarantined")


def cmd_ingest(args: argparse.Namespace, settings: HqaSettings) -> int:
    report = run_ingest_from_args(args, settings)
    if report is None:
        return 2
    print_ingest_report(report)
    return 0


def run_ingest_from_args(
    args: argparse.Namespace, settings: HqaSettings, *, skip_unchanged: bool = False, prune: bool = False
) -> IngestReport | None:
    """Run the ingest the flags describe; None (after saying why) when the error-rate limit tripped.

    ``s3://`` sources are first downloaded to the ingest folder's scratch (``ingest.remote_inputs``)."""
    out_dir = args.out or settings.ingest_dir
    staged = stage_inputs(
        args.wikidata, args.wikipedia, args.ottqa, out_dir=out_dir, settings=settings.remote
    )
    for url in staged.downloaded:
        console.print(f"Downloaded {shown(url)} to the ingest folder's scratch")
    inputs = staged.inputs
    if args.samples or inputs.is_empty():
        samples = sample_inputs(settings.samples_dir)
        inputs = IngestInputs(
            inputs.wikidata + samples.wikidata,
            inputs.wikipedia + samples.wikipedia,
            inputs.ottqa or samples.ottqa,
        )
    try:
        report = run_ingest(
            inputs,
            out_dir,
            property_table=settings.property_table,
            options=IngestOptions.from_settings(
                settings,
                WikidataScope(
                    ids=_ids(args.ids), instance_of=_ids(args.instance_of), require_enwiki=args.require_enwiki
                ),
                wikidata_shard=args.shard,
                ottqa_limit=args.ottqa_limit,
            ),
            skip_unchanged=skip_unchanged,
            prune=prune,
        )
    except ErrorRateExceeded as exc:
        console.print(f"[red]ingest failed:[/red] {exc}")
        return None
    return report


def print_ingest_report(report: IngestReport) -> None:
    runs = Table(title="Ingest summary")
    for column in (
        "reader",
        "input",
        "shard",
        "read",
        "written",
        "skipped",
        "quarantined",
        "MB/s",
        "seconds",
    ):
        runs.add_column(column, justify="left" if column in {"reader", "input", "shard"} else "right")
    tables: dict[str, int] = {}
    for s in report.summaries:
        rate = s.bytes_read / 1e6 / s.seconds if s.seconds else 0.0
        runs.add_row(
            s.reader,
            Path(s.source).name,
            s.shard,
            f"{s.records_read:,}",
            f"{s.records_written:,}",
            f"{s.records_skipped:,}",
            f"{s.quarantined:,}",
            f"{rate:.1f}",
            f"{s.seconds:.1f}",
        )
        for table, rows in s.counts.items():
            tables[table] = tables.get(table, 0) + rows
    console.print(runs)
    if report.skipped:
        console.print(f"Unchanged since their last ingest, kept: {', '.join(report.skipped)}")
    if report.removed:
        console.print(f"Output of inputs no longer given, removed: {', '.join(report.removed)}")
    written = Table(title=f"Rows written under {report.out_dir}")
    written.add_column("table")
    written.add_column("rows", justify="right")
    for table, rows in tables.items():
        written.add_row(table, f"{rows:,}")
    console.print(written)
    if report.dangling_path is not None:
        console.print(
            f"{report.dangling_references:,} entity ids referenced by statements are not in the slice "
            f"(kept as ids; listed in {report.dangling_path})."
        )
    quarantined = sum(s.quarantined for s in report.summaries)
    console.print(
        f"{quarantined:,} records quarantined (with positions) under {report.out_dir / 'quarantine'}."
    )
