"""The report that ends every rebuild: shards ingested or skipped, stages built or reused, counts.

Written as JSON (for machines and tests) and Markdown (for people) under the state's reports
folder, the newest also as ``rebuild-latest.*``; ``hqa info`` prints the latest one.
"""

from __future__ import annotations

import shutil
from datetime import UTC, datetime
from pathlib import Path

from pydantic import BaseModel

from index.build_plan import BuildPlan
from ingest.shard_plan import ShardOutcome
from schemas.build import Manifest

LATEST = "rebuild-latest"


class ShardLine(BaseModel):
    shard: str
    skipped: bool
    records_read: int
    records_written: int
    quarantined: int
    quarantine_file: str | None
    seconds: float


class StageLine(BaseModel):
    seconds: float
    reused_from: str | None
    counts: dict[str, int]


class RebuildReport(BaseModel):
    finished_at: str
    version: str
    published: bool
    up_to_date: bool
    index_dir: str
    shards: list[ShardLine]
    removed_runs: list[str]
    stages: dict[str, StageLine]
    counts: dict[str, int]
    quarantined: int
    seconds: float | None

    @property
    def skipped_shards(self) -> list[str]:
        return [s.shard for s in self.shards if s.skipped]


def make_report(outcomes: list[ShardOutcome], plan: BuildPlan, manifest: Manifest | None) -> RebuildReport:
    shards = []
    for outcome in outcomes:
        s = outcome.summary
        quarantine = next((o.path for o in s.outputs if o.table == "quarantine" and o.rows), None)
        shards.append(
            ShardLine(
                shard=outcome.job.label,
                skipped=outcome.skipped,
                records_read=s.records_read,
                records_written=s.records_written,
                quarantined=s.quarantined,
                quarantine_file=quarantine,
                seconds=0.0 if outcome.skipped else s.seconds,
            )
        )
    stages = {}
    if manifest is not None:
        stages = {
            name: StageLine(seconds=r.seconds, reused_from=r.reused_from, counts=r.counts)
            for name, r in manifest.stages.items()
        }
    return RebuildReport(
        finished_at=datetime.now(UTC).isoformat(timespec="seconds"),
        version=plan.version,
        published=manifest is not None and not plan.up_to_date,
        up_to_date=plan.up_to_date,
        index_dir=plan.index_dir,
        shards=shards,
        removed_runs=plan.removed_runs,
        stages=stages,
        counts=manifest.counts if manifest is not None else {},
        quarantined=sum(s.quarantined for s in shards),
        seconds=manifest.seconds if manifest is not None and not plan.up_to_date else None,
    )


def render_markdown(report: RebuildReport) -> str:
    if report.up_to_date:
        head = f"Index {report.version} was already up to date: nothing rebuilt, nothing published."
    else:
        head = f"Published index {report.version} under {report.index_dir} in {report.seconds:.1f} s."
    lines = [f"# Rebuild {report.finished_at}", "", head, ""]
    lines += ["| shard | ingest | read | written | quarantined | seconds |", "|---|---|--:|--:|--:|--:|"]
    for s in report.shards:
        lines.append(
            f"| {s.shard} | {'skipped (unchanged)' if s.skipped else 'ingested'} | {s.records_read:,} "
            f"| {s.records_written:,} | {s.quarantined:,} | {s.seconds:.1f} |"
        )
    if report.removed_runs:
        lines += ["", f"Output of inputs no longer given, removed: {', '.join(report.removed_runs)}"]
    if report.stages:
        title = "Stages of the current version:" if report.up_to_date else "Stages:"
        lines += ["", title, "", "| stage | seconds | reused from | counts |", "|---|--:|---|---|"]
        for name, st in report.stages.items():
            counts = ", ".join(f"{k} {v:,}" for k, v in st.counts.items())
            lines.append(f"| {name} | {st.seconds:.1f} | {st.reused_from or ''} | {counts} |")
    quarantine_files = [s.quarantine_file for s in report.shards if s.quarantine_file]
    lines += ["", f"{report.quarantined:,} records quarantined (with positions)."]
    lines += [f"- {path}" for path in quarantine_files]
    return "\n".join(lines) + "\n"


def write_report(report: RebuildReport, reports_dir: Path) -> Path:
    """Write ``rebuild-<time>.json/.md`` and copy them to ``rebuild-latest.*``; returns the Markdown path."""
    reports_dir = Path(reports_dir)
    reports_dir.mkdir(parents=True, exist_ok=True)
    stamp = report.finished_at.replace(":", "").replace("-", "").replace("+0000", "Z")
    stem = reports_dir / f"rebuild-{stamp}"
    stem.with_suffix(".json").write_text(report.model_dump_json(indent=2))
    stem.with_suffix(".md").write_text(render_markdown(report))
    for suffix in (".json", ".md"):
        shutil.copyfile(stem.with_suffix(suffix), reports_dir / f"{LATEST}{suffix}")
    return stem.with_suffix(".md")


def latest_report(reports_dir: Path) -> RebuildReport | None:
    path = Path(reports_dir) / f"{LATEST}.json"
    return RebuildReport.model_validate_json(path.read_text()) if path.is_file() else None
