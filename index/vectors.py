"""The dense side of the index: embed evidence (reusing cached vectors) and serve it from LanceDB.

Vectors are L2-normalized, so cosine distance ranks like dot product and a hit's score is its cosine
similarity. Below ``ann_min_rows`` an exact scan is fast enough and loses nothing; above it, on two
cores an exact scan of 300k x 384 floats takes ~0.57 s a query, so an ANN index is built. The default
is IVF_PQ with a refine step: PQ codes alone rank poorly on these embeddings (recall@10 ≈ 0.4), but
re-scoring ``refine_factor * k`` candidates with the stored full vectors brings it to 0.995 at ~11 ms
a query (nprobes 20, refine 30), from an index of 16 MB, 1/30 of the vectors; it builds in ~65 s.
IVF_HNSW_SQ is the alternative: 0.985 at ~5 ms (ef 200), same build time, but a 180 MB index.
Figures: recall@10 against exact search, 300k vectors mixed from real MiniLM embeddings of the OTT-QA
sample, its 139 dev questions as queries, 2 cores.
"""

from __future__ import annotations

import json
import logging
import math
import os
import tempfile
import time
from collections.abc import Iterator
from contextlib import closing
from datetime import UTC, datetime
from importlib.metadata import version
from pathlib import Path
from typing import TYPE_CHECKING, Literal, Protocol

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.duck import read_sql, record_batches, scalar
from index.embedder import Embedder
from index.embedding_cache import EmbeddingCache, vector_matrix
from index.evidence_reader import POSITION_BITS
from index.heap import release_heap
from ingest.files import write_text_atomic
from ingest.progress import progress
from schemas.evidence import SOURCE_TYPES, SourceType
from schemas.settings import ANN_MIN_ROWS, ANN_NPROBES, ANN_REFINE_FACTOR

if TYPE_CHECKING:  # imported where used: lancedb takes ~1.5 s to import and starts a background thread,
    # which every rebuild task that only imports this module (ingest, verbalize, the other stages) would pay
    import lancedb
    from lancedb.index import IvfHnswSq, IvfPq

log = logging.getLogger(__name__)

FORMAT_VERSION = 1  # bump when the table layout or manifest changes; open() refuses other versions
TABLE = "evidence"
MANIFEST = "vector_index.json"
COLUMNS = ["evidence_id", "source_type", "page_title", "vector"]
MODEL_KEY = b"hqa.embedding_model"
EMBEDDER_DIR = "embedder"  # a distilled model's copy beside the vectors it made
WRITE_BATCHES_HELD = 8  # batches LanceDB's writer holds at once, about (measured: write_batch_rows)


class EmbedStats(BaseModel):
    rows: int = Field(description="evidence rows in")
    unique: int = Field(description="distinct evidence ids, the rows out")
    reused: int = Field(description="ids whose vector came from the cache")
    computed: int = Field(description="ids embedded in this run")
    seconds: float
    model: str


class VectorIndexSettings(BaseModel):
    ann_min_rows: int = Field(ANN_MIN_ROWS, ge=1, description="build an ANN index from this many rows on")
    index_type: Literal["IVF_PQ", "IVF_HNSW_SQ"] = "IVF_PQ"
    num_partitions: int | None = Field(None, ge=1, description="IVF partitions; None = LanceDB's choice")
    num_sub_vectors: int = Field(48, ge=1, description="IVF_PQ: 8 dims per code for 384-d, SIMD-friendly")
    nprobes: int = Field(ANN_NPROBES, ge=1, description="partitions searched per query")
    refine_factor: int | None = Field(
        ANN_REFINE_FACTOR, ge=1, description="re-score this * k candidates exactly"
    )
    m: int = Field(20, ge=2, description="IVF_HNSW_SQ: graph degree")
    ef_construction: int = Field(150, ge=10, description="IVF_HNSW_SQ: build-time candidate list")
    ef: int = Field(200, ge=1, description="IVF_HNSW_SQ: query-time candidate list")
    max_training_mb: int | None = Field(
        256, ge=1, description="the IVF k-means training sample's size at most (None: LanceDB's own)"
    )


