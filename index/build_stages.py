"""The steps of one index build, each runnable alone against a ``BuildPlan``.

``hqa build`` runs them in one process; the Airflow rebuild runs each as its own task (the
verbalize step mapped over ingest files, the index stages in parallel). Every step is idempotent:
it clears what it writes before writing it, so a retried task gives the same output. A step whose
fingerprint equals the previous version's hard-links that version's output instead of working.
"""

from __future__ import annotations

import errno
import os
import shutil
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel

from index import layout
from index.aliases import AliasIndex, alias_table, build_alias_index, entity_records
from index.bm25 import Bm25Index, build_bm25
from index.build_plan import BuildPlan, VerbalizeJob, verbalize_settings
from index.embedder import Embedder, EmbedderSettings
from index.embedding_cache import EmbeddingCache
from index.evidence import VerbalizeStats, verbalize_file
from index.graph import GraphIndex, build_graph
from index.integrity import damaged_files
from index.lexicon import Lexicon, table_files
from index.statements import StatementStore, build_statements
from index.tables import TableStore, build_tables
from index.vectors import VectorIndex, VectorIndexSettings, build_vector_index, embed_evidence, pq_sub_vectors
from index.versions import VersionStore, link_tree
from schemas.build import StageReport
from schemas.settings import HqaSettings

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


class EvidenceFile(BaseModel):
    """What one verbalize job wrote, or reused from the previous version."""

    job: VerbalizeJob
    reused: bool
    stats: VerbalizeStats


def read_evidence(evidence_dir: Path, columns: list[str] | None = None) -> pa.Table:
    """All evidence files as one table, each evidence id once (the first file in name order wins)."""
    files = sorted(Path(evidence_dir).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no evidence under {evidence_dir}")
    frame = pl.concat([pl.read_parquet(f, columns=columns) for f in files])
    return frame.unique("evidence_id", keep="first", maintain_order=True).to_arrow()


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


def load_lexicon(plan: BuildPlan, settings: HqaSettings) -> Lexicon:
    return Lexicon.load(Path(plan.ingest_dir), settings.unit_table)


def verbalize_job(
    plan: BuildPlan,
    job: VerbalizeJob,
    settings: HqaSettings,
    lexicon: Lexicon | None = None,
    on_records: Callable[[int], None] | None = None,
) -> EvidenceFile:
    """Write one evidence file: hard-linked from the previous version when its key is unchanged.

    Without a ``lexicon`` it is loaded only when the file has to be verbalized.
    """
    out_dir = plan.building_dir / layout.EVIDENCE
    out_dir.mkdir(exist_ok=True)
    target = out_dir / job.output
    previous = plan.previous_manifest()
    if previous is not None and "evidence" in previous.stages:
        earlier = previous.stages["evidence"].details.get("evidence_files", {}).get(job.output)
        source = Path(plan.previous or "") / layout.EVIDENCE / job.output
        intact = not damaged_files(
            Path(plan.previous or ""), previous.files, [f"{layout.EVIDENCE}/{job.output}"], previous.checksums
        )
        if earlier is not None and earlier["key"] == job.key and source.is_file() and intact:
            target.unlink(missing_ok=True)
            os.link(source, target)
            if on_records is not None:
                on_records(earlier["stats"]["records"])
            stats = VerbalizeStats(**{**earlier["stats"], "output": str(target)})
            return EvidenceFile(job=job, reused=True, stats=stats)
    if lexicon is None:
        lexicon = load_lexicon(plan, settings)
    with out_of_space_named(plan, "verbalize", target):
        stats = verbalize_file(
            job.table, Path(job.path), out_dir, lexicon, verbalize_settings(settings), on_records
        )
    return EvidenceFile(job=job, reused=False, stats=stats)


def evidence_report(plan: BuildPlan, files: list[EvidenceFile]) -> StageReport:
    """The evidence stage's report from its files; fails when a planned file is missing."""
    out_dir = plan.building_dir / layout.EVIDENCE
    missing = [j.output for j in plan.verbalize if not (out_dir / j.output).is_file()]
    if missing:
        raise FileNotFoundError(f"evidence files not written: {missing}")
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
            "evidence_files": {
                f.job.output: {"key": f.job.key, "stats": f.stats.model_dump(mode="json")} for f in files
            },
        },
    )


