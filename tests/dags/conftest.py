"""Airflow for the DAG tests: its own SQLite metadata DB in an ignored folder, no examples, offline.

Airflow reads ``AIRFLOW_HOME`` when it is first imported, so the environment is set here, at
collection, before any test imports it; the DB is created once per session with ``airflow db migrate``.
"""

from __future__ import annotations

import os
import shutil
import subprocess
import sys
import uuid
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
AIRFLOW_HOME = REPO / ".state" / "pytest-airflow" / uuid.uuid4().hex[:12]
os.environ.update(
    {
        "AIRFLOW_HOME": str(AIRFLOW_HOME),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "HQA_AIRFLOW__RETRIES": "0",  # a failing task fails the test at once, not after back-offs
    }
)


@pytest.fixture(scope="session")
def airflow_db():
    AIRFLOW_HOME.mkdir(parents=True, exist_ok=True)
    done = subprocess.run(
        [sys.executable, "-m", "airflow", "db", "migrate"], capture_output=True, text=True, env=os.environ
    )
    assert done.returncode == 0, done.stderr[-3000:]
    yield AIRFLOW_HOME
    shutil.rmtree(AIRFLOW_HOME, ignore_errors=True)


@pytest.fixture(scope="session")
def dag_bag(airflow_db):
    from airflow.dag_processing.dagbag import DagBag

    return DagBag(str(REPO / "dags"))
