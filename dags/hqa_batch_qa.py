"""Batch question answering, triggered by every newly published index (the ``hqa_index`` asset):
plan (pin the index version, cut the questions into chunks) → answer each chunk (mapped) → combine
into one answers Parquet with evidence ids, scores, timings and the index version.

Wiring only: every task calls one step of ``query.batch.steps``; which answerer runs is decided
in ``query.batch.answerers``, so this file does not change when the query engine replaces BM25.
"""

from __future__ import annotations

from datetime import datetime

from airflow.sdk import Asset, Param, dag, task

from index.rebuild import INDEX_ASSET_NAME, INDEX_ASSET_URI
from query.batch import steps as batch_steps
from schemas.settings import HqaSettings

SETTINGS = HqaSettings()
PARAMS = {
    name: Param(default, description=doc) for name, (default, doc) in batch_steps.param_defaults().items()
}


@dag(
    dag_id="hqa_batch_qa",
    schedule=[Asset(name=INDEX_ASSET_NAME, uri=INDEX_ASSET_URI)],
    start_date=datetime(2026, 1, 1),
    catchup=False,
    params=PARAMS,
    tags=["hqa"],
    default_args=SETTINGS.airflow.task_defaults(),
    doc_md=__doc__,
)
def hqa_batch_qa():
    @task
    def plan(params=None):
        return batch_steps.plan(params)

    @task
    def answer(chunk):
        return batch_steps.answer(chunk)

    @task
    def combine(parts):
        return batch_steps.combine(list(parts))

    combine(answer.expand(chunk=plan()))


hqa_batch_qa()
