"""The steps of one index build, each runnable alone against a ``BuildPlan``.

``hqa build`` runs them in one process; the Airflow rebuild runs each as its own task (the
verbalize step mapped over ingest files, the index stages in parallel). Every step is idempotent:
it clears what it writes before writing it, so a retried task gives the same output. A step whose
fingerprint equals the previous version's hard-links that version's output instead of working.

Every step streams: what it reads is read in batches (``index.evidence_reader``, the ingest files),
what it joins or sorts is joined and sorted by DuckDB held to ``plan.memory_mb`` (``index.duck``),
spilling into the build's scratch folder (``plan.work_dir``).
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import duckdb
from pydantic import BaseModel

from index import layout
from index.bm25 import COLUMNS as BM25_COLUMNS
from index.bm25 import build_bm25
from index.build_plan import BuildPlan, VerbalizeJob
from index.duck import MemoryBudget, connect
from index.embed_parts import embed_part, merge_staged, part_names, staging_root
from index.embedder import MODELS, Embedder, EmbedderSettings
from index.embedding_cache import EmbeddingCache
from index.entities import build_entities
from index.evidence import VerbalizeStats, verbalize_file
from index.evidence_reader import EvidenceReader, write_duplicates
from index.graph_build import build_graph
from index.integrity import damaged_files
from index.names import NameStore
from index.statements import build_statements
from index.static_embedder import copy_model, ensure_distilled_minilm
from index.tables import build_tables
from index.validation import validate_version
from index.vectors import (
    EMBEDDER_DIR,
    EmbedStats,
    VectorIndexSettings,
    build_vectors,
    pq_sub_vectors,
    write_batch_rows,
)
from index.versions import VersionStore, link_tree
from schemas.build import StageReport
from schemas.settings import IndexSettings

STAGE_OUTPUTS = {
    "evidence": [layout.EVIDENCE],
    "entities": [layout.ENTITIES, layout.ALIAS_INDEX],
    "bm25": [layout.BM25],
    "vectors": [layout.VECTORS],
    "graph": [layout.GRAPH],
    "statements": [layout.STATEMENTS],
    "tables": [layout.TABLES],
}
# graph reads the entities stage's table; the others read only the evidence or the ingest output
INDEX_STAGES = ("entities", "bm25", "vectors", "graph", "statements", "tables")
EVIDENCE_BYTES_PER_ROW = 2_000  # an evidence row in Python objects: text, lists, provenance
DISTILLED_MODELS = "models"  # distilled embedders, inside the embedding cache folder
SEEN_ID_BYTES = 256  # an evidence id in a Python set, with room: a quarter of the budget holds ~1M per GB


class ValidationFailed(RuntimeError):
    """The new version's indexes disagree or miss their smoke queries; it is not published."""


class BuildOutOfSpace(OSError):
    """A build step could not write its output: the disk (or the quota, or the file-size limit) is full.
    Nothing is published; ``current`` keeps pointing at the version it pointed at."""


NO_SPACE_ERRNOS = (errno.ENOSPC, errno.EFBIG, errno.EDQUOT)
NO_SPACE_MARKERS = {
    **{f"os error {n}": n for n in NO_SPACE_ERRNOS},
    **{os.strerror(n): n for n in NO_SPACE_ERRNOS},
}
"""How the Rust libraries (Lance, Tantivy) and Kùzu say it: their errors carry only a message, e.g.
"LanceError(IO): File too large (os error 27)"."""


def _no_space(exc: BaseException) -> int | None:
    """The errno of a full disk behind ``exc`` (or any exception it was raised from), else None."""
    seen: BaseException | None = exc
    for _ in range(8):  # a chain is short; a cycle must not hang the build's error path
        if seen is None:
            break
        if isinstance(seen, OSError) and seen.errno in NO_SPACE_ERRNOS:
            return seen.errno
        text = str(seen)
        for marker, code in NO_SPACE_MARKERS.items():
            if marker in text:
                return code
        seen = seen.__cause__ or seen.__context__
    return None


