"""The embed step mapped over evidence files gives the vectors one embed step gives; parts reuse the
shared cache and never write into it; source types left out of the vector table get no vector and
are still found by BM25 and answered from the KG; a GPU asked for where there is none fails at once."""

from __future__ import annotations

from pathlib import Path

import duckdb
import numpy as np
import pytest

from index.embed_parts import embed_part, merge_staged, part_names, staging_root
from index.embedder import Embedder, EmbedderSettings
from index.embedding_cache import EmbeddingCache, vector_matrix
from index.evidence_reader import EvidenceReader
from index.vectors import build_vectors, embed_missing, vector_batches

FAST = "wordllama-l2-256"  # the mechanics, not the model, are under test: the fastest embedder


@pytest.fixture(scope="module")
def version_dir(sample_index) -> Path:
    _, result = sample_index
    return result.version_dir


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    return Embedder(EmbedderSettings(model=FAST))


def _vectors(version_dir: Path, cache: EmbeddingCache, embedder: Embedder) -> tuple[list[str], np.ndarray]:
    with duckdb.connect() as con:
        reader = vector_batches(
            EvidenceReader(version_dir), cache, con, embedder.dimension, embedder.model_name
        )
        table = reader.read_all()
    return table.column("evidence_id").to_pylist(), vector_matrix(table.column("vector"))


def test_mapped_parts_give_the_vectors_of_one_step(version_dir, embedder, tmp_path) -> None:
    parts = part_names(version_dir)
    assert len(parts) > 1, "the sample evidence spans several files"
    one = EmbeddingCache(tmp_path / "one", embedder.cache_key)
    with duckdb.connect() as con:
        whole = embed_missing(EvidenceReader(version_dir), embedder, one, con)
    one_ids, one_vectors = _vectors(version_dir, one, embedder)

    shared = EmbeddingCache(tmp_path / "shared", embedder.cache_key)
    computed = 0
    for part in range(len(parts)):
        with duckdb.connect() as con:
            computed += embed_part(version_dir, part, embedder, shared, tmp_path / "work", None, con).computed
    assert not shared.part_files(), "a part task never writes the shared cache"
    assert computed == whole.computed == EvidenceReader(version_dir).rows(), "each id embedded once"
    assert merge_staged(shared, tmp_path / "work").rows == computed
    assert not staging_root(tmp_path / "work", embedder.cache_key).exists()
    part_ids, part_vectors = _vectors(version_dir, shared, embedder)
    assert part_ids == one_ids
    np.testing.assert_allclose(part_vectors, one_vectors, atol=1e-5)


def test_a_part_embeds_only_what_the_shared_cache_lacks(version_dir, embedder, tmp_path) -> None:
    shared = EmbeddingCache(tmp_path / "shared", embedder.cache_key)
    with duckdb.connect() as con:
        first = embed_part(version_dir, 0, embedder, shared, tmp_path / "work", None, con)
        merge_staged(shared, tmp_path / "work")
        again = embed_part(version_dir, 0, embedder, shared, tmp_path / "work", None, con)
    assert first.computed > 0 and again.computed == 0 and again.reused == first.computed


def test_sources_not_embedded_get_no_vector_and_are_still_found(
    sample_index, version_dir, embedder, tmp_path
):
    from index.bm25 import Bm25Index
    from index.vectors import VectorIndex, VectorIndexSettings
    from query.retrieve.evidence_store import VectorMatrix

    cache = EmbeddingCache(tmp_path / "cache", embedder.cache_key)
    sources = ["text", "table", "infobox"]
    with duckdb.connect() as con:
        counts = EvidenceReader(version_dir).count_by_type(con)
        stats = build_vectors(
            EvidenceReader(version_dir), embedder, cache, tmp_path / "vectors", VectorIndexSettings(), con,
            sources=sources,
        )  # fmt: skip
    assert counts.get("kg", 0) > 0
    assert stats.index.rows == sum(n for s, n in counts.items() if s != "kg")
    assert stats.index.embedded_sources == sources and "kg" not in stats.index.source_type_counts
    index = VectorIndex.open(tmp_path / "vectors")
    query = embedder.encode(["population of Belgium"], on_progress=lambda n: None)[0]
    bm25 = Bm25Index(version_dir / "bm25").search("population Belgium", 20)
    kg_ids = [h.evidence_id for h in bm25 if h.source_type == "kg"]
    assert kg_ids, "BM25 still finds KG statements, embedded or not"
    scores = VectorMatrix(index.all_vectors).similarity(query, kg_ids)
    assert np.all(scores == 0.0), "a row without a vector scores cosine 0"


