"""The index rebuild as steps with JSON in and JSON out: what the Airflow rebuild DAG's tasks call.

Each step rebuilds its settings from the run's params (and the worker's environment), so any worker with the
shared state folder can run any step. With ``remote.state_url`` set there is no shared folder: each step
pulls the state it reads from object storage into its worker's own ``HQA_STATE_DIR`` and pushes what it
wrote (``index.state_exchange``); the marker check then asks the object store. Steps return plain dicts
(pydantic dumps) because XCom stores JSON. Paths under the state root travel relative to it
(``index.shared_state``), so each worker resolves them against its own mount; ``discover`` writes a marker
for its run that every later step checks first, so a worker that does not see the shared state fails at
once.
The order: ``discover`` → ``ingest`` (one per shard) → ``plan`` → ``verbalize`` (one per ingest file)
→ ``evidence`` → ``embed`` (one per evidence file) and the stages (six of them; ``vectors`` after every
``embed``) → ``validate`` → ``publish`` → ``report`` → ``gc`` (garbage in object storage,
``index.state_gc``). ``hqa build`` runs the same library functions in one process.
"""

from __future__ import annotations

import json
import logging
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from datetime import datetime
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field, field_validator

from index.build import publish_build
from index.build_plan import BuildPlan, VerbalizeJob, plan_build
from index.build_stages import (
    INDEX_STAGES,
    STAGE_OUTPUTS,
    EvidenceFile,
    embed_part_step,
    embed_parts,
    evidence_report,
    run_stage,
    validate_build,
    verbalize_job,
)
from index.rebuild_report import make_report, render_markdown, write_report
from index.remote_versions import remote_root, upload_version
from index.shared_state import local, new_marker, portable, require_marker, run_name, write_marker
from index.state_exchange import StateExchange, StepSession
from index.state_gc import collect_garbage
from index.versions import CURRENT, CURRENT_FILE, VersionStore
from ingest.pipeline import IngestInputs, finish_ingest, prepare_ingest_dir, sample_inputs
from ingest.remote_inputs import copy_path, stage_inputs
from ingest.shard_output import read_summary
from ingest.shard_plan import (
    IngestOptions,
    ShardJob,
    ShardOutcome,
    ingest_shard,
    inputs_dir,
    plan_shards,
    prune_stale_outputs,
)
from ingest.wikidata.ingest import WikidataScope
from schemas.build import Manifest, StageReport
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

INDEX_ASSET_NAME = "hqa_index"
INDEX_ASSET_URI = "hqa://index/current"
Json = dict[str, Any]
PathMap = Callable[[str | None], str | None]


def _source(value: str) -> str:
    """A dump source: a local path (file:// URIs become one) or an s3:// URL, which ``discover`` stages."""
    if value.startswith("file://"):
        return value.removeprefix("file://")
    if value.startswith("s3://"):
        return value
    if "://" in value:
        raise ValueError(
            f"{value!r}: dumps are read from local paths, file:// URIs and s3:// URLs; put other remote "
            "dumps on the shared storage the workers mount (see README, scale-out) and pass that path"
        )
    return value


