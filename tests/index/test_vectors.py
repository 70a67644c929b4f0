"""Embedding, the embedding cache and the LanceDB vector index, on real OTT-QA passages and table rows.

One real model (capped at 128 tokens to keep the file fast) and real LanceDB indexes; the evidence is
built with the project's ``Evidence`` schema, so the vector stage reads what the evidence stage writes.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import shutil
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import lancedb
import numpy as np
import pyarrow as pa
import pytest

from index.embedder import Embedder, EmbedderSettings
from index.embedding_cache import EmbeddingCache, vector_matrix
from index.vectors import (
    MANIFEST,
    EmbedStats,
    VectorIndex,
    VectorIndexSettings,
    ann_recall_at_k,
    build_vector_index,
    embed_evidence,
)
from schemas.arrow import arrow_schema
from schemas.evidence import Evidence, Provenance
from tests.conftest import OTTQA

MINILM = "all-MiniLM-L6-v2"  # the transformer embedder: sequence caps, precisions and workers are its own

PASSAGES, TABLE_ROWS = 330, 220  # ~540 evidence rows: enough to train a small ANN index


def _evidence(source_type: str, text: str, title: str, source: str) -> Evidence:
    digest = hashlib.blake2b(f"{source_type}\n{text}".encode(), digest_size=16).hexdigest()
    return Evidence(
        evidence_id=digest,
        source_type=source_type,  # type: ignore[arg-type]
        text=text,
        title=title,
        page_title=title,
        entity_ids=[],
        link_targets=[],
        provenance=Provenance(source=source),
    )


@pytest.fixture(scope="module")
def evidence() -> pa.Table:
    """Lead passages as 'text' evidence and verbalized table rows as 'table' evidence."""
    with gzip.open(OTTQA / "passages.json.gz", "rt") as f:
        passages = list(json.load(f).items())[:PASSAGES]
    with gzip.open(OTTQA / "tables.json.gz", "rt") as f:
        tables = json.load(f)
    rows = [
        _evidence("text", t, u.removeprefix("/wiki/").replace("_", " "), "passages.json.gz")
        for u, t in passages
    ]
    table_rows = []
    for table in tables.values():
        header = [h[0] for h in table["header"]]
        for cells in table["data"]:
            facts = "; ".join(f"{h}: {c[0]}" for h, c in zip(header, cells, strict=True) if c[0])
            text = f"{table['title']} / {table['section_title']}: {facts}"
            table_rows.append(_evidence("table", text, table["title"], "tables.json.gz"))
    rows += table_rows[:TABLE_ROWS]
    return pa.Table.from_pylist([r.model_dump() for r in rows], schema=arrow_schema(Evidence))


@pytest.fixture(scope="module")
def embedder() -> Embedder:
    """float32 bulk encodes: these tests compare vectors made in different batches to 1e-5, which
    bfloat16 does not keep (its own test holds it to float32 by cosine)."""
    return Embedder(EmbedderSettings(model=MINILM, max_seq_length=128, bulk_precision="float32"))


@pytest.fixture(scope="module")
def cache_root(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("embeddings")


@pytest.fixture(scope="module")
def embedded(evidence: pa.Table, embedder: Embedder, cache_root: Path) -> tuple[pa.Table, EmbedStats]:
    return embed_evidence(evidence, embedder, EmbeddingCache(cache_root, embedder.cache_key))


@pytest.fixture(scope="module")
def exact_index(
    embedded: tuple[pa.Table, EmbedStats], tmp_path_factory: pytest.TempPathFactory
) -> VectorIndex:
    out = tmp_path_factory.mktemp("vectors-exact")
    build_vector_index(embedded[0], out, VectorIndexSettings())  # default ann_min_rows: no ANN index
    return VectorIndex.open(out)


def test_encode_is_normalized_and_in_input_order(embedder: Embedder) -> None:
    texts = [
        "Spa-Francorchamps hosted the Belgian Grand Prix.",
        "A rhythm-puzzle video game published by Aksys Games in 2009, where players match three pieces.",
        "Budapest",
        "The Arizona Wildcats football program represents the University of Arizona in college football.",
        "Who created the series?",
        "Brest is a city in Belarus on the border with Poland, at the confluence of the Bug and Mukhavets.",
        "Beşiktaş is a Turkish sports club.",
    ]
    batched = Embedder(EmbedderSettings(model=MINILM, max_seq_length=128, batch_size=3))
    done: list[int] = []
    vectors = batched.encode(texts, on_progress=done.append)
    assert done == [3, 3, 1]
    assert vectors.dtype == np.float32 and vectors.shape == (len(texts), 384)
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    one_by_one = np.vstack([embedder.encode([t]) for t in texts])
    np.testing.assert_allclose(vectors, one_by_one, atol=1e-4)
    assert embedder.encode([]).shape == (0, 384)


def test_parallel_workers_give_the_same_vectors_and_restore_torch_threads(
    evidence: pa.Table, embedder: Embedder
) -> None:
    import torch

    texts = evidence.column("text").to_pylist()[:150]  # passages and table rows, many lengths
    threads_before = torch.get_num_threads()
    exact = {"max_seq_length": 128, "bulk_precision": "float32"}
    parallel = Embedder(EmbedderSettings(model=MINILM, batch_size=8, workers=2, **exact))
    done: list[int] = []
    vectors = parallel.encode(texts, on_progress=done.append)
    assert sum(done) == len(texts) and len(done) == -(-len(texts) // 8)  # every batch reported once
    assert torch.get_num_threads() == threads_before
    serial = Embedder(EmbedderSettings(model=MINILM, batch_size=64, **exact))
    np.testing.assert_allclose(vectors, serial.encode(texts, on_progress=lambda _n: None), atol=1e-4)
    # a short encode (a question) stays on the shared copy, whatever the worker count
    np.testing.assert_allclose(parallel.encode(texts[:1]), embedder.encode(texts[:1]), atol=1e-5)


def test_bulk_encodes_in_bfloat16_stay_close_to_float32_and_are_cached_apart(evidence: pa.Table) -> None:
    """The build embeds in bfloat16 where the CPU multiplies it natively (this machine's does): the
    vectors must stay unit length and next to the float32 ones, be cached under their own key, and a
    question must still be encoded in float32."""
    from index.embedder import native_bfloat16

    texts = evidence.column("text").to_pylist()[:150]
    half = Embedder(EmbedderSettings(model=MINILM, max_seq_length=128, workers=2, bulk_precision="bfloat16"))
    full = Embedder(EmbedderSettings(model=MINILM, max_seq_length=128, workers=2, bulk_precision="float32"))
    quiet = {"on_progress": lambda _n: None}
    low, high = half.encode(texts, **quiet), full.encode(texts, **quiet)
    assert low.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(low, axis=1), 1.0, atol=1e-5)
    assert float((low * high).sum(1).min()) > 0.999
    assert not np.array_equal(low, high)  # it did run in the other format
    assert half.cache_key != full.cache_key and half.cache_key.endswith("-bf16")
    np.testing.assert_array_equal(half.encode(texts[:1]), full.encode(texts[:1]))  # a question: float32
    auto = Embedder(EmbedderSettings(model=MINILM, max_seq_length=128))
    assert auto.bulk_precision == ("bfloat16" if native_bfloat16() else "float32")


def test_embedder_settings_name_model_and_cap(embedder: Embedder) -> None:
    assert embedder.dimension == 384 and embedder.max_seq_length == 128
    assert embedder.model_name == "all-MiniLM-L6-v2@0.1.0"
    uncapped = Embedder(EmbedderSettings(model=MINILM))
    assert uncapped.max_seq_length == 256  # the model's own
    assert uncapped.cache_key != embedder.cache_key  # a capped vector is never served as an uncapped one
    assert Embedder(EmbedderSettings(model=MINILM, max_seq_length=128)).model is embedder.model  # loaded once
    with pytest.raises(ValueError, match="exceeds"):
        Embedder(EmbedderSettings(model=MINILM, max_seq_length=4096))
    with pytest.raises(ValueError, match="unknown embedding model"):
        Embedder(EmbedderSettings(model="bert-huge"))


def test_embed_evidence_keeps_one_row_per_id(
    embedded: tuple[pa.Table, EmbedStats], evidence: pa.Table
) -> None:
    table, stats = embedded
    ids = evidence.column("evidence_id").to_pylist()
    assert stats.rows == len(ids) and stats.unique == len(set(ids)) == table.num_rows
    assert stats.computed == stats.unique and stats.reused == 0
    assert table.column_names == ["evidence_id", "source_type", "page_title", "vector"]
    assert table.column("evidence_id").to_pylist() == list(dict.fromkeys(ids))
    assert table.schema.metadata[b"hqa.embedding_model"] == b"all-MiniLM-L6-v2@0.1.0"


def test_second_run_reuses_every_cached_vector(
    embedded: tuple[pa.Table, EmbedStats], evidence: pa.Table, embedder: Embedder, cache_root: Path
) -> None:
    again, stats = embed_evidence(evidence, embedder, EmbeddingCache(cache_root, embedder.cache_key))
    assert stats.computed == 0 and stats.reused == stats.unique
    np.testing.assert_array_equal(
        vector_matrix(again.column("vector")), vector_matrix(embedded[0].column("vector"))
    )


class _CrashOnSecondChunk(Embedder):
    """A real embedder that dies part way, as a killed build would."""

    calls = 0

    def encode(self, texts, on_progress=None):  # type: ignore[no-untyped-def]
        self.calls += 1
        if self.calls == 2:
            raise RuntimeError("killed")
        return super().encode(texts, on_progress)


def test_interrupted_run_resumes_with_only_the_rest(
    embedded: tuple[pa.Table, EmbedStats], evidence: pa.Table, embedder: Embedder, tmp_path: Path
) -> None:
    subset = evidence.slice(0, 90)
    reference = dict(
        zip(
            embedded[0].column("evidence_id").to_pylist(),
            vector_matrix(embedded[0].column("vector")),
            strict=True,
        )
    )
    ids = list(dict.fromkeys(subset.column("evidence_id").to_pylist()))
    # a process that wrote one full part, buffered 8 more rows and died before flushing them
    crashed = EmbeddingCache(tmp_path, embedder.cache_key, part_rows=32)
    crashed.add(ids[:32], np.vstack([reference[i] for i in ids[:32]]))
    crashed.add(ids[32:40], np.vstack([reference[i] for i in ids[32:40]]))
    del crashed
    cache = EmbeddingCache(tmp_path, embedder.cache_key, part_rows=32)
    assert cache.known_ids() == set(ids[:32])
    # a run killed while embedding its second chunk keeps the first one
    with pytest.raises(RuntimeError, match="killed"):
        embed_evidence(subset, _CrashOnSecondChunk(embedder.settings), cache)
    assert len(EmbeddingCache(tmp_path, embedder.cache_key).known_ids()) == 32 + 32
    table, stats = embed_evidence(subset, embedder, EmbeddingCache(tmp_path, embedder.cache_key))
    assert (stats.reused, stats.computed) == (64, len(ids) - 64)
    resumed = vector_matrix(table.column("vector"))
    np.testing.assert_allclose(resumed, np.vstack([reference[i] for i in ids]), atol=1e-5)


def test_cache_get_is_aligned_and_compact_keeps_every_vector(
    embedded: tuple[pa.Table, EmbedStats], tmp_path: Path
) -> None:
    table = embedded[0]
    ids, vectors = table.column("evidence_id").to_pylist(), vector_matrix(table.column("vector"))
    cache = EmbeddingCache(tmp_path, "k", part_rows=100)
    cache.add(ids, vectors)
    cache.add(ids[:10], vectors[:10])  # a repeated id, as two racing runs could leave
    cache.flush()
    assert len(list(cache.dir.glob("part-*.parquet"))) == 2
    order = list(reversed(ids[::7]))
    np.testing.assert_array_equal(cache.get(order), vectors[::7][::-1])
    cache.compact()
    assert len(list(cache.dir.glob("part-*.parquet"))) == 1
    np.testing.assert_array_equal(cache.get(ids), vectors)
    with pytest.raises(KeyError, match="no vector"):
        cache.get([ids[0], "not-an-id"])


@pytest.mark.parametrize(
    ("query", "page"),
    [
        ("a 2009 music puzzle game where you line up three coloured blocks to clear them", "0-D Beat Drop"),
        (
            "Hungarian university for theatre and cinema established in the 1860s",
            "Academy of Drama and Film in Budapest",
        ),
        ("protected area around two crater lakes on Negros island", "Balinsasayao Twin Lakes Natural Park"),
        (
            "US television contest for amateur performers, part of a franchise by Simon Cowell",
            "America's Got Talent",
        ),
    ],
)
def test_paraphrase_finds_its_passage(
    exact_index: VectorIndex, embedded: tuple[pa.Table, EmbedStats], embedder: Embedder, query: str, page: str
) -> None:
    titles = dict(
        zip(
            embedded[0].column("evidence_id").to_pylist(),
            embedded[0].column("page_title").to_pylist(),
            strict=True,
        )
    )
    hits = exact_index.search(embedder.encode([query])[0], k=3, source_types=["text"])
    assert page in [titles[h.evidence_id] for h in hits]


def test_source_type_filter_is_a_validated_prefilter(exact_index: VectorIndex, embedder: Embedder) -> None:
    query = embedder.encode(["Belgian Grand Prix race results by year"])[0]
    ranking = exact_index.search(query, k=exact_index.count())
    for source_type in ("text", "table"):
        hits = exact_index.search(query, k=20, source_types=[source_type])
        # a post-filter would return fewer than k; a prefilter returns the best k of that type
        assert hits == [h for h in ranking if h.source_type == source_type][:20]
    assert exact_index.search(query, k=5, source_types=["kg", "infobox"]) == []  # none in this sample
    for bogus in (["text') OR 1=1 --"], ["Text"], []):
        with pytest.raises(ValueError, match="source_types"):
            exact_index.search(query, k=5, source_types=bogus)


def test_exact_search_equals_numpy_cosine_top_k(
    exact_index: VectorIndex, embedded: tuple[pa.Table, EmbedStats], embedder: Embedder
) -> None:
    table = embedded[0]
    ids, vectors = np.array(table.column("evidence_id").to_pylist()), vector_matrix(table.column("vector"))
    assert exact_index.count() == len(ids) and exact_index.stats.ann_index is None
    for query in embedder.encode(["Formula One race at Spa in 1964", "football club from Buenos Aires"]):
        scores = vectors @ query
        top = np.argsort(-scores, kind="stable")[:10]
        hits = exact_index.search(query, k=10)
        assert [h.evidence_id for h in hits] == ids[top].tolist()
        np.testing.assert_allclose([h.score for h in hits], scores[top], atol=1e-5)


@pytest.mark.parametrize(
    ("index_type", "capped"), [("IVF_PQ", False), ("IVF_HNSW_SQ", False), ("IVF_PQ", True)]
)
def test_ann_index_from_min_rows_with_good_recall(
    embedded: tuple[pa.Table, EmbedStats], embedder: Embedder, tmp_path: Path, index_type: str, capped: bool
) -> None:
    """Also with the k-means sample capped (a budget a few partitions fit): LanceDB takes the smaller
    sample rate and fewer partitions, and the index still finds what exact search finds."""
    table = embedded[0]
    assert table.num_rows >= 512
    settings = VectorIndexSettings(ann_min_rows=512, index_type=index_type, num_partitions=2)
    if capped:
        settings = VectorIndexSettings(ann_min_rows=512, index_type=index_type, max_training_mb=1)
    stats = build_vector_index(table, tmp_path / "vectors", settings)
    assert stats.ann_index == index_type and stats.rows == table.num_rows
    lance_table = lancedb.connect(tmp_path / "vectors").open_table("evidence")
    assert [i.index_type for i in lance_table.list_indices()] == [index_type.title().replace("_", "")]
    index = VectorIndex.open(tmp_path / "vectors")
    with (OTTQA / "dev.json").open() as f:
        questions = [q["question"] for q in json.load(f)][:40]
    recall = ann_recall_at_k(index, embedder.encode(questions), k=10)
    assert 0.9 <= recall <= 1.0


def test_one_index_serves_many_threads(exact_index: VectorIndex, embedder: Embedder) -> None:
    queries = embedder.encode([f"Belgian Grand Prix {year}" for year in range(1925, 2017, 4)])
    sequential = [exact_index.search(q, k=5) for q in queries]
    with ThreadPoolExecutor(max_workers=4) as pool:
        parallel = list(pool.map(lambda q: exact_index.search(q, k=5), queries))
    assert [[h.evidence_id for h in r] for r in parallel] == [[h.evidence_id for h in r] for r in sequential]


def test_open_refuses_an_unfinished_or_foreign_build(exact_index: VectorIndex, tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="run the index build"):
        VectorIndex.open(tmp_path)
    copy = tmp_path / "copy"
    shutil.copytree(exact_index.directory, copy)
    manifest = json.loads((copy / MANIFEST).read_text())
    (copy / MANIFEST).write_text(json.dumps(manifest | {"format_version": 0}))
    with pytest.raises(ValueError, match="rebuild"):
        VectorIndex.open(copy)


def test_the_ivf_training_sample_stays_within_its_budget_at_any_size():
    """LanceDB trains on sqrt(rows) partitions x 256 vectors: ~6 GB of float32 for 250M 384-d rows. The
    plan caps it; below the cap LanceDB's defaults are kept (the sample builds are unchanged)."""
    from index.vectors import training_plan

    assert training_plan(29_410, 384, 256) is None  # 171 partitions x 256 x 1,536 B = 67 MB
    for rows in (10**6, 10**7, 250 * 10**6):
        partitions, rate = training_plan(rows, 384, 256)
        assert partitions * rate * 384 * 4 <= 256 << 20
        assert 32 <= rate <= 256 and 1 <= partitions <= round(rows**0.5)
    assert training_plan(10**6, 384, 256) == (1000, 174)  # 174,762 vectors fit: the rate goes down first
    assert training_plan(250 * 10**6, 384, 256) == (5461, 32)  # then the partitions (sqrt: 15,811)
    assert training_plan(250 * 10**6, 384, None) is None
