"""Shared fixtures: the real sample dumps under data/samples, and one ingest of all of them."""

from __future__ import annotations

import bz2
import importlib.util
import json
import sys
from collections.abc import Iterator
from dataclasses import dataclass
from functools import cache
from pathlib import Path
from types import ModuleType
from typing import TYPE_CHECKING

import pytest

from schemas.settings import HqaSettings, RemoteSettings

if TYPE_CHECKING:
    from ingest.pipeline import IngestReport

REPO = Path(__file__).resolve().parents[1]
SAMPLES = REPO / "data" / "samples"
WIKIDATA_ITEMS = SAMPLES / "wikidata" / "wikidata-sample-items.json.bz2"
WIKIDATA_API = SAMPLES / "wikidata" / "wikidata-api-stream-sample.json.bz2"
ENWIKI_SAMPLE = SAMPLES / "wikipedia" / "enwiki-2016-sample-pages-articles.xml.bz2"
ENWIKI_TABLES = SAMPLES / "wikipedia" / "enwiki-table-markup.xml.bz2"
OTTQA = SAMPLES / "ottqa"


@cache
def raw_entities(path: Path = WIKIDATA_ITEMS) -> dict[str, dict]:
    """Every entity of a sample Wikidata dump as parsed JSON, straight from the file: expected values in
    tests are read here, not through the code under test."""
    out = {}
    with bz2.open(path, "rt") as f:
        for line in f:
            line = line.strip().rstrip(",")
            if line.startswith("{"):
                entity = json.loads(line)
                out[entity["id"]] = entity
    return out


@pytest.fixture(scope="session")
def raw_dump() -> dict[str, dict]:
    """Every entity of both sample Wikidata dumps, parsed straight from the files."""
    entities = {}
    for path in sorted((SAMPLES / "wikidata").glob("*.json.bz2")):
        entities.update(raw_entities(path))
    return entities


@pytest.fixture(scope="session")
def settings() -> HqaSettings:
    return HqaSettings()


@pytest.fixture(scope="session")
def sample_ingest(tmp_path_factory: pytest.TempPathFactory, settings: HqaSettings) -> IngestReport:
    """All bundled samples ingested once, with the parser pool on (as in production)."""
    from ingest.pipeline import run_ingest, sample_inputs
    from ingest.shard_plan import IngestOptions

    out = tmp_path_factory.mktemp("ingest")
    options = IngestOptions.from_settings(settings.model_copy(update={"workers": 2}))
    return run_ingest(sample_inputs(SAMPLES), out, property_table=settings.property_table, options=options)


@pytest.fixture(scope="session")
def sample_names(
    sample_ingest: IngestReport, settings: HqaSettings, tmp_path_factory: pytest.TempPathFactory
):
    """The name tables of the sample ingest (``index.names``), with a DuckDB to look them up."""
    from index.duck import MemoryBudget, connect
    from index.names import NameStore, build_names

    work = tmp_path_factory.mktemp("names")
    budget = MemoryBudget(memory_mb=512)
    with connect(budget, work / "spill-build", database=work / "names.duckdb") as con:
        build_names(sample_ingest.out_dir, work / "names", con)
    return NameStore(work / "names", connect(budget, work / "spill"), settings.unit_table)


@pytest.fixture(scope="session")
def sample_evidence(tmp_path_factory: pytest.TempPathFactory, sample_ingest: IngestReport, sample_names):
    """The sample ingest verbalized once: (evidence folder, per-file stats)."""
    from index.evidence import verbalize_all

    out = tmp_path_factory.mktemp("evidence")
    return out, verbalize_all(sample_ingest.out_dir, out, sample_names)


@pytest.fixture(scope="session")
def sample_index(
    tmp_path_factory: pytest.TempPathFactory, sample_ingest: IngestReport, settings: HqaSettings
):
    """All indexes built once from the sample ingest, into a state folder of their own."""
    from index.build import build_index

    state = tmp_path_factory.mktemp("state")
    index_settings = settings.model_copy(update={"state_dir": state})
    result = build_index(index_settings, ingest_dir=sample_ingest.out_dir)
    return index_settings, result


@dataclass(frozen=True)
class S3Bucket:
    """A bucket on the local S3 server: what a test needs to name it in settings."""

    endpoint: str
    bucket: str

    def settings(self) -> RemoteSettings:
        return RemoteSettings(endpoint=self.endpoint, region="us-east-1", chunk_mb=1)

    def url(self, prefix: str) -> str:
        return f"s3://{self.bucket}/{prefix}"


@pytest.fixture(scope="session")
def s3_bucket(tmp_path_factory: pytest.TempPathFactory) -> Iterator[S3Bucket]:
    """moto's S3 server on 127.0.0.1 (tests.object_store_server), one bucket on it, and fake credentials in
    the standard AWS variables for the session; the server is stopped by its pid afterwards."""
    import pyarrow.fs as pafs

    from tests import object_store_server

    root = tmp_path_factory.mktemp("s3-server")
    with pytest.MonkeyPatch.context() as env, object_store_server.running(root) as server:
        for name, value in object_store_server.CREDENTIALS.items():
            env.setenv(name, value)
        endpoint = server.url.removeprefix("http://")
        fs = pafs.S3FileSystem(
            endpoint_override=endpoint, scheme="http", region="us-east-1", allow_bucket_creation=True
        )
        fs.create_dir("hqa-test")
        yield S3Bucket(server.url, "hqa-test")


def load_script(path: Path) -> ModuleType:
    """A benchmark script imported by its path (benchmarks/ is not a package), under its file's name."""
    spec = importlib.util.spec_from_file_location(path.stem, path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # dataclasses look their module up while the class is made
    spec.loader.exec_module(module)
    return module