class VectorIndexStats(BaseModel):
    """The build manifest, saved beside the LanceDB folder."""

    format_version: int = FORMAT_VERSION
    rows: int
    dimension: int
    embedding_model: str | None
    ann_index: str | None = Field(description="index type, or None when searches are exact scans")
    settings: VectorIndexSettings
    source_type_counts: dict[str, int]
    embedded_sources: list[str] | None = Field(
        None, description="the source types given vectors; None (older builds) = all of them"
    )
    build_seconds: float
    lancedb_version: str
    built_at: datetime


class VectorHit(BaseModel):
    evidence_id: str
    source_type: SourceType
    score: float = Field(description="cosine similarity to the query vector")


class VectorBuildStats(BaseModel):
    embed: EmbedStats
    index: VectorIndexStats


class EvidenceRelation(Protocol):
    """Evidence as a SQL relation, each id once, with ``pos`` (its order): ``EvidenceReader`` or
    ``InMemoryEvidence``."""

    def sql(self, columns: list[str]) -> str: ...


class InMemoryEvidence:
    """A small evidence table (tests, benchmarks) as a relation of a DuckDB connection: the first row of
    each id, in table order."""

    def __init__(self, table: pa.Table, con: duckdb.DuckDBPyConnection, name: str = "evidence_table"):
        self.name = name
        con.register(name, table.append_column("pos", pa.array(range(table.num_rows), pa.int64())))

    def sql(self, columns: list[str]) -> str:
        wanted = ", ".join(columns)
        return (
            f"(SELECT {wanted}, pos FROM {self.name} "
            "QUALIFY row_number() OVER (PARTITION BY evidence_id ORDER BY pos) = 1)"
        )


class EmbeddedSources:
    """The rows of an evidence relation whose source type is embedded (``IndexSettings.embed_sources``):
    the others get no vector, and the dense side scores them 0."""

    def __init__(self, evidence: EvidenceRelation, sources: list[str]) -> None:
        unknown = sorted(set(sources) - set(SOURCE_TYPES))
        if unknown or not sources:
            raise ValueError(
                f"embed_sources must be a non-empty subset of {list(SOURCE_TYPES)}, got {sources}"
            )
        self.evidence = evidence
        self.sources = [s for s in SOURCE_TYPES if s in sources]

    def sql(self, columns: list[str]) -> str:
        inner = self.evidence.sql(list(dict.fromkeys([*columns, "source_type"])))
        return f"(SELECT {', '.join(columns)}, pos FROM {inner} WHERE {_source_type_filter(self.sources)})"


def embedded(evidence: EvidenceRelation, sources: list[str] | None) -> EvidenceRelation:
    """``evidence`` itself when every source type is embedded, else its embedded rows."""
    if sources is None or set(sources) >= set(SOURCE_TYPES):
        return evidence
    return EmbeddedSources(evidence, sources)


def cached_ids(cache: EmbeddingCache) -> str:
    parts = cache.part_files()
    if not parts:
        return "(SELECT NULL::VARCHAR AS evidence_id WHERE false)"
    return f"(SELECT evidence_id FROM {read_sql(parts)})"


def _last_flagged(batches: Iterator[pa.RecordBatch]) -> Iterator[tuple[bool, pa.RecordBatch]]:
    """(is this the last batch, batch)."""
    previous = next(batches, None)
    for batch in batches:
        yield False, previous  # type: ignore[misc]
        previous = batch
    if previous is not None:
        yield True, previous