@contextmanager
def out_of_space_named(plan: BuildPlan, step: str, folder: Path, also: Path | None = None) -> Iterator[None]:
    """Turn a full disk met inside ``step`` — an ``OSError`` deep in pyarrow, a Lance or Tantivy error
    string — into a ``BuildOutOfSpace`` that names the folder being written and what to do; any other
    error passes unchanged. ``also``: another folder the step writes (the embedding cache)."""
    try:
        yield
    except Exception as exc:
        code = _no_space(exc)
        if code is None:
            raise
        where = f"{folder}" + (f" (or {also})" if also is not None else "")
        served = VersionStore(Path(plan.index_dir)).current()
        still = f"the previous version {served} is still served" if served else "no version is published yet"
        raise BuildOutOfSpace(
            code,
            f"the {step} step of build {plan.version} could not write {where}: {os.strerror(code)} "
            f"({type(exc).__name__}: {str(exc)[:200]}); free space and run the build again; {still}",
        ) from exc


@contextmanager
def duck_session(plan: BuildPlan, name: str) -> Iterator[duckdb.DuckDBPyConnection]:
    """A DuckDB for one step of this build, held to the plan's memory budget, spilling into the build's
    scratch folder (a folder per step and process, removed afterwards)."""
    spill = plan.work_dir / f"spill-{name}-{os.getpid()}"
    con = connect(budget(plan), spill)
    try:
        yield con
    finally:
        con.close()
        shutil.rmtree(spill, ignore_errors=True)


def budget(plan: BuildPlan) -> MemoryBudget:
    return MemoryBudget(memory_mb=plan.memory_mb)


class EvidenceFile(BaseModel):
    """What one verbalize job wrote, or reused from the previous version."""

    job: VerbalizeJob
    reused: bool
    stats: VerbalizeStats


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def _reused_evidence(plan: BuildPlan, job: VerbalizeJob, target: Path) -> VerbalizeStats | None:
    """Hard-link the job's evidence file from the previous version when its key is unchanged."""
    previous = plan.previous_manifest()
    if previous is None or "evidence" not in previous.stages:
        return None
    earlier = previous.stages["evidence"].details.get("evidence_files", {}).get(job.output)
    source = Path(plan.previous or "") / layout.EVIDENCE / job.output
    intact = not damaged_files(
        Path(plan.previous or ""), previous.files, [f"{layout.EVIDENCE}/{job.output}"], previous.checksums
    )
    if earlier is None or earlier["key"] != job.key or not source.is_file() or not intact:
        return None
    target.unlink(missing_ok=True)
    os.link(source, target)
    return VerbalizeStats(**{**earlier["stats"], "output": str(target)})


def verbalize_job(
    plan: BuildPlan,
    job: VerbalizeJob,
    index: IndexSettings,
    on_records: Callable[[int], None] | None = None,
) -> EvidenceFile:
    """Write one evidence file: hard-linked from the previous version when its key is unchanged."""
    out_dir = plan.building_dir / layout.EVIDENCE
    out_dir.mkdir(exist_ok=True)
    target = out_dir / job.output
    reused = _reused_evidence(plan, job, target)
    if reused is not None:
        if on_records is not None:
            on_records(reused.records)
        return EvidenceFile(job=job, reused=True, stats=reused)
    memory = budget(plan)
    batch_rows = memory.batch_rows(EVIDENCE_BYTES_PER_ROW, floor=1_000, ceiling=50_000)
    with out_of_space_named(plan, "verbalize", target), duck_session(plan, f"verbalize-{job.output}") as con:
        names = NameStore(plan.names_dir, con, Path(plan.unit_table))
        stats = verbalize_file(
            job.table,
            Path(job.path),
            out_dir,
            names,
            index.verbalize_settings(),
            on_records,
            batch_rows=batch_rows,
            row_group_rows=min(200_000, batch_rows * 4),
            work_dir=plan.work_dir / "verbalize" / job.output,
            seen_limit=memory.batch_rows(SEEN_ID_BYTES, floor=10_000, ceiling=10_000_000),
        )
    return EvidenceFile(job=job, reused=False, stats=stats)