def run_stage(
    plan: BuildPlan, name: str, settings: HqaSettings, lexicon: Lexicon | None = None
) -> StageReport:
    """Build one index stage into the plan's folder, or hard-link it when its fingerprint is unchanged."""
    building = plan.building_dir
    outputs = STAGE_OUTPUTS[name]
    for out in outputs:  # a retried task starts from nothing
        shutil.rmtree(building / out, ignore_errors=True)
    fingerprint = plan.fingerprints[name]
    previous = plan.previous_manifest()
    old = previous.stages.get(name) if previous is not None else None
    if (
        old is not None
        and old.fingerprint == fingerprint
        and all((Path(plan.previous or "") / out).exists() for out in outputs)
        # a damaged stage (a file cut short, deleted or overwritten since it was published) is built
        # again, not linked
        and not damaged_files(Path(plan.previous or ""), previous.files, outputs, previous.checksums)
    ):
        started = time.perf_counter()
        for out in outputs:
            link_tree(Path(plan.previous or "") / out, building / out)
        return old.model_copy(
            update={
                "reused_from": old.reused_from or Path(plan.previous or "").name,
                "seconds": round(time.perf_counter() - started, 3),
            }
        )
    if name in ("entities", "graph", "statements") and lexicon is None:
        lexicon = load_lexicon(plan, settings)
    cache = settings.embedding_cache_dir if name == "vectors" else None
    with out_of_space_named(plan, name, building / outputs[0], also=cache):
        report = _build_stage(plan, name, settings, lexicon)
    report.fingerprint = fingerprint
    report.bytes = sum(dir_bytes(building / out) for out in outputs)
    return report


def _build_stage(plan: BuildPlan, name: str, settings: HqaSettings, lexicon: Lexicon | None) -> StageReport:
    if name == "entities":
        return _entities_stage(plan, lexicon)  # type: ignore[arg-type]
    if name == "bm25":
        return _bm25_stage(plan)
    if name == "vectors":
        return _vector_stage(plan, settings)
    if name == "graph":
        return _graph_stage(plan, lexicon)  # type: ignore[arg-type]
    if name == "statements":
        return _statements_stage(plan, lexicon)  # type: ignore[arg-type]
    if name == "tables":
        return _tables_stage(plan)
    raise ValueError(f"unknown stage {name!r}; stages: {INDEX_STAGES}")


def _entities_stage(plan: BuildPlan, lexicon: Lexicon) -> StageReport:
    building, ingest_dir = plan.building_dir, Path(plan.ingest_dir)
    started = time.perf_counter()
    entities = entity_records(lexicon, ingest_dir)
    aliases = alias_table(lexicon, ingest_dir)
    (building / layout.ENTITIES).mkdir()
    pq.write_table(entities, building / layout.ENTITY_TABLE, compression="zstd")
    pq.write_table(aliases, building / layout.ALIAS_TABLE, compression="zstd")
    stats = build_alias_index(aliases, entities, building / layout.ALIAS_INDEX)
    seconds = time.perf_counter() - started
    return StageReport(
        name="entities",
        fingerprint="",
        seconds=round(seconds, 3),
        counts={"entities": entities.num_rows, "aliases": aliases.num_rows},
        rate=aliases.num_rows / seconds,
        rate_unit="aliases/s",
        details={"alias_index_seconds": stats.seconds},
    )


def _bm25_stage(plan: BuildPlan) -> StageReport:
    evidence = read_evidence(plan.building_dir / layout.EVIDENCE)
    stats = build_bm25(evidence, plan.building_dir / layout.BM25)
    return StageReport(
        name="bm25",
        fingerprint="",
        seconds=stats.seconds,
        counts={"documents": stats.documents},
        rate=stats.docs_per_second,
        rate_unit="docs/s",
    )