def test_a_gpu_asked_for_where_torch_sees_none_fails_clearly() -> None:
    import torch

    if torch.cuda.is_available():
        pytest.skip("this machine has a GPU")
    with pytest.raises(ValueError, match="torch sees no GPU"):
        Embedder(
            EmbedderSettings(model="all-MiniLM-L6-v2", device="cuda")
        )  # the transformer: static ones run on the CPU


@pytest.fixture(scope="module")
def with_kg_vectors(sample_index, sample_ingest, tmp_path_factory):
    """The sample index built with KG statements in the vector table too (the cache of the sample index's
    build holds every other vector, so only the statements are embedded)."""
    from index.build import build_index
    from schemas.evidence import SOURCE_TYPES

    settings, _ = sample_index
    index = settings.index.model_copy(update={"embed_sources": list(SOURCE_TYPES)})
    state = tmp_path_factory.mktemp("state-kg-vectors")
    build = settings.model_copy(
        update={"state_dir": state, "index": index, "embedding_cache": settings.embedding_cache_dir}
    )
    return build_index(build, ingest_dir=sample_ingest.out_dir)


def _source_counts(version_dir) -> dict[str, int]:
    """Distinct evidence ids per source type, read straight from the version's evidence files."""
    import pyarrow.dataset as ds

    table = ds.dataset(version_dir / "evidence", format="parquet").to_table(
        columns=["evidence_id", "source_type"]
    )
    grouped = table.group_by("source_type").aggregate([("evidence_id", "count_distinct")]).to_pylist()
    return {r["source_type"]: r["evidence_id_count_distinct"] for r in grouped}


def test_kg_statements_are_embedded_when_the_settings_ask(with_kg_vectors, sample_index) -> None:
    from index.vectors import VectorIndex

    counts = _source_counts(with_kg_vectors.version_dir)
    embedded = VectorIndex.open(with_kg_vectors.version_dir / "vectors").stats.source_type_counts
    assert embedded == counts and counts["kg"] > 0
    _, default = sample_index
    by_default = VectorIndex.open(default.version_dir / "vectors").stats.source_type_counts
    assert by_default == {k: v for k, v in counts.items() if k != "kg"}


def test_kg_statements_without_vectors_are_still_retrieved_and_answered(sample_index) -> None:
    """The default (issue 34 part 6a): KG statements get no vector — on the KG question set, embedding them
    changed no answer (benchmarks/results/embedders.md) — and are still served by the other retrievers."""
    from index.vectors import VectorIndex
    from query import Engine, EngineConfig
    from tests.query.test_engine import belgium_population_by_year

    settings, result = sample_index
    assert "kg" not in settings.index.embed_sources
    vectors = VectorIndex.open(result.version_dir / "vectors")
    assert "kg" not in vectors.stats.source_type_counts and result.manifest.validation["vectors"] == "ok"
    year = 2014
    question = f"What was the population of Belgium in {year}?"
    expected = str(belgium_population_by_year()[year])
    with Engine.open(result.version_dir, EngineConfig(reader="candidates")) as engine:
        assert "".join(c for c in engine.ask(question).answer if c.isdigit()) == expected
    # without the KG lookup mode: retrieval alone (BM25, the KG walk) still brings the statement
    retrieval_only = EngineConfig(reader="candidates", modes=["retrieve-read"])
    with Engine.open(result.version_dir, retrieval_only) as engine:
        answer = engine.ask(question)
    kg_rows = [e for e in answer.evidence if e.source_type == "kg" and expected in e.text.replace(",", "")]
    assert kg_rows, "the KG statement is retrieved without a vector"