def evidence_report(plan: BuildPlan, files: list[EvidenceFile]) -> StageReport:
    """The evidence stage's report from its files, and the list of rows whose id an earlier file has
    (what every later stage skips); fails when a planned file is missing."""
    out_dir = plan.building_dir / layout.EVIDENCE
    missing = [j.output for j in plan.verbalize if not (out_dir / j.output).is_file()]
    if missing:
        raise FileNotFoundError(f"evidence files not written: {missing}")
    with out_of_space_named(plan, "evidence", plan.building_dir), duck_session(plan, "evidence") as con:
        duplicates = write_duplicates(out_dir, plan.building_dir / layout.EVIDENCE_DUPLICATES, con)
    records = sum(f.stats.records for f in files)
    work_seconds = sum(f.stats.seconds for f in files if not f.reused)
    computed = sum(f.stats.records for f in files if not f.reused)
    skipped: dict[str, int] = {}
    for f in files:
        for reason, n in f.stats.skipped.items():
            key = f"{f.stats.table}: {reason}"
            skipped[key] = skipped.get(key, 0) + n
    all_reused = bool(files) and all(f.reused for f in files)
    return StageReport(
        name="evidence",
        fingerprint=plan.fingerprints["evidence"],
        reused_from=Path(plan.previous).name if all_reused and plan.previous else None,
        seconds=round(work_seconds, 3),
        counts={"records": records, "evidence_rows": sum(f.stats.evidence for f in files)},
        rate=computed / work_seconds if work_seconds else None,
        rate_unit="records/s",
        bytes=dir_bytes(out_dir),
        details={
            "skipped": skipped,
            "reused_files": sum(f.reused for f in files),
            "repeated_across_files": duplicates,
            "evidence_files": {
                f.job.output: {"key": f.job.key, "stats": f.stats.model_dump(mode="json")} for f in files
            },
        },
    )


def reusable_stage(plan: BuildPlan, name: str) -> StageReport | None:
    """The previous version's report of stage ``name`` when its output can be linked: same fingerprint,
    every output there and intact (a damaged stage is built again, not linked)."""
    outputs = STAGE_OUTPUTS[name]
    previous = plan.previous_manifest()
    old = previous.stages.get(name) if previous is not None else None
    if (
        old is not None
        and old.fingerprint == plan.fingerprints[name]
        and all((Path(plan.previous or "") / out).exists() for out in outputs)
        and not damaged_files(Path(plan.previous or ""), previous.files, outputs, previous.checksums)
    ):
        return old
    return None


class EmbedPartReport(BaseModel):
    """What one mapped embed task did: nothing when the vector stage will be linked from the last
    version, else the rows of its evidence file it embedded."""

    part: int
    file: str
    skipped: bool
    stats: EmbedStats | None = None


def embed_parts(plan: BuildPlan) -> list[int]:
    """The evidence parts (files) of the build, for a mapped embed task (after the evidence step)."""
    return list(range(len(part_names(plan.building_dir))))


def embed_part_step(
    plan: BuildPlan, part: int, index: IndexSettings, embedding_cache: Path
) -> EmbedPartReport:
    """Embed one evidence file's rows the cache lacks into the build's staging cache
    (``index.embed_parts``)."""
    file = part_names(plan.building_dir)[part]
    if reusable_stage(plan, "vectors") is not None:
        return EmbedPartReport(part=part, file=file, skipped=True)
    embedder = build_embedder(index, embedding_cache)
    cache = EmbeddingCache(embedding_cache, embedder.cache_key)
    staged = staging_root(plan.work_dir, embedder.cache_key)
    with (
        out_of_space_named(plan, "embed", staged, also=embedding_cache),
        duck_session(plan, f"embed-{part}") as con,
    ):
        stats = embed_part(plan.building_dir, part, embedder, cache, plan.work_dir, index.embed_sources, con)
    return EmbedPartReport(part=part, file=file, skipped=False, stats=stats)