def embed_missing(
    evidence: EvidenceRelation, embedder: Embedder, cache: EmbeddingCache, con: duckdb.DuckDBPyConnection
) -> EmbedStats:
    """Embed every evidence text the cache lacks, longest first, ``cache.part_rows`` texts at a time.

    Each chunk goes to the cache as it is computed, and the buffer is flushed even when embedding
    fails, so a re-run after an interruption picks up where this one stopped. Which ids are missing,
    and the global length order, are DuckDB's (an anti-join and a sort, out of core); Python holds one
    chunk of texts."""
    started = time.perf_counter()
    rows = scalar(con, f"SELECT count(*) FROM {evidence.sql(['evidence_id'])}")
    todo_sql = (
        f"SELECT e.evidence_id, e.text FROM {evidence.sql(['evidence_id', 'text'])} e "
        f"ANTI JOIN {cached_ids(cache)} c USING (evidence_id) ORDER BY length(e.text) DESC, e.pos"
    )
    todo = scalar(con, f"SELECT count(*) FROM ({todo_sql})")
    bar = progress("embed evidence", total=todo, unit="text")
    done = 0
    try:
        ids: list[str] = []
        texts: list[str] = []
        for last, batch in _last_flagged(record_batches(con, todo_sql, rows=cache.part_rows)):
            ids += batch.column("evidence_id").to_pylist()
            texts += batch.column("text").to_pylist()
            while len(texts) >= cache.part_rows or (last and texts):
                chunk = min(cache.part_rows, len(texts))
                cache.add(ids[:chunk], embedder.encode(texts[:chunk], on_progress=bar.update))
                ids, texts, done = ids[chunk:], texts[chunk:], done + chunk
                # a log line per part too: where no terminal shows the bar (Airflow task logs)
                log.info("embedded %d/%d new evidence texts", done, todo)
    finally:
        cache.flush()
        bar.close()
    stats = EmbedStats(
        rows=rows,
        unique=rows,
        reused=rows - todo,
        computed=todo,
        seconds=time.perf_counter() - started,
        model=embedder.model_name,
    )
    log.info("embedded %d evidence ids, reused %d from the cache", stats.computed, stats.reused)
    return stats


VECTOR_FILE = "vectors-in-evidence-order.f32"


def _vector_locations(evidence: EvidenceRelation, parts: list[Path]) -> str:
    """Every evidence row's rank (its place in evidence order, from 0) and the position of its vector in
    the cache (``read_sql``'s ``pos``: the first part and row holding the id), null when there is none;
    ordered by that position, so the cache can be read once, front to back. Ids and integers only."""
    ranked = (
        f"(SELECT evidence_id, row_number() OVER (ORDER BY pos) - 1 AS rank "
        f"FROM {evidence.sql(['evidence_id'])})"
    )
    if not parts:
        return f"SELECT e.rank, NULL::BIGINT AS cpos, e.evidence_id FROM {ranked} e"
    first = (
        f"(SELECT evidence_id, min(pos) AS cpos FROM {read_sql(parts, position=True)} GROUP BY evidence_id)"
    )
    return (
        f"SELECT e.rank, c.cpos, e.evidence_id FROM {ranked} e LEFT JOIN {first} c USING (evidence_id) "
        "ORDER BY c.cpos NULLS FIRST"
    )


def _all_found(locations: Iterator[pa.RecordBatch], cache: EmbeddingCache) -> Iterator[pa.RecordBatch]:
    """``locations`` unchanged, or a KeyError naming the rows without a vector (they come first)."""
    missing, example = 0, None
    for batch in locations:
        nulls = batch.column("cpos").null_count
        if nulls:
            missing += nulls
            example = example or batch.column("evidence_id").filter(batch.column("cpos").is_null())[0].as_py()
        if missing and nulls < batch.num_rows:
            break
        if not missing:
            yield batch
    if missing:
        raise KeyError(f"{missing} ids have no vector in {cache.dir}, e.g. {example!r}; embed them first")


def _scatter_vectors(
    locations: Iterator[pa.RecordBatch], parts: list[Path], fd: int, row_bytes: int, read_rows: int
) -> None:
    """Copy each needed cache vector to its evidence rank's place in the file ``fd`` (``row_bytes`` a
    vector), reading the cache's parts once, in order, ``read_rows`` at a time: an external permutation
    whose memory is one read batch, however large the corpus. Parts with no needed row are not read."""
    pending = np.empty((0, 2), dtype=np.int64)  # (cache position, rank), sorted by position
    more = True

    def fill(until: int) -> None:
        nonlocal pending, more
        while more and (not len(pending) or pending[-1, 0] < until):
            batch = next(locations, None)
            if batch is None:
                more = False
                return
            pairs = np.column_stack(
                [batch.column("cpos").to_numpy(), batch.column("rank").to_numpy()]
            ).astype(np.int64)
            pending = np.concatenate([pending, pairs])

    for index, path in enumerate(parts):
        base = index << POSITION_BITS
        fill(base)
        if not more and not len(pending):
            return
        if len(pending) and pending[0, 0] >= base + (1 << POSITION_BITS):
            continue  # nothing wanted from this part
        start = 0
        for batch in pq.ParquetFile(path).iter_batches(batch_size=read_rows, columns=["vector"]):
            end = start + batch.num_rows
            fill(base + end)
            cut = int(np.searchsorted(pending[:, 0], base + end))
            wanted, pending = pending[:cut], pending[cut:]
            if len(wanted):
                rows = wanted[:, 0] - base - start
                ranks = wanted[:, 1]
                order = np.argsort(ranks, kind="stable")
                matrix = np.ascontiguousarray(vector_matrix(batch.column("vector"))[rows[order]])
                ranks = ranks[order]
                # runs of consecutive ranks go in one write
                breaks = np.flatnonzero(np.diff(ranks) != 1) + 1
                for lo, hi in zip(np.r_[0, breaks], np.r_[breaks, len(ranks)], strict=True):
                    os.pwrite(fd, matrix[lo:hi].tobytes(), int(ranks[lo]) * row_bytes)
            start = end