class RebuildParams(BaseModel):
    """The rebuild DAG's params. No dump given at all means the bundled sample dumps."""

    wikidata: list[str] = Field(default_factory=list, description="Wikidata JSON dump files")
    wikipedia: list[str] = Field(default_factory=list, description="Wikipedia pages-articles XML dumps")
    ottqa: str | None = Field(None, description="OTT-QA release folder (tables.json.gz, passages.json.gz)")
    language: str = Field("en", description="Wikidata label language")
    scope_ids: list[str] = Field(default_factory=list, description="keep only these Wikidata items")
    scope_instance_of: list[str] = Field(default_factory=list, description="keep items of these classes")
    require_enwiki: bool = Field(False, description="keep only items with an English Wikipedia article")
    shard_mb: int | None = Field(
        None, ge=1, description="split Wikidata dumps into shards of about this many MB of the file"
    )
    workers: int | None = Field(
        None,
        ge=1,
        description="parser processes per ingest task; None = HQA_WORKERS, else the worker slot's share of "
        "its cores",
    )
    force: bool = Field(False, description="re-ingest and rebuild everything, even unchanged")
    config: str | None = Field(None, description="hqa settings file (TOML/YAML) for the workers")

    @field_validator("wikidata", "wikipedia")
    @classmethod
    def _paths(cls, values: list[str]) -> list[str]:
        return [_source(v) for v in values]

    @field_validator("ottqa")
    @classmethod
    def _path(cls, value: str | None) -> str | None:
        return _source(value) if value else None

    def settings(self) -> HqaSettings:
        return HqaSettings.load(
            Path(self.config) if self.config else None, language=self.language, workers=self.workers
        )

    def inputs(self, settings: HqaSettings) -> IngestInputs:
        """The dumps as local files: s3:// ones downloaded (once, while unchanged) into the shared ingest
        folder's scratch, where every ingest worker finds them (``ingest.remote_inputs``)."""
        staged = stage_inputs(
            self.wikidata, self.wikipedia, self.ottqa, out_dir=settings.ingest_dir, settings=settings.remote
        )
        inputs = staged.inputs
        return sample_inputs(settings.samples_dir) if inputs.is_empty() else inputs

    def ingest_options(self, settings: HqaSettings) -> IngestOptions:
        scope = WikidataScope(
            ids=frozenset(self.scope_ids),
            instance_of=frozenset(self.scope_instance_of),
            require_enwiki=self.require_enwiki,
        )
        return IngestOptions.from_settings(settings, scope)


class RunJob(BaseModel):
    """One ingest job of a rebuild run, as ``discover`` hands it to a mapped ingest task."""

    run: str = Field(description="the run's marker name under the state root (index.shared_state)")
    job: ShardJob


class RunOutcome(BaseModel):
    """One ingest job's outcome, still naming its run."""

    run: str
    outcome: ShardOutcome


def _job_paths(job: ShardJob, convert: PathMap) -> ShardJob:
    return job.model_copy(update={"source": convert(job.source)})


def _outcome_paths(outcome: ShardOutcome, convert: PathMap) -> ShardOutcome:
    outputs = [o.model_copy(update={"path": convert(o.path)}) for o in outcome.summary.outputs]
    summary = outcome.summary.model_copy(
        update={"source": convert(outcome.summary.source), "outputs": outputs}
    )
    return outcome.model_copy(update={"job": _job_paths(outcome.job, convert), "summary": summary})


def _to_portable(settings: HqaSettings) -> PathMap:
    return lambda path: portable(path, settings.state_dir)


def _to_local(settings: HqaSettings) -> PathMap:
    return lambda path: local(path, settings.state_dir)


@contextmanager
def _shared_state(
    settings: HqaSettings, step: str, run: str | None, scope: list[Path | str | None]
) -> Iterator[StepSession]:
    """Around a step: the run's marker checked (before anything is written), and, when the state lives in
    object storage, the local paths of ``scope`` pulled before and what the step wrote pushed after.
    Yields the step's session (to pull more, or drop old versions; no-ops over a shared folder)."""
    exchange = StateExchange.from_settings(settings)
    if exchange is None:
        require_marker(settings.state_dir, run, step)
        yield StepSession()
        return
    with exchange.step(step, exchange.scope(scope), run) as session:
        yield session


def _earlier_outputs(job: ShardJob, ingest_dir: Path) -> list[Path | str | None]:
    """The files an earlier run of ``job`` wrote, as its summary names them (none without one)."""
    path = job.summary_file(ingest_dir)
    if not path.is_file():
        return []
    return [o.path for o in read_summary(path, ingest_dir).outputs]


def _stage_own_copy(p: RebuildParams, settings: HqaSettings, source: Path) -> None:
    """Stage the ``s3://`` dump whose copy ``source`` is, on this worker: dump copies are not exchanged
    (large, and each worker can fetch its own from the dump's URL); others' copies here are kept."""
    target = source.resolve()

    def mine(url: str | None) -> bool:
        return (
            bool(url) and url.startswith("s3://") and copy_path(url, settings.ingest_dir).resolve() == target
        )

    stage_inputs(
        [u for u in p.wikidata if mine(u)],
        [u for u in p.wikipedia if mine(u)],
        p.ottqa if mine(p.ottqa) else None,
        out_dir=settings.ingest_dir,
        settings=settings.remote,
        prune=False,
    )


