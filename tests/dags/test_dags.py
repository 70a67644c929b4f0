"""The DAGs on real Airflow (``dag.test()``, SQLite) over the real sample dumps and real indexes."""

from __future__ import annotations

import bz2
import json
import os
import shutil
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from index.remote_versions import remote_listing
from index.versions import MANIFEST, VersionStore
from ingest.object_store import RemoteRoot
from tests.conftest import ENWIKI_SAMPLE, ENWIKI_TABLES, OTTQA, WIKIDATA_API, WIKIDATA_ITEMS

REBUILD, QA = "hqa_index_rebuild", "hqa_batch_qa"


def test_every_dag_imports_cleanly(dag_bag):
    assert dag_bag.import_errors == {}
    assert {REBUILD, QA} <= set(dag_bag.dag_ids)
    rebuild = dag_bag.get_dag(REBUILD)
    assert rebuild.timetable.expression in {"@weekly", "0 0 * * 0"}
    assert rebuild.default_args["retry_exponential_backoff"] is True
    params = {"wikidata", "wikipedia", "ottqa", "language", "shard_mb", "workers", "force"}
    assert params <= set(rebuild.params)
    ingest = rebuild.get_task("ingest")
    assert ingest.is_mapped
    statements = rebuild.get_task("statements")
    assert statements.upstream_task_ids == {"plan", "evidence"}
    assert statements.downstream_task_ids == {"validate", "publish"}
    assert rebuild.get_task("tables").upstream_task_ids == {"plan", "evidence"}
    # embedding mapped over the evidence files; the vectors task only assembles what they embedded
    assert rebuild.get_task("embed").is_mapped
    assert rebuild.get_task("evidence_parts").upstream_task_ids == {"plan", "evidence"}
    assert rebuild.get_task("vectors").upstream_task_ids == {"plan", "embed"}
    # garbage in object storage is collected last, when no step of the run pushes any more
    assert rebuild.get_task("gc").upstream_task_ids == {"report"}
    assert rebuild.get_task("gc").downstream_task_ids == set()
    assert rebuild.get_task("gc").trigger_rule == "none_failed"
    qa = dag_bag.get_dag(QA)
    assert [asset.name for asset in qa.timetable.asset_condition.objects] == ["hqa_index"]


@pytest.fixture(scope="module")
def dumps(tmp_path_factory) -> dict[str, Path]:
    """Copies of the sample dumps, so one can be changed between runs."""
    root = tmp_path_factory.mktemp("dumps")
    copies = {}
    for path in (WIKIDATA_ITEMS, WIKIDATA_API, ENWIKI_SAMPLE, ENWIKI_TABLES):
        copies[path.name] = Path(shutil.copy(path, root / path.name))
    shutil.copytree(OTTQA, root / "ottqa")
    copies["ottqa"] = root / "ottqa"
    return copies


@pytest.fixture(scope="module")
def airflow_env(tmp_path_factory, sample_index, airflow_db, s3_bucket):
    """Task settings come from the environment, as on a worker: a fresh state folder per module, and a
    remote on the local S3 server that the publish step uploads each version to."""
    index_settings, _ = sample_index
    state = tmp_path_factory.mktemp("airflow-state")
    with pytest.MonkeyPatch.context() as mp:
        mp.setenv("HQA_STATE_DIR", str(state))
        mp.setenv("HQA_REMOTE__URL", s3_bucket.url("airflow"))
        mp.setenv("HQA_REMOTE__ENDPOINT", s3_bucket.endpoint)
        # The fixture's cache holds every sample embedding: the DAG re-embeds nothing.
        mp.setenv("HQA_EMBEDDING_CACHE", str(index_settings.embedding_cache_dir))
        yield state


def _conf(dumps: dict[str, Path]) -> dict:
    return {
        "wikidata": [str(dumps[WIKIDATA_ITEMS.name]), str(dumps[WIKIDATA_API.name])],
        "wikipedia": [str(dumps[ENWIKI_SAMPLE.name]), str(dumps[ENWIKI_TABLES.name])],
        "ottqa": str(dumps["ottqa"]),
    }


def _run(dag_bag, dag_id: str, conf: dict | None = None):
    run = dag_bag.get_dag(dag_id).test(run_conf=conf)
    states = {}
    for ti in run.get_task_instances():
        states.setdefault(ti.task_id, set()).add(str(ti.state))
    return run, states


def _report(state: Path) -> dict:
    return json.loads((state / "reports" / "rebuild-latest.json").read_text())


def _asset_events() -> list[dict]:
    from airflow.models.asset import AssetEvent, AssetModel
    from airflow.utils.session import create_session

    with create_session() as session:
        rows = (
            session.query(AssetEvent)
            .join(AssetModel, AssetEvent.asset_id == AssetModel.id)
            .filter(AssetModel.name == "hqa_index")
            .all()
        )
        return [dict(r.extra or {}) for r in rows]


@pytest.fixture(scope="module")
def first_run(dag_bag, airflow_env, dumps):
    events_before = len(_asset_events())
    run, states = _run(dag_bag, REBUILD, _conf(dumps))
    return run, states, _report(airflow_env), events_before


