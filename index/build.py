"""Build a new index version from the ingest output: evidence, aliases, BM25, vectors, graph, statements.

``build_index`` runs every step of ``index.build_stages`` in one process (``hqa build``); the
Airflow rebuild runs the same steps as tasks. Stages whose fingerprint is unchanged are
hard-linked from the current version (the embedding cache separately makes even a changed vector
stage pay only for new evidence); when nothing changed, no version is made at all. Validation
(counts agree across the indexes, one smoke query each) runs before ``current`` moves, so readers
never see a broken version.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil
import time
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import pyarrow.parquet as pq

from index.build_plan import BuildPlan, plan_build
from index.build_stages import (
    INDEX_STAGES,
    duck_session,
    embed_part_step,
    embed_parts,
    evidence_report,
    out_of_space_named,
    run_stage,
    validate_build,
    verbalize_job,
)
from index.evidence_reader import EvidenceReader
from index.integrity import file_checksums, file_sizes
from index.versions import VersionStore
from ingest.progress import progress
from schemas.build import InputFile, Manifest, StageReport
from schemas.ingest import IngestSummary
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

LIBRARIES = ("pyarrow", "polars", "duckdb", "tantivy", "lancedb", "kuzu", "sentence-transformers", "torch")


@dataclass
class BuildResult:
    version_dir: Path
    manifest: Manifest
    built: bool  # False when the current version was already up to date
    plan: BuildPlan


def library_versions() -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in LIBRARIES}


def ingest_inputs(ingest_dir: Path) -> list[InputFile]:
    """The dump files behind the ingest output, with the checksums the ingest runs recorded."""
    inputs = []
    for path in sorted((Path(ingest_dir) / "_runs").glob("*.json")):
        summary = IngestSummary.model_validate_json(path.read_text())
        inputs.append(
            InputFile(
                path=summary.source,
                sha256=summary.source_sha256,
                bytes=summary.source_bytes,
                reader=summary.reader,
                shard=summary.shard,
            )
        )
    return inputs


def publish_build(
    plan: BuildPlan,
    settings: dict,
    keep_versions: int,
    stages: dict[str, StageReport],
    validation: dict[str, str],
) -> Manifest:
    """Write the manifest, move the version into place, point ``current`` at it, prune old versions.

    ``settings`` is what the manifest records (the root settings, dumped by the caller). Idempotent:
    when the plan's version is already published (a retried task), returns its manifest.
    """
    store = VersionStore(Path(plan.index_dir))
    if plan.building is None or not Path(plan.building).exists():
        published = store.root / plan.version
        if (published / "manifest.json").is_file():
            return store.manifest(published)
        raise FileNotFoundError(f"nothing to publish for {plan.version}: {plan.building} is gone")
    evidence = EvidenceReader(plan.building_dir)
    with duck_session(plan, "publish") as con:
        by_type = evidence.count_by_type(con)
    rows = evidence.rows()
    shutil.rmtree(plan.work_dir, ignore_errors=True)  # scratch: never published
    manifest = Manifest(
        version=plan.version,
        created_at=datetime.now(UTC).isoformat(timespec="seconds"),
        hqa_version=importlib.metadata.version("hqa"),
        inputs=ingest_inputs(Path(plan.ingest_dir)),
        settings=settings,
        libraries=library_versions(),
        model=stages["vectors"].details.get("model", {}),
        stages={name: stages[name] for name in ("evidence", *INDEX_STAGES)},
        counts={
            "evidence": rows,
            **{f"evidence_{k}": v for k, v in sorted(by_type.items())},
            **{f"{name}_{k}": v for name, r in stages.items() for k, v in r.counts.items()},
        },
        validation=validation,
        seconds=round(time.time() - plan.started, 3),
        files=(files := file_sizes(plan.building_dir)),
        checksums=file_checksums(plan.building_dir, files),
    )
    with out_of_space_named(plan, "publish", plan.building_dir):
        final = store.publish(plan.building_dir, manifest)
    store.prune(keep_versions)
    log.info("published index %s (%d evidence rows)", final, rows)
    return manifest


def build_index(settings: HqaSettings, *, ingest_dir: Path | None = None, force: bool = False) -> BuildResult:
    """Plan, verbalize, build each stage, validate and publish, in this process."""
    plan = plan_build(
        settings.index,
        index_dir=settings.index_dir,
        ingest_dir=Path(ingest_dir or settings.ingest_dir),
        unit_table=settings.unit_table,
        force=force,
    )
    store = VersionStore(Path(plan.index_dir))
    if plan.up_to_date:
        log.info("index %s is up to date with the ingest output", plan.version)
        current = Path(plan.previous or "")
        return BuildResult(current, store.manifest(current), built=False, plan=plan)
    try:
        total = sum(pq.ParquetFile(job.path).metadata.num_rows for job in plan.verbalize)
        bar = progress("verbalize", total=total, unit="rec", unit_scale=True)
        try:
            files = [verbalize_job(plan, job, settings.index, bar.update) for job in plan.verbalize]
        finally:
            bar.close()
        stages = {"evidence": evidence_report(plan, files)}
        for part in embed_parts(plan):  # the DAG's mapped embed tasks, one after another
            embed_part_step(plan, part, settings.index, settings.embedding_cache_dir)
        for name in INDEX_STAGES:
            stages[name] = run_stage(plan, name, settings.index, settings.embedding_cache_dir)
        validation = validate_build(plan, settings.index)
        manifest = publish_build(
            plan, json.loads(settings.model_dump_json()), settings.index.keep_versions, stages, validation
        )
    except BaseException:
        store.abandon(plan.building_dir)
        raise
    return BuildResult(store.root / manifest.version, manifest, built=True, plan=plan)