def _build_scope(settings: HqaSettings, build: BuildPlan, *extra: Path) -> list[Path | str | None]:
    """What a step of a started build reads: the ingest output, the build folder, the version it reuses
    (and the ``current`` pointer); not the older versions."""
    return [settings.ingest_dir, build.building, build.previous, *_pointers(Path(build.index_dir)), *extra]


def _pointers(index_dir: Path) -> list[Path | str | None]:
    """The index's ``current`` symlink and its pointer file (``index.versions``)."""
    return [index_dir / CURRENT, index_dir / CURRENT_FILE]


def _local_plan(settings: HqaSettings, plan: Json) -> BuildPlan:
    """The plan on this worker: its paths resolved against our state root."""
    return BuildPlan.model_validate(plan).mapped_paths(_to_local(settings))


def _portable_plan(settings: HqaSettings, build: BuildPlan) -> Json:
    return build.mapped_paths(_to_portable(settings)).model_dump(mode="json")


def _local_outcomes(
    settings: HqaSettings, outcomes: list[Json], step: str
) -> tuple[str | None, list[ShardOutcome]]:
    """The run the outcomes belong to (the caller checks its marker) and the outcomes with local paths."""
    results = [RunOutcome.model_validate(o) for o in outcomes]
    runs = {r.run for r in results}
    if len(runs) > 1:
        raise ValueError(f"{step}: ingest outcomes of several rebuild runs mixed: {sorted(runs)}")
    run = runs.pop() if runs else None
    return run, [_outcome_paths(r.outcome, _to_local(settings)) for r in results]


def param_defaults() -> dict[str, tuple[Any, str | None]]:
    """(default, description) of every param, for the DAG's ``Param`` declarations."""
    return {
        name: (field.get_default(call_default_factory=True), field.description)
        for name, field in RebuildParams.model_fields.items()
    }


def discover(params: Json, run_id: str | None = None) -> list[Json]:
    """Write the run's marker, checksum the inputs and plan their shards: one ingest task per job.

    ``run_id`` (Airflow's) names the marker every later step checks for; None makes a fresh name.

    A checksum is computed once per file (files in parallel, ``workers`` at a time) and saved under the
    ingest folder keyed by path, size and mtime, so a re-run reads no unchanged dump; a compressed
    Wikidata dump split into ``shard_mb`` shards gets its block index built here, once, for every shard.
    """
    p = RebuildParams.model_validate(params)
    settings = p.settings()
    run = run_name(run_id)
    if (exchange := StateExchange.from_settings(settings)) is not None:
        exchange.write_marker(new_marker(settings.state_dir, run))  # fails at once when unreachable
    write_marker(settings.state_dir, run)
    # the inputs' checksums and block indexes, and the property tables prepare_ingest_dir compares with
    scope = [inputs_dir(settings.ingest_dir), settings.ingest_dir / "properties"]
    with _shared_state(settings, "discover", None, scope):
        inputs = p.inputs(settings)
        jobs = plan_shards(
            inputs.wikidata,
            inputs.wikipedia,
            inputs.ottqa,
            out_dir=settings.ingest_dir,
            shard_bytes=p.shard_mb << 20 if p.shard_mb else None,
            threads=settings.parser_workers,
        )
        prepare_ingest_dir(settings.ingest_dir, settings.property_table)
    to_portable = _to_portable(settings)
    return [RunJob(run=run, job=_job_paths(j, to_portable)).model_dump() for j in jobs]


def ingest(params: Json, job: Json) -> Json:
    """Ingest one shard, or keep its earlier output when input and options are unchanged."""
    p = RebuildParams.model_validate(params)
    settings = p.settings()
    options = p.ingest_options(settings)
    run_job = RunJob.model_validate(job)
    shard = _job_paths(run_job.job, _to_local(settings))
    # its summary and the inputs' checksums and block indexes first, then the outputs the summary names
    scope = [shard.summary_file(settings.ingest_dir), inputs_dir(settings.ingest_dir)]
    with _shared_state(settings, "ingest", run_job.run, scope) as session:
        session.pull(_earlier_outputs(shard, settings.ingest_dir))
        if settings.remote.state_url and not Path(shard.source).exists():
            _stage_own_copy(p, settings, Path(shard.source))
        outcome = ingest_shard(shard, settings.ingest_dir, options, skip_unchanged=not p.force)
    portable_outcome = _outcome_paths(outcome, _to_portable(settings))
    return RunOutcome(run=run_job.run, outcome=portable_outcome).model_dump(mode="json")