def vector_batches(
    evidence: EvidenceRelation,
    cache: EmbeddingCache,
    con: duckdb.DuckDBPyConnection,
    dimension: int,
    model_name: str,
    batch_rows: int = 65_536,
    scratch_dir: Path | None = None,
) -> pa.RecordBatchReader:
    """Every evidence row with its cached vector, in evidence order, streamed ``batch_rows`` at a time;
    fails (before the first batch) when an evidence id has no vector (embed it first).

    The vectors are put in evidence order through a file in ``scratch_dir`` (the build's scratch; the
    system's temporary folder when None), not by a sort in DuckDB: DuckDB finds, from ids and integers
    alone, which cache row each evidence row takes; the cache is read once and each vector written at
    its row's place; the file is then read front to back beside the evidence's own columns. The join
    and ``ORDER BY`` of the rows with their vectors that this replaces held its sorted 1 KB rows in
    DuckDB: at 1.24M rows (256-d) it took 815 MB over the process's own with a 512 MB DuckDB limit,
    and failed ("failed to pin block") with a 256 MB one, so its need grew with the corpus. This way
    Python holds one read batch and one output batch; the file (rows x dimension x 4 bytes) is on disk."""
    schema = pa.schema(
        [  # large strings: what the table has always held (it was made from a polars frame)
            ("evidence_id", pa.large_string()),
            ("source_type", pa.large_string()),
            ("page_title", pa.large_string()),
            ("vector", pa.list_(pa.float32(), dimension)),
        ],
        metadata={MODEL_KEY: model_name.encode()},
    )
    row_bytes = dimension * 4
    parts = cache.part_files()  # once: another writer's new part must not shift the positions
    locate = _vector_locations(evidence, parts)
    columns_sql = (
        f"SELECT evidence_id, source_type, page_title "
        f"FROM {evidence.sql(['evidence_id', 'source_type', 'page_title'])} ORDER BY pos"
    )

    def batches() -> Iterator[pa.RecordBatch]:
        if scratch_dir is not None:
            Path(scratch_dir).mkdir(parents=True, exist_ok=True)
        with tempfile.TemporaryDirectory(prefix="vectors-", dir=scratch_dir) as folder:
            path = Path(folder) / VECTOR_FILE
            fd = os.open(path, os.O_RDWR | os.O_CREAT | os.O_TRUNC, 0o600)
            try:
                with closing(record_batches(con, locate, rows=batch_rows)) as locations:
                    found = _all_found(locations, cache)
                    _scatter_vectors(found, parts, fd, row_bytes, batch_rows)
                done = 0
                for batch in record_batches(con, columns_sql, rows=batch_rows):
                    raw = os.pread(fd, batch.num_rows * row_bytes, done * row_bytes)
                    if len(raw) != batch.num_rows * row_bytes:
                        raise RuntimeError(f"{path} is short: {len(raw)} bytes at row {done}")
                    done += batch.num_rows
                    vectors = pa.FixedSizeListArray.from_arrays(
                        pa.array(np.frombuffer(raw, dtype=np.float32)), dimension
                    )
                    yield pa.RecordBatch.from_arrays(
                        [*(batch.column(i).cast(schema.field(i).type) for i in range(3)), vectors],
                        schema=schema,
                    )
            finally:
                os.close(fd)

    return pa.RecordBatchReader.from_batches(schema, batches())