def run_stage(plan: BuildPlan, name: str, index: IndexSettings, embedding_cache: Path) -> StageReport:
    """Build one index stage into the plan's folder, or hard-link it when its fingerprint is unchanged."""
    building = plan.building_dir
    outputs = STAGE_OUTPUTS[name]
    for out in outputs:  # a retried task starts from nothing
        shutil.rmtree(building / out, ignore_errors=True)
    fingerprint = plan.fingerprints[name]
    old = reusable_stage(plan, name)
    if old is not None:
        started = time.perf_counter()
        for out in outputs:
            link_tree(Path(plan.previous or "") / out, building / out)
        return old.model_copy(
            update={
                "reused_from": old.reused_from or Path(plan.previous or "").name,
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
    cache = embedding_cache if name == "vectors" else None
    with out_of_space_named(plan, name, building / outputs[0], also=cache), duck_session(plan, name) as con:
        report = _build_stage(plan, name, index, embedding_cache, con)
    report.fingerprint = fingerprint
    report.bytes = sum(dir_bytes(building / out) for out in outputs)
    return report


def _build_stage(
    plan: BuildPlan, name: str, index: IndexSettings, embedding_cache: Path, con: duckdb.DuckDBPyConnection
) -> StageReport:
    if name == "entities":
        return _entities_stage(plan, con)
    if name == "bm25":
        return _bm25_stage(plan)
    if name == "vectors":
        return _vector_stage(plan, index, embedding_cache, con)
    if name == "graph":
        return _graph_stage(plan, con)
    if name == "statements":
        return _statements_stage(plan, con)
    if name == "tables":
        return _tables_stage(plan, con)
    raise ValueError(f"unknown stage {name!r}; stages: {INDEX_STAGES}")


def _entities_stage(plan: BuildPlan, con: duckdb.DuckDBPyConnection) -> StageReport:
    building = plan.building_dir
    (building / layout.ENTITIES).mkdir()
    stats = build_entities(
        Path(plan.ingest_dir),
        plan.names_dir,
        building / layout.ENTITY_TABLE,
        building / layout.ALIAS_TABLE,
        building / layout.ALIAS_INDEX,
        con,
        budget(plan),
        plan.work_dir / "entities",
    )
    return StageReport(
        name="entities",
        fingerprint="",
        seconds=stats.seconds,
        counts={"entities": stats.entities, "aliases": stats.aliases},
        rate=stats.aliases / stats.seconds if stats.seconds else None,
        rate_unit="aliases/s",
        details={"alias_index_seconds": stats.alias_index_seconds},
    )


def _bm25_stage(plan: BuildPlan) -> StageReport:
    memory = budget(plan)
    evidence = EvidenceReader(plan.building_dir)
    stats = build_bm25(
        evidence.batches(
            BM25_COLUMNS,
            memory.batch_rows(EVIDENCE_BYTES_PER_ROW, ceiling=20_000),
        ),
        plan.building_dir / layout.BM25,
        total=evidence.rows(),
        heap_bytes=min(256_000_000, (memory.memory_mb << 20) // 4),
    )
    return StageReport(
        name="bm25",
        fingerprint="",
        seconds=stats.seconds,
        counts={"documents": stats.documents},
        rate=stats.docs_per_second,
        rate_unit="docs/s",
    )


def embedder_settings(index: IndexSettings, model_dir: Path | None = None) -> EmbedderSettings:
    return EmbedderSettings(
        model=index.embedding_model,
        batch_size=index.embedding_batch_size,
        workers=index.embedding_workers,
        max_seq_length=index.max_seq_length,
        bulk_precision=index.embedding_precision,
        model_dir=model_dir,
        device=index.embedding_device,
    )


def build_embedder(index: IndexSettings, embedding_cache: Path) -> Embedder:
    """The build's embedder. A distilled model is made once, from the bundled MiniLM, into the
    embedding cache's ``models/`` folder: it lives where the vectors it makes live (shared by every
    build and worker that shares the cache), and a cache key is never a bare ``models``."""
    if MODELS.get(index.embedding_model) is not None and MODELS[index.embedding_model].kind == "model2vec":
        models = Path(embedding_cache) / DISTILLED_MODELS
        ensure_distilled_minilm(models)
        return Embedder(embedder_settings(index, models))
    return Embedder(embedder_settings(index))


def vector_index_settings(index: IndexSettings, dimension: int) -> VectorIndexSettings:
    return VectorIndexSettings(
        ann_min_rows=index.ann_min_rows,
        nprobes=index.ann_nprobes,
        refine_factor=index.ann_refine_factor,
        num_sub_vectors=pq_sub_vectors(dimension),
        max_training_mb=index.memory_mb // 4,
    )


def _embed_rate(rows: int, seconds: float) -> float | None:
    return rows / seconds if rows and seconds else None


def _vector_stage(
    plan: BuildPlan, index: IndexSettings, embedding_cache: Path, con: duckdb.DuckDBPyConnection
) -> StageReport:
    embedder = build_embedder(index, embedding_cache)
    cache = EmbeddingCache(embedding_cache, embedder.cache_key)
    started = time.perf_counter()
    staged = merge_staged(cache, plan.work_dir)  # what the mapped embed tasks computed
    stats = build_vectors(
        EvidenceReader(plan.building_dir),
        embedder,
        cache,
        plan.building_dir / layout.VECTORS,
        vector_index_settings(index, embedder.dimension),
        con,
        batch_rows=write_batch_rows(plan.memory_mb, embedder.dimension),
        sources=index.embed_sources,
        scratch_dir=plan.work_dir,
    )
    if embedder.settings.model_dir is not None:  # queries must encode with this very model
        copy_model(embedder.path, plan.building_dir / layout.VECTORS / EMBEDDER_DIR)
    return StageReport(
        name="vectors",
        fingerprint="",
        seconds=round(time.perf_counter() - started, 3),
        counts={"vectors": stats.index.rows},
        rate=_embed_rate(stats.embed.computed + staged.rows, stats.embed.seconds + staged.seconds),
        rate_unit="embeddings/s",
        details={
            # what this run computed, not what the index holds: kept out of the manifest's counts
            "embedded": stats.embed.computed + staged.rows,
            "embedded_in_parts": staged.rows,
            "cache_hits": stats.embed.reused,
            "model": {
                "name": embedder.model_name,
                "max_seq_length": embedder.max_seq_length,
                "precision": embedder.bulk_precision,
            },
            "ann": stats.index.model_dump(mode="json"),
        },
    )


def _graph_stage(plan: BuildPlan, con: duckdb.DuckDBPyConnection) -> StageReport:
    building = plan.building_dir
    if not (building / layout.ENTITY_TABLE).is_file():
        raise FileNotFoundError(f"the graph stage needs the entities stage's {layout.ENTITY_TABLE} first")
    work = plan.work_dir / "graph"
    shutil.rmtree(work, ignore_errors=True)
    (building / layout.GRAPH).mkdir()
    stats = build_graph(
        Path(plan.ingest_dir),
        EvidenceReader(building),
        building / layout.ENTITY_TABLE,
        NameStore(plan.names_dir, con, Path(plan.unit_table)),
        building / layout.GRAPH_DB,
        work,
        budget(plan),
    )
    shutil.rmtree(work)
    return StageReport(
        name="graph",
        fingerprint="",
        seconds=stats.seconds,
        counts={
            **{f"nodes_{k}": v for k, v in stats.nodes.items()},
            **{f"edges_{k}": v for k, v in stats.edges.items()},
        },
        rate=stats.edges_per_second,
        rate_unit="edges/s (COPY)",
        details={
            "links_skipped": stats.links_skipped,
            "copy_seconds": stats.copy_seconds,
            "peak_rss_mb": stats.peak_rss_mb,
        },
    )


def _statements_stage(plan: BuildPlan, con: duckdb.DuckDBPyConnection) -> StageReport:
    work = plan.work_dir / "statements"
    stats = build_statements(
        Path(plan.ingest_dir),
        NameStore(plan.names_dir, con, Path(plan.unit_table)),
        plan.building_dir / layout.STATEMENT_TABLE,
        work,
        budget(plan),
    )
    shutil.rmtree(work, ignore_errors=True)
    return StageReport(
        name="statements",
        fingerprint="",
        seconds=stats.seconds,
        counts={
            "statements": stats.statements,
            "with_evidence": stats.with_evidence,
            "deprecated": stats.deprecated,
            "skipped": stats.skipped,
        },
        rate=stats.input_rows / stats.seconds if stats.seconds else None,
        rate_unit="statements/s",
        details={"skipped_ids": stats.skipped_ids, "skip_reasons": stats.skip_reasons},
    )


def _tables_stage(plan: BuildPlan, con: duckdb.DuckDBPyConnection) -> StageReport:
    building = plan.building_dir
    stats = build_tables(
        Path(plan.ingest_dir), building / layout.EVIDENCE, building / layout.TABLE_ROWS, con, budget(plan)
    )
    return StageReport(
        name="tables",
        fingerprint="",
        seconds=stats.seconds,
        counts={"tables": stats.tables, "rows": stats.rows},
        rate=stats.rows / stats.seconds if stats.seconds else None,
        rate_unit="rows/s",
        details={
            "duplicate_rows": stats.duplicate_rows,
            "files": stats.files,
            "rows_without_evidence": stats.rows_without_evidence,
        },
    )


def validate_build(plan: BuildPlan, index: IndexSettings) -> dict[str, str]:
    """Counts agree across the indexes and each answers one smoke query; raises when any check fails."""
    with duck_session(plan, "validate") as con:
        results = validate_version(plan.building_dir, Path(plan.ingest_dir), con)
    failures = {k: v for k, v in results.items() if v != "ok"}
    if failures:
        raise ValidationFailed(f"index version {plan.version} failed validation: {failures}")
    return results