def plan(params: Json, outcomes: list[Json], run_after: datetime | None = None) -> Json:
    """Drop the output of inputs no longer given, write the cross-shard ingest reports, plan the build.

    ``run_after`` (the DAG run's time) names the version, so a retried plan reuses its folder.
    When the index is up to date the plan has no files to verbalize.
    """
    p = RebuildParams.model_validate(params)
    settings = p.settings()
    run, results = _local_outcomes(settings, outcomes, "plan")
    # the ingest output and the current version (not the older ones): its pointers first, then its folder
    with _shared_state(
        settings, "plan", run, [settings.ingest_dir, *_pointers(settings.index_dir)]
    ) as session:
        session.pull([VersionStore(settings.index_dir).current()])
        removed = prune_stale_outputs(settings.ingest_dir, [o.job for o in results])
        finish_ingest(settings.ingest_dir, results, removed)
        version = VersionStore.version_name(run_after) if run_after is not None else None
        build = plan_build(
            settings.index,
            index_dir=settings.index_dir,
            ingest_dir=settings.ingest_dir,
            unit_table=settings.unit_table,
            force=p.force,
            version=version,
        )
    return _portable_plan(settings, build.model_copy(update={"removed_runs": removed, "run": run}))


def files_to_verbalize(plan: Json) -> list[Json]:
    """The plan's verbalize jobs, as a list a mapped task can expand over (empty when up to date)."""
    return [j.model_dump() for j in BuildPlan.model_validate(plan).verbalize]


def verbalize(params: Json, plan: Json, job: Json) -> Json:
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    to_local = _to_local(settings)
    verbalize_job_ = VerbalizeJob.model_validate(job)
    local_job = verbalize_job_.model_copy(update={"path": to_local(verbalize_job_.path)})
    previous = Path(build.previous) if build.previous else None
    reused = [previous / "manifest.json", previous / "evidence" / local_job.output] if previous else []
    scope = [local_job.path, build.names_dir, *reused]
    with _shared_state(settings, "verbalize", build.run, scope):
        written = verbalize_job(build, local_job, settings.index)
    return written.model_copy(update={"job": verbalize_job_}).model_dump(mode="json")


def evidence(plan: Json, files: list[Json], params: Json | None = None) -> Json:
    settings = RebuildParams.model_validate(params or {}).settings()
    build = _local_plan(settings, plan)
    to_local = _to_local(settings)
    written = [EvidenceFile.model_validate(f) for f in files]
    local_files = [
        f.model_copy(update={"job": f.job.model_copy(update={"path": to_local(f.job.path)})}) for f in written
    ]
    with _shared_state(settings, "evidence", build.run, _build_scope(settings, build)):
        return evidence_report(build, local_files).model_dump(mode="json")


def evidence_parts(params: Json, plan: Json) -> list[int]:
    """The evidence files of the build, numbered, for the mapped embed task (after ``evidence``)."""
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    with _shared_state(settings, "evidence parts", build.run, [build.building]):
        return embed_parts(build)


def embed(params: Json, plan: Json, part: int) -> Json:
    """Embed one evidence file's rows the embedding cache lacks (skipped when the vectors are reused)."""
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    cache = settings.embedding_cache_dir
    scope = _build_scope(settings, build, cache)[1:]  # not the ingest output
    with _shared_state(settings, f"embed part {part}", build.run, scope):
        return embed_part_step(build, part, settings.index, cache).model_dump(mode="json")


def stage(params: Json, plan: Json, name: str) -> Json:
    """Build one index stage. Over object storage it pulls what the stage reads, not the whole build: the
    build folder without the other stages' outputs, and of the version it may reuse only the manifest and
    its own outputs (at 100k entities ``statements`` used to pull the 259 MB graph ``graph`` had pushed)."""
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    cache = settings.embedding_cache_dir
    previous = Path(build.previous) if build.previous else None
    reused = [previous / "manifest.json", *(previous / o for o in STAGE_OUTPUTS[name])] if previous else []
    scope = [settings.ingest_dir, *reused, *_pointers(Path(build.index_dir))]
    scope += [cache] if name == "vectors" else []
    with _shared_state(settings, f"stage {name}", build.run, scope) as session:
        session.pull(_stage_inputs(session, Path(build.building), name))
        return run_stage(build, name, settings.index, cache).model_dump(mode="json")


