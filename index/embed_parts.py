"""The embed step split over evidence files: one task per file embeds what the cache lacks, then the
vectors task merges their vectors into the cache and assembles the LanceDB table and its ANN index.

Embedding is most of a build's compute; mapped over the evidence files it spreads over every worker
(and, with ``device = "cuda"``, over their GPUs). Each part task writes into a staging cache of its own
under the build's scratch folder, so no two writers ever share a folder; the shared embedding cache is
only read by the part tasks and written by the one vectors task, which merges the staged parts into it
(a repeated id is harmless: the cache keeps the first vector of an id, and an id's text never changes).
A retried part task resumes from its staged parts; a rebuild reuses every cached vector.
"""

from __future__ import annotations

import logging
import shutil
from pathlib import Path

import duckdb
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.duck import scalar, sql_path
from index.embedder import Embedder
from index.embedding_cache import EmbeddingCache, vector_matrix
from index.evidence_reader import EvidenceReader
from index.vectors import EmbedStats, cached_ids, embed_missing, embedded
from ingest.files import write_json_atomic

log = logging.getLogger(__name__)

STATS = "stats.json"  # a part's EmbedStats, beside its staged vectors
POSITION_BITS = 40  # as index.duck.read_sql numbers rows: (file index << 40) + row


class EvidencePart:
    """One evidence file of a version, as the relation ``EvidenceReader.sql`` gives for all of them
    (rows whose id an earlier file or row has are left out, ``pos`` numbered the same way)."""

    def __init__(self, reader: EvidenceReader, index: int) -> None:
        if not 0 <= index < len(reader.files):
            raise ValueError(f"evidence part {index} out of range: {len(reader.files)} files in {reader.dir}")
        self.reader, self.index = reader, index

    def sql(self, columns: list[str]) -> str:
        wanted = ", ".join(columns)
        path = sql_path(self.reader.files[self.index])
        first = self.index << POSITION_BITS
        return (
            f"(SELECT {wanted}, pos FROM (SELECT *, {first}::BIGINT + file_row_number AS pos "
            f"FROM read_parquet({path}, file_row_number=true)) "
            f"ANTI JOIN read_parquet({sql_path(self.reader.duplicates_path)}) USING (pos))"
        )


class NotCached:
    """The rows of a relation whose id the shared cache lacks (the cache is only read)."""

    def __init__(self, evidence: EvidencePart, cache: EmbeddingCache) -> None:
        self.evidence, self.cache = evidence, cache

    def sql(self, columns: list[str]) -> str:
        inner = self.evidence.sql(list(dict.fromkeys([*columns, "evidence_id"])))
        cached = cached_ids(self.cache)
        return f"(SELECT {', '.join(columns)}, pos FROM {inner} ANTI JOIN {cached} USING (evidence_id))"


def staging_root(work_dir: Path, model_key: str) -> Path:
    return Path(work_dir) / "embed" / model_key


def part_names(version_dir: Path) -> list[str]:
    """The evidence files of a build, in the order their parts are numbered."""
    return [p.name for p in EvidenceReader(version_dir).files]


def embed_part(
    version_dir: Path,
    index: int,
    embedder: Embedder,
    cache: EmbeddingCache,
    work_dir: Path,
    sources: list[str] | None,
    con: duckdb.DuckDBPyConnection,
) -> EmbedStats:
    """Embed the rows of evidence file ``index`` (of the embedded source types) that neither the shared
    cache nor this part's staging cache holds, into the staging cache."""
    reader = EvidenceReader(version_dir)
    part = embedded(EvidencePart(reader, index), sources)
    staged = EmbeddingCache(staging_root(work_dir, embedder.cache_key), f"part-{index:05d}")
    stats = embed_missing(NotCached(part, cache), embedder, staged, con)
    rows = scalar(con, f"SELECT count(*) FROM {part.sql(['evidence_id'])}")  # the part's, cached or not
    stats = stats.model_copy(update={"rows": rows, "unique": rows, "reused": rows - stats.computed})
    write_json_atomic(staged.dir / STATS, stats.model_dump(mode="json"))  # the vectors stage sums them
    log.info("evidence part %d (%s): embedded %d rows", index, reader.files[index].name, stats.computed)
    return stats


class StagedParts(BaseModel):
    rows: int = Field(0, description="vectors merged into the shared cache")
    seconds: float = Field(0.0, description="the part tasks' embedding time, summed (their last attempts)")


def merge_staged(cache: EmbeddingCache, work_dir: Path) -> StagedParts:
    """Add every staged part's vectors to the shared cache, then drop the staging folders."""
    root = staging_root(work_dir, cache.dir.name)
    if not root.is_dir():
        return StagedParts()
    rows, seconds = 0, 0.0
    for folder in sorted(p for p in root.iterdir() if p.is_dir()):
        if (folder / STATS).is_file():
            seconds += EmbedStats.model_validate_json((folder / STATS).read_text()).seconds
        for path in EmbeddingCache(root, folder.name).part_files():
            for batch in pq.ParquetFile(path).iter_batches(batch_size=cache.part_rows):
                cache.add(batch.column("evidence_id").to_pylist(), vector_matrix(batch.column("vector")))
                rows += batch.num_rows
    cache.flush()
    shutil.rmtree(root)  # a crash before this only re-adds ids the cache then holds twice (first wins)
    log.info("merged %d staged vectors into %s", rows, cache.dir)
    return StagedParts(rows=rows, seconds=round(seconds, 3))
