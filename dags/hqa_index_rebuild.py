"""Scheduled index rebuild: discover → ingest each shard → plan → verbalize each file → embed each
evidence file, beside the other index stages → vectors (assembles the embedded parts) → validate →
publish (emits the ``hqa_index`` asset) → report → gc (deletes what object storage no longer needs).

Wiring only: every task calls one step of ``index.rebuild``. Unchanged shards and stages are
skipped by those steps; when nothing changed at all, the plan has no files to verbalize, the
mapped task expands to nothing, everything after it is skipped (no asset event), and the report
says so.
"""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import Asset, Param, dag, get_current_context, task

from index import rebuild
from schemas.settings import HqaSettings

SETTINGS = HqaSettings()
INDEX = Asset(name=rebuild.INDEX_ASSET_NAME, uri=rebuild.INDEX_ASSET_URI)
PARAMS = {name: Param(default, description=doc) for name, (default, doc) in rebuild.param_defaults().items()}


@dag(
    dag_id="hqa_index_rebuild",
    schedule=SETTINGS.airflow.schedule,
    start_date=datetime(2026, 1, 1),
    catchup=False,
    max_active_runs=1,
    params=PARAMS,
    tags=["hqa"],
    default_args=SETTINGS.airflow.task_defaults(),
    doc_md=__doc__,
)
def hqa_index_rebuild():
    @task
    def discover(params=None):
        return rebuild.discover(params, get_current_context()["run_id"])

    @task(max_active_tis_per_dagrun=SETTINGS.airflow.ingest_parallelism)
    def ingest(job, params=None):
        return rebuild.ingest(params, job)

    @task
    def plan(outcomes, params=None):
        return rebuild.plan(params, list(outcomes), get_current_context()["dag_run"].run_after)

    @task
    def files_to_verbalize(plan):
        return rebuild.files_to_verbalize(plan)

    @task
    def verbalize(job, plan, params=None):
        return rebuild.verbalize(params, plan, job)

    @task
    def evidence(plan, files, params=None):
        return rebuild.evidence(plan, list(files), params)

    @task
    def evidence_parts(plan, params=None):
        return rebuild.evidence_parts(params, plan)

    @task
    def embed(part, plan, params=None):
        return rebuild.embed(params, plan, part)

    @task
    def stage(plan, name, params=None):
        return rebuild.stage(params, plan, name)

    @task
    def validate(plan, params=None):
        return rebuild.validate(params, plan)

    @task(outlets=[INDEX])
    def publish(plan, stages, validation, params=None):
        manifest = rebuild.publish(params, plan, stages, validation)
        get_current_context()["outlet_events"][INDEX].extra = {"version": manifest["version"]}
        return manifest

    @task(trigger_rule="none_failed")
    def report(outcomes, plan, manifest, params=None):
        return rebuild.report(params, list(outcomes), plan, manifest)

    @task(trigger_rule="none_failed")
    def gc(params=None):
        return rebuild.gc(params)

    outcomes = ingest.expand(job=discover())
    planned = plan(outcomes)
    files = verbalize.partial(plan=planned).expand(job=files_to_verbalize(planned))
    evidence_stage = evidence(planned, files)
    entities = stage.override(task_id="entities")(planned, "entities")
    graph = stage.override(task_id="graph")(planned, "graph")
    bm25 = stage.override(task_id="bm25")(planned, "bm25")
    vectors = stage.override(task_id="vectors")(planned, "vectors")
    statements = stage.override(task_id="statements")(planned, "statements")
    tables = stage.override(task_id="tables")(planned, "tables")
    parts = evidence_parts(planned)
    embedded = embed.partial(plan=planned).expand(part=parts)
    evidence_stage >> [entities, bm25, parts, statements, tables]
    embedded >> vectors
    entities >> graph
    checks = validate(planned)
    [graph, bm25, vectors, statements, tables] >> checks
    manifest = publish(planned, [evidence_stage, entities, bm25, vectors, graph, statements, tables], checks)
    report(outcomes, planned, manifest) >> gc()


hqa_index_rebuild()