def write_batch_rows(budget_mb: int, dimension: int) -> int:
    """Rows a batch of vectors for the LanceDB write: its writer holds several batches at once, so its
    memory is about ``WRITE_BATCHES_HELD`` batches (1.25M 256-d rows: +540 MB over the process's own
    with batches of 65,536 rows, +300 MB with 32,768, +210 MB with 16,384, +160 MB with 8,192); the
    batches held are kept to an eighth of the budget."""
    rows = (budget_mb << 20) // 8 // (dimension * 4 * WRITE_BATCHES_HELD)
    return int(min(65_536, max(1_024, rows)))


def build_vectors(
    evidence: EvidenceRelation,
    embedder: Embedder,
    cache: EmbeddingCache,
    out_dir: Path,
    settings: VectorIndexSettings,
    con: duckdb.DuckDBPyConnection,
    batch_rows: int = 65_536,
    sources: list[str] | None = None,
    scratch_dir: Path | None = None,
) -> VectorBuildStats:
    """Embed what the cache lacks, then write the LanceDB table batch by batch and index it on disk;
    ``sources``: the source types given vectors (None: all); ``scratch_dir``: where the vectors are put
    in evidence order (``vector_batches``). Memory is released between the three phases, so the stage's
    peak is the largest phase's, not their sum."""
    evidence = embedded(evidence, sources)
    embed = embed_missing(evidence, embedder, cache, con)
    release_heap()
    reader = vector_batches(
        evidence, cache, con, embedder.dimension, embedder.model_name, batch_rows, scratch_dir
    )
    index = build_vector_index(reader, out_dir, settings, sources)
    return VectorBuildStats(embed=embed, index=index)


def embed_evidence(
    evidence: pa.Table, embedder: Embedder, cache: EmbeddingCache
) -> tuple[pa.Table, EmbedStats]:
    """Vectors for a small evidence table held in memory (one row per id, first row wins), embedding
    only ids the cache lacks: the build stage's steps on an in-memory relation, for tests and studies."""
    con = duckdb.connect()
    con.execute("SET enable_progress_bar = false")
    try:
        relation = InMemoryEvidence(evidence, con)
        stats = embed_missing(relation, embedder, cache, con)
        table = vector_batches(relation, cache, con, embedder.dimension, embedder.model_name).read_all()
    finally:
        con.close()
    return table, stats.model_copy(update={"rows": evidence.num_rows})


def _check_schema(schema: pa.Schema) -> int:
    """The vector dimension, after checking the columns the index needs."""
    missing = [c for c in COLUMNS if c not in schema.names]
    if missing:
        raise ValueError(f"vector table lacks columns {missing}; build it with vector_batches()")
    vtype = schema.field("vector").type
    if not (pa.types.is_fixed_size_list(vtype) and vtype.value_type == pa.float32()):
        raise ValueError(f"column 'vector' must be fixed_size_list<float32>, got {vtype}")
    return vtype.list_size


def _check_source_types(batch: pa.RecordBatch) -> None:
    types = batch.column("source_type")
    bad = pc.unique(types.filter(pc.invert(pc.is_in(types, pa.array(SOURCE_TYPES)))))
    if len(bad):
        raise ValueError(f"unknown source types {bad.to_pylist()}; expected {list(SOURCE_TYPES)}")


