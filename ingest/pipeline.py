"""Run every configured reader over its inputs and finish with the cross-shard reports.

The CLI and the Airflow DAGs call these functions; each reader call is also usable alone (one
task per shard). ``sample_inputs`` names the bundled sample dumps the demo and tests run on.
"""

from __future__ import annotations

import filecmp
import logging
import shutil
import tempfile
from dataclasses import dataclass, field
from pathlib import Path

import pyarrow.parquet as pq

from ingest.shard_plan import IngestOptions, ShardOutcome, ingest_shard, plan_shards, prune_stale_outputs
from ingest.wikidata.dangling import DANGLING_FILE, write_dangling_report
from ingest.wikidata.properties import write_bundled_properties
from schemas.ingest import IngestSummary

log = logging.getLogger(__name__)


@dataclass
class IngestInputs:
    wikidata: list[Path] = field(default_factory=list)
    wikipedia: list[Path] = field(default_factory=list)
    ottqa: Path | None = None

    def is_empty(self) -> bool:
        return not (self.wikidata or self.wikipedia or self.ottqa)


@dataclass
class IngestReport:
    outcomes: list[ShardOutcome]
    out_dir: Path
    dangling_references: int
    dangling_path: Path | None
    removed: list[str] = field(default_factory=list)  # earlier runs deleted: no longer an input

    @property
    def summaries(self) -> list[IngestSummary]:
        return [o.summary for o in self.outcomes]

    @property
    def skipped(self) -> list[str]:
        """Jobs whose earlier output was kept because input and options were unchanged."""
        return [o.job.label for o in self.outcomes if o.skipped]


def sample_inputs(samples_dir: Path) -> IngestInputs:
    """The real sample dumps bundled under ``data/samples``."""
    wikidata = sorted((samples_dir / "wikidata").glob("*.json*"))
    wikipedia = sorted((samples_dir / "wikipedia").glob("*.xml*"))
    ottqa = samples_dir / "ottqa"
    if not wikidata and not wikipedia:
        raise FileNotFoundError(f"no sample dumps under {samples_dir}")
    return IngestInputs(wikidata, wikipedia, ottqa if (ottqa / "tables.json.gz").is_file() else None)


def prepare_ingest_dir(out_dir: Path, property_table: Path) -> None:
    """What every ingest folder holds before any shard runs: the bundled property labels.

    Written to a scratch folder first and moved in only when the bytes differ, so a run over
    unchanged inputs rewrites nothing (and the index fingerprints stay equal).
    """
    Path(out_dir).mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=out_dir, prefix=".prepare-") as tmp:
        fresh = write_bundled_properties(Path(tmp), property_table)
        target = Path(out_dir) / fresh.relative_to(tmp)
        if not (target.is_file() and filecmp.cmp(fresh, target, shallow=False)):
            target.parent.mkdir(parents=True, exist_ok=True)
            shutil.move(fresh, target)


def finish_ingest(out_dir: Path, outcomes: list[ShardOutcome], removed: list[str]) -> tuple[Path | None, int]:
    """Cross-shard reports once every shard is in: the entity ids referenced but not ingested.

    When every shard kept its earlier output and none was removed, the existing report still holds
    and is left as it is.
    """
    has_wikidata = any(o.job.reader == "wikidata" for o in outcomes)
    changed = bool(removed) or not all(o.skipped for o in outcomes)
    path = Path(out_dir) / DANGLING_FILE
    if not has_wikidata:
        path.unlink(missing_ok=True)  # a report left from Wikidata inputs no longer given
        return None, 0
    if not changed and path.is_file():
        return path, pq.ParquetFile(path).metadata.num_rows
    path, dangling = write_dangling_report(Path(out_dir))
    log.info("%d referenced entity ids are not in the ingested slice: see %s", dangling, path)
    return path, dangling


def run_ingest(
    inputs: IngestInputs,
    out_dir: Path,
    *,
    property_table: Path,
    options: IngestOptions | None = None,
    shard_bytes: int | None = None,
    skip_unchanged: bool = False,
    prune: bool = False,
) -> IngestReport:
    """Ingest all inputs into ``out_dir``, then write the cross-shard reports.

    ``skip_unchanged`` keeps the output of shards whose input and options did not change;
    ``prune`` deletes earlier output of inputs not given now (a build then indexes exactly these).
    """
    out_dir = Path(out_dir)
    options = options or IngestOptions()
    jobs = plan_shards(
        inputs.wikidata,
        inputs.wikipedia,
        inputs.ottqa,
        out_dir=out_dir,
        wikidata_shard=options.wikidata.shard,
        shard_bytes=shard_bytes,
        threads=options.wikidata.workers,
    )
    removed = prune_stale_outputs(out_dir, jobs) if prune else []
    prepare_ingest_dir(out_dir, property_table)
    outcomes = [ingest_shard(job, out_dir, options, skip_unchanged=skip_unchanged) for job in jobs]
    dangling_path, dangling = finish_ingest(out_dir, outcomes, removed)
    return IngestReport(outcomes, out_dir, dangling, dangling_path, removed)
