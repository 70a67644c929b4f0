"""The whole build on the sample ingest: manifest, the indexes, reuse, and readers across rebuilds."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
from pathlib import Path

import polars as pl
import pytest

from index.bm25 import Bm25Index
from index.build import build_index
from index.embedder import Embedder
from index.reader import IndexReader
from index.versions import BUILDING_PREFIX, VersionStore
from query import Engine, EngineConfig


@pytest.fixture(scope="module")
def reader(sample_index) -> IndexReader:
    settings, _ = sample_index
    return IndexReader.open(settings.index_dir)


def test_manifest_counts_agree_across_indexes(sample_index, reader):
    _, result = sample_index
    m = result.manifest
    assert result.built and set(m.validation.values()) == {"ok"}
    assert set(m.validation) == {"bm25", "aliases", "vectors", "graph", "statements", "tables"}
    evidence = pl.read_parquet(reader.evidence_files())["evidence_id"].n_unique()
    assert m.counts["evidence"] == evidence
    assert reader.bm25.count() == evidence
    embedded = pl.read_parquet(reader.evidence_files()).filter(
        pl.col("source_type").is_in(["text", "table", "infobox"])
    )
    assert reader.vectors.count() == embedded["evidence_id"].n_unique() < evidence  # KG statements: no vector
    assert reader.graph.counts()["Evidence"] == evidence
    assert sum(m.counts[f"evidence_{t}"] for t in ("kg", "text", "table", "infobox")) == evidence
    assert {i.reader for i in m.inputs} >= {"wikidata", "wikipedia", "ottqa"}
    assert all(len(part) == 64 for i in m.inputs for part in i.sha256.split(":"))  # OTT-QA: two files
    assert m.model["name"] and m.libraries["kuzu"] == "0.11.3"
    assert set(m.stages) == {"evidence", "entities", "bm25", "vectors", "graph", "statements", "tables"}
    assert m.counts["statements_statements"] == reader.statements.count()


def test_bm25_finds_belgiums_population(reader):
    hits = reader.bm25.search("population of Belgium", 10, source_types=["kg"])
    assert any(h.text.startswith("Belgium, population, ") for h in hits[:3])


@pytest.mark.parametrize("question", ['"Belgium', "population: (Belgium", 'a"b:c(d)e', "NOT AND OR", "*?~^"])
def test_bm25_survives_query_syntax(reader, question):
    hits = reader.bm25.search(question, 5)
    if "Belgium" in question:
        assert any("Belgium" in h.text for h in hits)


def test_paraphrase_finds_population_through_vectors(reader):
    """A question without the word "population" reaches the article passage that gives Belgium's, by its
    vector alone (the default embedder; KG statements carry no vector by default, so prose answers)."""
    vector = Embedder().encode(["How many people live in Belgium?"])[0]
    hits = reader.vectors.search(vector, 10, source_types=["text"])
    rows = pl.read_parquet(reader.evidence_files()).filter(
        pl.col("evidence_id").is_in([h.evidence_id for h in hits])
    )
    assert any(
        title == "Belgium" and "population of" in text
        for title, text in rows.select("title", "text").iter_rows()
    )
    assert reader.vectors.search(vector, 10, source_types=["kg"]) == []


def test_two_hop_from_page_through_table_cell_link(reader):
    rows = reader.graph.query(
        "MATCH (p:Page {title: $title})-[:HAS_EVIDENCE]->(e:Evidence {source_type: 'table'})"
        "<-[:MENTIONED_IN {role: 'link'}]-(x:Entity)<-[:ABOUT]-(q:Page) "
        "RETURN DISTINCT q.title AS title",
        {"title": "Academy Award for Best Production Design"},
    )
    titles = {r["title"] for r in rows}
    assert {"Bo Welch", "A Little Princess (1995 film)"} <= titles
    linked = {
        r["title"]
        for r in reader.graph.query(
            "MATCH (:Page {title: $title})-[:LINKS_TO {source_kind: 'table'}]->(q:Page) "
            "RETURN q.title AS title",
            {"title": "Academy Award for Best Production Design"},
        )
    }
    assert "Bo Welch" in linked


def test_unchanged_inputs_make_no_new_version(sample_index, sample_ingest):
    settings, first = sample_index
    again = build_index(settings, ingest_dir=sample_ingest.out_dir)
    assert not again.built
    assert again.manifest.version == first.manifest.version


def test_reader_keeps_its_version_during_a_rebuild(sample_index, sample_ingest):
    settings, first = sample_index
    old = IndexReader.open(settings.index_dir)
    old_count = old.bm25.count()
    changed = settings.model_copy(
        update={"index": settings.index.model_copy(update={"entity_summaries": False})}
    )
    result: dict = {}
    build = threading.Thread(
        target=lambda: result.update(new=build_index(changed, ingest_dir=sample_ingest.out_dir))
    )
    build.start()
    answers = []
    while build.is_alive():  # the old reader keeps answering, from its own version
        answers.append((old.bm25.count(), old.bm25.search("population of Belgium", 3)[0].evidence_id))
    build.join()
    new = result["new"]
    assert new.built and new.manifest.version != first.manifest.version
    assert answers and all(count == old_count for count, _ in answers)
    assert old.version == first.manifest.version and old.bm25.count() == old_count
    fresh = IndexReader.open(settings.index_dir)
    assert fresh.version == new.manifest.version
    summaries = first.manifest.counts["evidence_kg"] - new.manifest.counts["evidence_kg"]
    assert summaries > 0 and fresh.bm25.count() == old_count - summaries
    # stages whose inputs did not change are reused, and no evidence was embedded twice
    assert new.manifest.stages["entities"].reused_from == first.manifest.version
    assert new.manifest.stages["statements"].reused_from == first.manifest.version
    assert new.manifest.stages["vectors"].details["embedded"] == 0
    assert VersionStore(settings.index_dir).current() == fresh.path


def test_specificity_ranks_rare_words_above_common_ones(reader):
    bm25 = reader.bm25
    common, plain, rare = (bm25.specificity(w) for w in ("the", "population", "Nicomachus"))
    assert 0.0 <= common < plain < rare <= 1.0
    assert bm25.specificity("Aristotle Nicomachus") == rare  # the rarest word counts
    assert bm25.specificity("") == 0.0 and bm25.specificity("zzzqqxj") == 1.0
    again = Bm25Index(bm25.path)  # a second index opened in the same process has its own analyzer
    assert again.specificity("Nicomachus") == rare


FILL_DISK = """
import json, resource, signal, sys
from pathlib import Path
from index.build import build_index
from schemas.settings import HqaSettings