def test_rebuild_dag_builds_the_same_index_as_hqa_build(first_run, airflow_env, sample_index, s3_bucket):
    run, states, report, events_before = first_run
    assert str(run.state) == "success", states
    assert all(s == {"success"} for s in states.values()), states
    assert report["published"] and not report["up_to_date"]
    assert [s["skipped"] for s in report["shards"]] == [False] * 5
    store = VersionStore(airflow_env / "indexes")
    manifest = store.manifest(store.current())
    assert manifest.version == report["version"]
    _, cli_result = sample_index
    assert manifest.counts == cli_result.manifest.counts
    assert manifest.validation == {
        "bm25": "ok",
        "aliases": "ok",
        "vectors": "ok",
        "graph": "ok",
        "statements": "ok",
        "tables": "ok",
    }
    assert manifest.stages["vectors"].details["embedded"] == 0  # all from the shared cache
    events = _asset_events()
    assert len(events) == events_before + 1 and events[-1]["version"] == manifest.version
    remote = RemoteRoot.open(s3_bucket.url("airflow"), s3_bucket.settings())
    assert remote_listing(remote).files.keys() == {*manifest.files, MANIFEST}
    assert remote_listing(remote).version == manifest.version


def test_rerun_with_unchanged_inputs_skips_every_shard_and_publishes_nothing(
    first_run, dag_bag, airflow_env, dumps
):
    store = VersionStore(airflow_env / "indexes")
    current, versions = store.current(), store.versions()
    ingest_files = sorted((airflow_env / "ingest").rglob("*.parquet"))
    mtimes = [p.stat().st_mtime_ns for p in ingest_files]
    events_before = len(_asset_events())

    run, states = _run(dag_bag, REBUILD, _conf(dumps))

    assert str(run.state) == "success"
    report = _report(airflow_env)
    assert [s["skipped"] for s in report["shards"]] == [True] * 5
    assert report["up_to_date"] and not report["published"]
    assert states["verbalize"] == {"skipped"} and states["publish"] == {"skipped"}
    assert states["report"] == {"success"}
    assert states["gc"] == {"success"}
    assert [p.stat().st_mtime_ns for p in ingest_files] == mtimes  # nothing rewritten
    assert store.current() == current and store.versions() == versions
    assert len(_asset_events()) == events_before  # no new index, no downstream trigger


def _drop_last_entity(path: Path) -> str:
    lines = bz2.decompress(path.read_bytes()).decode().splitlines()
    entity_lines = [i for i, line in enumerate(lines) if line.startswith("{")]
    dropped = json.loads(lines[entity_lines[-1]].rstrip(","))["id"]
    del lines[entity_lines[-1]]
    path.write_bytes(bz2.compress(("\n".join(lines) + "\n").encode()))
    return dropped


def test_a_changed_dump_reingests_only_its_shard(first_run, dag_bag, airflow_env, dumps):
    store = VersionStore(airflow_env / "indexes")
    before = store.manifest(store.current())
    dropped = _drop_last_entity(dumps[WIKIDATA_ITEMS.name])

    run, states = _run(dag_bag, REBUILD, _conf(dumps))

    assert str(run.state) == "success", states
    report = _report(airflow_env)
    ingested = [s["shard"] for s in report["shards"] if not s["skipped"]]
    assert ingested == [f"wikidata:{WIKIDATA_ITEMS.name}:all"]
    after = store.manifest(store.current())
    assert after.version != before.version and report["published"]
    assert after.counts["entities_entities"] < before.counts["entities_entities"]
    entities = pq.read_table(store.current() / "entities" / "entities.parquet", columns=["entity_id"])
    assert dropped not in entities["entity_id"].to_pylist()


def test_batch_qa_dag_answers_every_question_on_the_published_index(first_run, dag_bag, airflow_env):
    questions = airflow_env / "questions.jsonl"
    texts = pq.read_table(
        sorted((VersionStore(airflow_env / "indexes").current() / "evidence").glob("*.parquet"))[0],
        columns=["evidence_id", "text"],
    ).slice(0, 3)
    # asked as questions ("?"): text that is no question is not read at all (the answer guard)
    asked = [f"{t}?" for t in texts["text"].to_pylist()]
    lines = [json.dumps({"id": f"q{i}", "question": q}) for i, q in enumerate(asked)]
    questions.write_text("\n".join([*lines, "{not json"]) + "\n")
    out = airflow_env / "answers" / "run.parquet"

    run, states = _run(
        dag_bag, QA, {"questions": str(questions), "out": str(out), "chunk_size": 2, "reader": "candidates"}
    )

    assert str(run.state) == "success", states
    assert states["answer"] == {"success"}
    answers = pq.read_table(out).to_pylist()
    store = VersionStore(airflow_env / "indexes")
    assert [a["question_id"] for a in answers[:3]] == ["q0", "q1", "q2"]
    assert {a["index_version"] for a in answers} == {store.current().name}
    for answer, evidence_id in zip(answers[:3], texts["evidence_id"].to_pylist(), strict=True):
        assert answer["evidence_ids"][0] == evidence_id
        assert answer["evidence_scores"] == sorted(answer["evidence_scores"], reverse=True)
    assert answers[3]["error"] and "line 4" in answers[3]["error"]
    assert not os.path.exists(out.with_name(f".{out.name}.parts"))