def pq_sub_vectors(dimension: int, dims_per_code: int = 8) -> int:
    """PQ sub-vectors for a dimension: 8 dims per code (SIMD-friendly), as the default does for 384-d."""
    return max(1, dimension // dims_per_code) if dimension % dims_per_code == 0 else 1


SAMPLE_RATE = 256
"""LanceDB's training vectors per IVF partition (its default)."""
MIN_SAMPLE_RATE = 32


def training_plan(rows: int, dimension: int, max_training_mb: int | None) -> tuple[int, int] | None:
    """(partitions, sample rate) that keep the k-means training sample within ``max_training_mb``, or
    None when LanceDB's defaults (sqrt(rows) partitions, 256 vectors each) already fit. The sample is
    partitions x rate float32 vectors and grows with sqrt(rows) (~6 GB at 250M 384-d rows): the rate
    goes down first (to 32), then the partitions."""
    if max_training_mb is None:
        return None
    partitions = max(1, round(math.sqrt(rows)))
    budget = (max_training_mb << 20) // (dimension * 4)  # vectors that fit
    if partitions * SAMPLE_RATE <= budget:
        return None
    rate = max(MIN_SAMPLE_RATE, budget // partitions)
    return min(partitions, max(1, budget // rate)), rate


def _ann_config(settings: VectorIndexSettings, dimension: int, rows: int) -> IvfPq | IvfHnswSq:
    from lancedb.index import IvfHnswSq, IvfPq

    partitions, rate = settings.num_partitions, SAMPLE_RATE
    capped = None if partitions is not None else training_plan(rows, dimension, settings.max_training_mb)
    if capped is not None:
        partitions, rate = capped
        log.info(
            "IVF training capped at %d MB: %d partitions x %d vectors", settings.max_training_mb, *capped
        )
    if settings.index_type == "IVF_HNSW_SQ":
        return IvfHnswSq(
            distance_type="cosine",
            num_partitions=partitions,
            sample_rate=rate,
            m=settings.m,
            ef_construction=settings.ef_construction,
        )
    if dimension % settings.num_sub_vectors:
        raise ValueError(f"num_sub_vectors={settings.num_sub_vectors} must divide the dimension {dimension}")
    return IvfPq(
        distance_type="cosine",
        num_partitions=partitions,
        num_sub_vectors=settings.num_sub_vectors,
        sample_rate=rate,
    )


def build_vector_index(
    data: pa.Table | pa.RecordBatchReader,
    out_dir: Path,
    settings: VectorIndexSettings | None = None,
    sources: list[str] | None = None,
) -> VectorIndexStats:
    """Write ``data`` (``vector_batches`` or a table of its columns) as the LanceDB table ``evidence``
    under ``out_dir``, batch by batch, then build the ANN index from the table on disk.

    The manifest is removed first and written last, so a build that dies half way leaves a folder
    that ``VectorIndex.open`` refuses rather than a half-built index it would serve.
    """
    settings = settings or VectorIndexSettings()
    started = time.perf_counter()
    reader = data.to_reader() if isinstance(data, pa.Table) else data
    dimension = _check_schema(reader.schema)
    counts: dict[str, int] = {}

    def counted() -> Iterator[pa.RecordBatch]:
        for batch in reader:
            _check_source_types(batch)
            for row in pc.value_counts(batch.column("source_type")).to_pylist():
                counts[row["values"]] = counts.get(row["values"], 0) + row["counts"]
            yield batch.select(COLUMNS)

    schema = pa.schema([reader.schema.field(c) for c in COLUMNS], metadata=reader.schema.metadata)
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / MANIFEST).unlink(missing_ok=True)
    import lancedb

    db = lancedb.connect(out_dir)
    # overwrite would keep the old version's files; a rebuild starts from an empty table instead
    if TABLE in db.list_tables().tables:
        db.drop_table(TABLE)
    log.info("writing the vector table under %s", out_dir)
    lance_table = db.create_table(TABLE, data=pa.RecordBatchReader.from_batches(schema, counted()))
    rows = lance_table.count_rows()
    release_heap()  # the write's buffers, before the ANN build's training sample
    ann_index = None
    if rows >= settings.ann_min_rows:
        log.info("building %s over %d vectors", settings.index_type, rows)
        lance_table.create_index("vector", config=_ann_config(settings, dimension, rows))
        ann_index = settings.index_type
    metadata = reader.schema.metadata or {}
    stats = VectorIndexStats(
        rows=rows,
        dimension=dimension,
        embedding_model=metadata[MODEL_KEY].decode() if MODEL_KEY in metadata else None,
        ann_index=ann_index,
        settings=settings,
        source_type_counts=counts,
        embedded_sources=[s for s in SOURCE_TYPES if s in sources] if sources is not None else None,
        build_seconds=time.perf_counter() - started,
        lancedb_version=version("lancedb"),
        built_at=datetime.now(UTC),
    )
    write_text_atomic(out_dir / MANIFEST, stats.model_dump_json(indent=2))
    log.info("vector index built: %d rows in %.1f s", rows, stats.build_seconds)
    return stats


class VectorIndex:
    """Read side of a built index. Opening reads a small manifest and the table's metadata, nothing more;
    LanceDB runs queries on its own background loop, so one object serves many threads."""

    def __init__(self, directory: Path, table: lancedb.table.Table, stats: VectorIndexStats) -> None:
        self.directory = directory
        self._table = table
        self.stats = stats

    @classmethod
    def open(cls, directory: Path) -> VectorIndex:
        manifest = Path(directory) / MANIFEST
        if not manifest.exists():
            raise FileNotFoundError(
                f"no vector index at {directory} ({MANIFEST} missing): run the index build"
            )
        raw = json.loads(manifest.read_text())
        if raw.get("format_version") != FORMAT_VERSION:
            raise ValueError(
                f"vector index at {directory} has format {raw.get('format_version')}, this code reads "
                f"{FORMAT_VERSION}: rebuild it"
            )
        stats = VectorIndexStats.model_validate(raw)
        import lancedb

        return cls(Path(directory), lancedb.connect(directory).open_table(TABLE), stats)

    def count(self) -> int:
        return self._table.count_rows()

    def embedder(self, batch_size: int = 64) -> Embedder:
        """The embedder that made these vectors, to encode queries with (a distilled model from the
        version's own copy)."""
        own = self.directory / EMBEDDER_DIR
        return Embedder.for_index(
            self.stats.embedding_model, batch_size, model_dir=own if own.is_dir() else None
        )

    def all_vectors(self) -> pa.Table:
        """Every evidence id with its vector: for scoring a whole candidate pool exactly, in memory."""
        return self._table.to_arrow().select(["evidence_id", "vector"])

    def search(
        self, vector: np.ndarray, k: int, source_types: list[str] | None = None, exact: bool = False
    ) -> list[VectorHit]:
        """The ``k`` nearest evidence rows, best first; ``exact`` skips the ANN index."""
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        query = np.asarray(vector, dtype=np.float32)
        if query.shape != (self.stats.dimension,):
            raise ValueError(f"query vector must have shape ({self.stats.dimension},), got {query.shape}")
        builder = (
            self._table.search(query, vector_column_name="vector")
            .distance_type("cosine")
            .select(["evidence_id", "source_type", "_distance"])
            .limit(k)
        )
        if source_types is not None:
            builder = builder.where(_source_type_filter(source_types), prefilter=True)
        settings = self.stats.settings
        if exact or self.stats.ann_index is None:
            builder = builder.bypass_vector_index()
        else:
            builder = builder.nprobes(settings.nprobes)
            if settings.index_type == "IVF_HNSW_SQ":
                # the graph must yield every candidate the refine step re-scores
                builder = builder.ef(max(settings.ef, k * (settings.refine_factor or 1)))
            if settings.refine_factor:
                builder = builder.refine_factor(settings.refine_factor)
        result = builder.to_arrow()
        return [
            VectorHit(evidence_id=e, source_type=s, score=1.0 - d)
            for e, s, d in zip(
                result.column("evidence_id").to_pylist(),
                result.column("source_type").to_pylist(),
                result.column("_distance").to_pylist(),
                strict=True,
            )
        ]


def _source_type_filter(source_types: list[str]) -> str:
    """A SQL predicate over known source types only: a value is checked, never interpolated blindly."""
    unknown = [s for s in source_types if s not in SOURCE_TYPES]
    if unknown or not source_types:
        raise ValueError(
            f"source_types must be a non-empty subset of {list(SOURCE_TYPES)}, got {source_types}"
        )
    return "source_type IN (" + ", ".join(f"'{s}'" for s in sorted(set(source_types))) + ")"


def ann_recall_at_k(index: VectorIndex, query_vectors: np.ndarray, k: int = 10) -> float:
    """Mean share of the exact top-k that the ANN search also returns: what the index costs in recall."""
    if len(query_vectors) == 0:
        raise ValueError("need at least one query vector")
    shares = []
    for vector in query_vectors:
        exact = {h.evidence_id for h in index.search(vector, k, exact=True)}
        approx = {h.evidence_id for h in index.search(vector, k)}
        shares.append(len(exact & approx) / len(exact) if exact else 1.0)
    return float(np.mean(shares))