state, ingest, limit, change = Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]), sys.argv[4]
settings = HqaSettings(state_dir=state)
force = change == "force"
if change == "vector-settings":  # only the vector stage's fingerprint changes: it alone is built
    settings.index.ann_nprobes += 1
signal.signal(signal.SIGXFSZ, signal.SIG_IGN)  # a write past the limit fails with EFBIG instead of killing
resource.setrlimit(resource.RLIMIT_FSIZE, (limit, limit))
try:
    build_index(settings, ingest_dir=ingest, force=force)
except Exception as exc:
    print(json.dumps({"type": type(exc).__name__, "message": str(exc)}))
    sys.exit(1)
"""


@pytest.mark.parametrize(
    ("change", "limit", "stage", "folder"),
    [
        # Lance (Rust) writing the vector table: "LanceError(IO): File too large (os error 27), …"
        ("vector-settings", 8 << 20, "vectors", "vectors"),
        # pyarrow writing the first evidence file over 1 MB: "[Errno 27] Error writing bytes to file"
        ("force", 1 << 20, "verbalize", "evidence/passages.enwiki-2016-sample-pages-articles"),
    ],
)
def test_a_build_that_fills_the_disk_fails_clearly_and_keeps_serving_the_previous_version(
    sample_index, sample_ingest, tmp_path: Path, change: str, limit: int, stage: str, folder: str
) -> None:
    """Issue 17: the real build, in a process whose files may not grow past ``limit`` (RLIMIT_FSIZE: the
    write fails as on a full disk). Before, the error was the library's (a Lance error pointing into
    its Rust source, a pyarrow OSError) and named no folder; now it names the folder being written and
    what to do. The build folder is removed, ``current`` does not move, and the previous version answers."""
    settings, first = sample_index
    root = tmp_path / "state" / "indexes"
    store = VersionStore(root)
    building = store.start("v1")
    shutil.copytree(first.version_dir, building, dirs_exist_ok=True, copy_function=os.link,
                    ignore=shutil.ignore_patterns("*.lock", "manifest.json", ".pins"))  # fmt: skip
    previous = store.publish(building, first.manifest.model_copy(update={"version": "v1"}))
    env = {**os.environ, "HQA_EMBEDDING_CACHE": str(settings.embedding_cache_dir)}
    args = [str(tmp_path / "state"), str(sample_ingest.out_dir), str(limit), change]
    run = subprocess.run(
        [sys.executable, "-c", FILL_DISK, *args], capture_output=True, text=True, env=env, timeout=120
    )
    assert run.returncode == 1, run.stderr[-2000:]
    error = json.loads(run.stdout.strip().splitlines()[-1])
    assert error["type"] == "BuildOutOfSpace", error
    assert f"the {stage} step of build" in error["message"] and f"/{folder}" in error["message"]
    assert "File too large" in error["message"] and "free space and run the build again" in error["message"]
    assert f"the previous version {previous} is still served" in error["message"]
    assert not list(root.glob(f"{BUILDING_PREFIX}*"))  # `hqa build` removes what it had written
    assert store.current() == previous and store.versions() == [previous]
    with Engine.open(root, EngineConfig(reader="candidates")) as engine:
        answer = engine.ask("What was the name of Aristotle's father?")
    assert answer.index_version == "v1" and answer.answer == "Nicomachus"