def embedder_settings(settings: HqaSettings) -> EmbedderSettings:
    return EmbedderSettings(
        model=settings.index.embedding_model,
        batch_size=settings.index.embedding_batch_size,
        workers=settings.index.embedding_workers,
        max_seq_length=settings.index.max_seq_length,
        bulk_precision=settings.index.embedding_precision,
    )


def _vector_stage(plan: BuildPlan, settings: HqaSettings) -> StageReport:
    evidence = read_evidence(plan.building_dir / layout.EVIDENCE)
    index_settings = settings.index
    embedder = Embedder(embedder_settings(settings))
    cache = EmbeddingCache(settings.embedding_cache_dir, embedder.cache_key)
    started = time.perf_counter()
    vectors, embed_stats = embed_evidence(evidence, embedder, cache)
    embed_seconds = time.perf_counter() - started
    stats = build_vector_index(
        vectors,
        plan.building_dir / layout.VECTORS,
        VectorIndexSettings(
            ann_min_rows=index_settings.ann_min_rows,
            nprobes=index_settings.ann_nprobes,
            refine_factor=index_settings.ann_refine_factor,
            num_sub_vectors=pq_sub_vectors(embedder.dimension),
        ),
    )
    return StageReport(
        name="vectors",
        fingerprint="",
        seconds=round(time.perf_counter() - started, 3),
        counts={"vectors": vectors.num_rows},
        rate=embed_stats.computed / embed_seconds if embed_stats.computed else None,
        rate_unit="embeddings/s",
        details={
            # what this run computed, not what the index holds: kept out of the manifest's counts
            "embedded": embed_stats.computed,
            "cache_hits": embed_stats.reused,
            "model": {
                "name": embedder.model_name,
                "max_seq_length": embedder.max_seq_length,
                "precision": embedder.bulk_precision,
            },
            "ann": stats.model_dump(mode="json"),
        },
    )


def _graph_stage(plan: BuildPlan, lexicon: Lexicon) -> StageReport:
    building = plan.building_dir
    if not (building / layout.ENTITY_TABLE).is_file():
        raise FileNotFoundError(f"the graph stage needs the entities stage's {layout.ENTITY_TABLE} first")
    work = building / ".work-graph"
    shutil.rmtree(work, ignore_errors=True)
    (building / layout.GRAPH).mkdir()
    stats = build_graph(
        Path(plan.ingest_dir),
        sorted((building / layout.EVIDENCE).glob("*.parquet")),
        building / layout.ENTITY_TABLE,
        lexicon,
        building / layout.GRAPH_DB,
        work,
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
        details={"links_skipped": stats.links_skipped, "copy_seconds": stats.copy_seconds},
    )


def _statements_stage(plan: BuildPlan, lexicon: Lexicon) -> StageReport:
    stats = build_statements(Path(plan.ingest_dir), lexicon, plan.building_dir / layout.STATEMENT_TABLE)
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


def _tables_stage(plan: BuildPlan) -> StageReport:
    building = plan.building_dir
    stats = build_tables(Path(plan.ingest_dir), building / layout.EVIDENCE, building / layout.TABLE_ROWS)
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