def _stage_inputs(session: StepSession, building: Path, name: str) -> list[Path]:
    """The build folder's paths stage ``name`` reads or writes: all but the other stages' outputs."""
    others = {
        out
        for other in INDEX_STAGES
        if other not in (name, *STAGE_READS.get(name, ()))
        for out in STAGE_OUTPUTS[other]
    }
    kept = [building / child for child in sorted(session.children(building)) if child not in others]
    return [*kept, *(building / out for out in STAGE_OUTPUTS[name])]


STAGE_READS = {"graph": ("entities",)}
"""The other stages whose outputs a stage reads (the graph stage reads the entities stage's table)."""


def validate(params: Json, plan: Json) -> dict[str, str]:
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    with _shared_state(settings, "validate", build.run, _build_scope(settings, build)):
        return validate_build(build, settings.index)


def publish(params: Json, plan: Json, stages: list[Json], validation: dict[str, str]) -> Json:
    """Publish the version (atomic ``current`` switch), then upload it when a remote is configured (its
    remote ``current`` moves last, after every file); returns its manifest. A retried step finds the
    version published and its upload complete, and only points the remote ``current`` again."""
    settings = RebuildParams.model_validate(params).settings()
    reports = {r.name: r for r in (StageReport.model_validate(s) for s in stages)}
    build = _local_plan(settings, plan)
    with _shared_state(settings, "publish", build.run, _build_scope(settings, build)) as session:
        manifest = publish_build(
            build,
            json.loads(settings.model_dump_json()),
            settings.index.keep_versions,
            reports,
            validation,
        )
        # in object storage the state keeps what this worker holds (the new version and the one it reused
        # from); older versions and other runs' build folders are dropped there, never downloaded
        index_dir = Path(build.index_dir)
        kept = {p.name for p in VersionStore(index_dir).versions()} | {CURRENT, CURRENT_FILE}
        session.forget([index_dir / name for name in session.children(index_dir) - kept])
    if (remote := remote_root(settings.remote)) is not None:
        upload_version(Path(build.index_dir) / manifest.version, remote)
    return manifest.model_dump(mode="json")


def report(params: Json, outcomes: list[Json], plan: Json, manifest: Json | None) -> Json:
    """Write the run report; when nothing was rebuilt, it describes the version still current."""
    settings = RebuildParams.model_validate(params).settings()
    build = _local_plan(settings, plan)
    _, results = _local_outcomes(settings, outcomes, "report")
    scope = [settings.reports_dir, build.previous]
    with _shared_state(settings, "report", build.run, scope):
        if manifest is None and build.up_to_date and build.previous:
            current = VersionStore(Path(build.index_dir)).manifest(Path(build.previous))
        else:
            current = Manifest.model_validate(manifest) if manifest else None
        result = make_report(results, build, current)
        path = write_report(result, settings.reports_dir)
    return {"report": str(path), "markdown": render_markdown(result), **result.model_dump(mode="json")}


def gc(params: Json) -> Json:
    """Collect the garbage in object storage (``index.state_gc``): under the state URL, blobs no longer
    named and older than ``remote.gc_grace_hours`` and old checkpoints; under the remote URL, versions
    beyond ``index.keep_versions``. Returns the report; a no-op, saying so, without either URL.

    The last task of the run, after *publish* and *report*: no step of this run pushes any more, and the
    DAG runs one run at a time, so no other run's step does either. That is why it collects although its
    own run's records are younger than the grace period (``force``); the grace period still keeps the
    blobs this run uploaded and already replaced, which the next run's collection deletes."""
    settings = RebuildParams.model_validate(params).settings()
    remote = settings.remote
    if not remote.state_url and not remote.url:
        log.info("gc: neither remote.state_url nor remote.url is set: nothing in object storage to collect")
        return {"state": None, "versions": None}
    return collect_garbage(remote, settings.index.keep_versions, force=True).model_dump(mode="json")