def validate_build(plan: BuildPlan, settings: HqaSettings) -> dict[str, str]:
    """Counts agree across the indexes and each answers one smoke query; raises when any check fails.

    The typed statements hold every ingested statement but the skipped ones, and each evidence id
    they cite is in the evidence.
    """
    building = plan.building_dir
    evidence = read_evidence(building / layout.EVIDENCE, ["evidence_id", "text"])
    results: dict[str, str] = {}
    expected = evidence.num_rows
    first = evidence.slice(0, 1).to_pylist()[0]

    def check(name: str, fn: Callable[[], str | None]) -> None:
        try:
            problem = fn()
        except Exception as exc:  # a broken index must fail validation, whatever the error
            problem = f"{type(exc).__name__}: {exc}"
        results[name] = problem or "ok"

    def bm25() -> str | None:
        index = Bm25Index(building / layout.BM25)
        if index.count() != expected:
            return f"{index.count()} documents for {expected} evidence rows"
        hits = index.search(first["text"], 10)
        return None if any(h.evidence_id == first["evidence_id"] for h in hits) else "smoke query missed"

    def aliases() -> str | None:
        table = pq.read_table(building / layout.ALIAS_TABLE, columns=["alias", "entity_id"])
        index = AliasIndex(building / layout.ALIAS_INDEX)
        if index.count() != table.num_rows:
            return f"{index.count()} alias documents for {table.num_rows} aliases"
        alias, entity = table["alias"][0].as_py(), table["entity_id"][0].as_py()
        return None if any(h.entity_id == entity for h in index.lookup(alias, 50)) else "smoke lookup missed"

    def vectors() -> str | None:
        index = VectorIndex.open(building / layout.VECTORS)
        if index.count() != expected:
            return f"{index.count()} vectors for {expected} evidence rows"
        hits = index.search(Embedder(embedder_settings(settings)).encode([first["text"]])[0], 5)
        return None if any(h.evidence_id == first["evidence_id"] for h in hits) else "own text not nearest"

    def graph() -> str | None:
        with GraphIndex.open(building / layout.GRAPH_DB) as index:
            count = index.counts().get("Evidence", 0)
            if count != expected:
                return f"{count} evidence nodes for {expected} evidence rows"
            rows = index.query(
                "MATCH (e:Evidence {id: $id}) RETURN e.text AS text", {"id": first["evidence_id"]}
            )
            return None if rows and rows[0]["text"] == first["text"] else "smoke query missed"

    def statements() -> str | None:
        store = StatementStore(building / layout.STATEMENT_TABLE)
        ingested = sum(
            pq.ParquetFile(f).metadata.num_rows for f in table_files(Path(plan.ingest_dir), ("statements",))
        )
        if store.stats is None:
            return "the statements file carries no build stats"
        if store.count() != ingested - store.stats.skipped:
            return f"{store.count()} statements for {ingested} ingested, {store.stats.skipped} skipped"
        ids = pq.read_table(
            building / layout.STATEMENT_TABLE, columns=["statement_id", "subject", "evidence_id"]
        )
        cited = ids["evidence_id"].drop_null()
        known = pc.is_in(cited, value_set=evidence["evidence_id"].combine_chunks())
        missing = len(cited) - (pc.sum(known).as_py() or 0)
        if missing:
            return f"{missing} statements cite evidence ids the evidence does not hold"
        if not ids.num_rows:
            return None
        first = ids.slice(0, 1).to_pylist()[0]
        hits = store.lookup([first["subject"]])
        return None if hits and hits[0].statement_id == first["statement_id"] else "smoke lookup missed"

    def tables() -> str | None:
        store = TableStore(building / layout.TABLE_ROWS)
        if store.stats is None:
            return "the tables file carries no build stats"
        ingested = sum(
            pq.ParquetFile(f).metadata.num_rows for f in table_files(Path(plan.ingest_dir), ("table_rows",))
        )
        if store.count() != ingested - store.stats.duplicate_rows:
            return (
                f"{store.count()} table rows for {ingested} ingested, {store.stats.duplicate_rows} duplicates"
            )
        if not store.count():
            return None
        first_row = pq.read_table(building / layout.TABLE_ROWS, columns=["table_id"]).slice(0, 1)
        table_id = first_row["table_id"][0].as_py()
        rows = store.rows(table_id)
        return (
            None
            if rows and rows[0].table_id == table_id and rows[0].row_index == 0
            else "smoke lookup missed"
        )

    for name, fn in (
        ("bm25", bm25),
        ("aliases", aliases),
        ("vectors", vectors),
        ("graph", graph),
        ("statements", statements),
        ("tables", tables),
    ):
        check(name, fn)
    failures = {k: v for k, v in results.items() if v != "ok"}
    if failures:
        raise ValidationFailed(f"index version {plan.version} failed validation: {failures}")
    return results
