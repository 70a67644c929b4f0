"""Build a new index version from the ingest output: evidence, aliases, BM25, vectors, graph.

Each stage runs only when its fingerprint differs from the current version's; otherwise its output is
hard-linked from there (the embedding cache separately makes even a changed vector stage pay only for
new evidence). When nothing changed, no version is made at all. Validation (counts agree across the
indexes, one smoke query each) runs before the ``current`` pointer moves, so readers never see a
broken version.
"""

from __future__ import annotations

import importlib.metadata
import json
import logging
import shutil
import time
from collections.abc import Callable
from dataclasses import dataclass
from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq

from index import layout
from index.aliases import AliasIndex, alias_table, build_alias_index, entity_records
from index.bm25 import Bm25Index, build_bm25
from index.embedder import Embedder, EmbedderSettings
from index.embedding_cache import EmbeddingCache
from index.evidence import VerbalizeSettings, verbalize_all
from index.fingerprints import combine, hash_files
from index.graph import GraphIndex, build_graph
from index.lexicon import Lexicon, table_files
from index.vectors import VectorIndex, VectorIndexSettings, build_vector_index, embed_evidence
from index.versions import VersionStore, link_tree
from schemas.build import InputFile, Manifest, StageReport
from schemas.ingest import IngestSummary
from schemas.settings import HqaSettings

log = logging.getLogger(__name__)

# Bump a stage's number when its code changes what it writes: old outputs are then not reused.
STAGE_FORMATS = {"evidence": 1, "entities": 1, "bm25": 1, "vectors": 1, "graph": 1}
LIBRARIES = ("pyarrow", "polars", "tantivy", "lancedb", "kuzu", "sentence-transformers", "torch")


@dataclass
class BuildResult:
    version_dir: Path
    manifest: Manifest
    built: bool  # False when the current version was already up to date


def library_versions() -> dict[str, str]:
    return {name: importlib.metadata.version(name) for name in LIBRARIES}


def ingest_inputs(ingest_dir: Path) -> list[InputFile]:
    """The dump files behind the ingest output, with the checksums the ingest runs recorded."""
    inputs = []
    for path in sorted((Path(ingest_dir) / "_runs").glob("*.json")):
        summary = IngestSummary.model_validate_json(path.read_text())
        inputs.append(
            InputFile(
                path=summary.source,
                sha256=summary.source_sha256,
                bytes=summary.source_bytes,
                reader=summary.reader,
                shard=summary.shard,
            )
        )
    return inputs


def read_evidence(evidence_dir: Path) -> pa.Table:
    """All evidence files as one table, each evidence id once (the first file in name order wins)."""
    files = sorted(Path(evidence_dir).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no evidence under {evidence_dir}")
    frame = pl.concat([pl.read_parquet(f) for f in files])
    return frame.unique("evidence_id", keep="first", maintain_order=True).to_arrow()


def dir_bytes(path: Path) -> int:
    return sum(p.stat().st_size for p in Path(path).rglob("*") if p.is_file())


class _Stages:
    """Runs or reuses each stage of one build and records its report."""

    def __init__(self, building: Path, previous: Path | None, previous_manifest: Manifest | None):
        self.building = building
        self.previous = previous
        self.previous_manifest = previous_manifest
        self.reports: dict[str, StageReport] = {}

    def run(self, name: str, fingerprint: str, outputs: list[str], work: Callable[[], StageReport]) -> bool:
        """Run ``work`` unless the previous version has this stage with the same fingerprint; True if run."""
        old = self.previous_manifest.stages.get(name) if self.previous_manifest else None
        reusable = old is not None and old.fingerprint == fingerprint and self.previous is not None
        if reusable and all((self.previous / out).exists() for out in outputs):
            started = time.perf_counter()
            for out in outputs:
                link_tree(self.previous / out, self.building / out)
            self.reports[name] = old.model_copy(
                update={
                    "reused_from": old.reused_from or self.previous.name,
                    "seconds": round(time.perf_counter() - started, 3),
                }
            )
            return False
        report = work()
        report.fingerprint = fingerprint
        report.bytes = sum(dir_bytes(self.building / out) for out in outputs)
        self.reports[name] = report
        return True


def build_index(settings: HqaSettings, *, ingest_dir: Path | None = None, force: bool = False) -> BuildResult:
    """Build (or reuse) every stage into a new version, validate it, publish it, prune old ones."""
    started = time.perf_counter()
    ingest_dir = Path(ingest_dir or settings.ingest_dir)
    store = VersionStore(settings.index_dir)
    previous = store.current()
    previous_manifest = store.manifest(previous) if previous is not None else None
    index_settings = settings.index

    kg_tables = ("entities", "statements", "properties")
    page_tables = ("pages", "passages", "table_rows", "infobox_fields", "links")
    if not table_files(ingest_dir, ("pages", "entities")):
        raise FileNotFoundError(f"no ingest output under {ingest_dir}: run `hqa ingest` first")
    ingest_fp = hash_files(table_files(ingest_dir, kg_tables + page_tables), ingest_dir)
    units_fp = hash_files([settings.unit_table], settings.unit_table.parent)
    verbalize = VerbalizeSettings(
        max_words=index_settings.max_words, entity_summaries=index_settings.entity_summaries
    )
    fingerprints = {
        "evidence": combine(STAGE_FORMATS["evidence"], ingest_fp, units_fp, verbalize.model_dump()),
        "entities": combine(STAGE_FORMATS["entities"], ingest_fp),
    }
    fingerprints["bm25"] = combine(STAGE_FORMATS["bm25"], fingerprints["evidence"])
    fingerprints["vectors"] = combine(
        STAGE_FORMATS["vectors"], fingerprints["evidence"], index_settings.vector_settings_dump()
    )
    fingerprints["graph"] = combine(STAGE_FORMATS["graph"], fingerprints["evidence"], ingest_fp)
    if (
        not force
        and previous_manifest is not None
        and all(
            name in previous_manifest.stages and previous_manifest.stages[name].fingerprint == fp
            for name, fp in fingerprints.items()
        )
    ):
        log.info("index %s is up to date with the ingest output", previous_manifest.version)
        return BuildResult(previous, previous_manifest, built=False)

    version = store.new_version_name()
    building = store.start(version)
    stages = _Stages(building, None if force else previous, previous_manifest)
    try:
        lexicon_started = time.perf_counter()
        lexicon = Lexicon.load(ingest_dir, settings.unit_table)
        lexicon_seconds = time.perf_counter() - lexicon_started

        def evidence_stage() -> StageReport:
            t = time.perf_counter()
            stats = verbalize_all(ingest_dir, building / layout.EVIDENCE, lexicon, verbalize)
            records = sum(s.records for s in stats)
            seconds = time.perf_counter() - t
            skipped: dict[str, int] = {}
            for s in stats:
                for reason, n in s.skipped.items():
                    skipped[f"{s.table}: {reason}"] = skipped.get(f"{s.table}: {reason}", 0) + n
            return StageReport(
                name="evidence",
                fingerprint="",
                seconds=round(seconds + lexicon_seconds, 3),
                counts={"records": records, "evidence_rows": sum(s.evidence for s in stats)},
                rate=records / seconds if seconds else None,
                rate_unit="records/s",
                details={"skipped": skipped, "files": len(stats)},
            )

        stages.run("evidence", fingerprints["evidence"], [layout.EVIDENCE], evidence_stage)
        evidence = read_evidence(building / layout.EVIDENCE)
        by_type = dict(
            zip(*pl.from_arrow(evidence)["source_type"].value_counts().to_dict().values(), strict=True)
        )

        def entities_stage() -> StageReport:
            t = time.perf_counter()
            entities = entity_records(lexicon, ingest_dir)
            aliases = alias_table(lexicon, ingest_dir)
            (building / layout.ENTITIES).mkdir()
            pq.write_table(entities, building / layout.ENTITY_TABLE, compression="zstd")
            pq.write_table(aliases, building / layout.ALIAS_TABLE, compression="zstd")
            stats = build_alias_index(aliases, entities, building / layout.ALIAS_INDEX)
            seconds = time.perf_counter() - t
            return StageReport(
                name="entities",
                fingerprint="",
                seconds=round(seconds, 3),
                counts={"entities": entities.num_rows, "aliases": aliases.num_rows},
                rate=aliases.num_rows / seconds,
                rate_unit="aliases/s",
                details={"alias_index_seconds": stats.seconds},
            )

        stages.run(
            "entities", fingerprints["entities"], [layout.ENTITIES, layout.ALIAS_INDEX], entities_stage
        )

        def bm25_stage() -> StageReport:
            stats = build_bm25(evidence, building / layout.BM25)
            return StageReport(
                name="bm25",
                fingerprint="",
                seconds=stats.seconds,
                counts={"documents": stats.documents},
                rate=stats.docs_per_second,
                rate_unit="docs/s",
            )

        stages.run("bm25", fingerprints["bm25"], [layout.BM25], bm25_stage)
        stages.run(
            "vectors",
            fingerprints["vectors"],
            [layout.VECTORS],
            lambda: vector_stage(evidence, building, settings),
        )
        stages.run(
            "graph",
            fingerprints["graph"],
            [layout.GRAPH],
            lambda: graph_stage(ingest_dir, building, lexicon),
        )
        validation = validate(building, evidence, embedder_settings(settings))
        failures = {k: v for k, v in validation.items() if v != "ok"}
        if failures:
            raise RuntimeError(f"index version {version} failed validation: {failures}")
        manifest = Manifest(
            version=version,
            created_at=datetime.now(UTC).isoformat(timespec="seconds"),
            hqa_version=importlib.metadata.version("hqa"),
            inputs=ingest_inputs(ingest_dir),
            settings=json.loads(settings.model_dump_json()),
            libraries=library_versions(),
            model=stages.reports["vectors"].details.get("model", {}),
            stages=stages.reports,
            counts={
                "evidence": evidence.num_rows,
                **{f"evidence_{k}": v for k, v in sorted(by_type.items())},
                **{f"{name}_{k}": v for name, r in stages.reports.items() for k, v in r.counts.items()},
            },
            validation=validation,
            seconds=round(time.perf_counter() - started, 3),
        )
        final = store.publish(building, manifest)
    except BaseException:
        store.abandon(building)
        raise
    store.prune(index_settings.keep_versions)
    return BuildResult(final, manifest, built=True)


def graph_stage(ingest_dir: Path, building: Path, lexicon: Lexicon) -> StageReport:
    work = building / ".work-graph"
    (building / layout.GRAPH).mkdir()
    stats = build_graph(
        ingest_dir,
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


def embedder_settings(settings: HqaSettings) -> EmbedderSettings:
    return EmbedderSettings(
        batch_size=settings.index.embedding_batch_size, max_seq_length=settings.index.max_seq_length
    )


def vector_stage(evidence: pa.Table, building: Path, settings: HqaSettings) -> StageReport:
    index_settings = settings.index
    embedder = Embedder(embedder_settings(settings))
    cache = EmbeddingCache(settings.embedding_cache_dir, embedder.cache_key)
    started = time.perf_counter()
    vectors, embed_stats = embed_evidence(evidence, embedder, cache)
    embed_seconds = time.perf_counter() - started
    stats = build_vector_index(
        vectors,
        building / layout.VECTORS,
        VectorIndexSettings(
            ann_min_rows=index_settings.ann_min_rows,
            nprobes=index_settings.ann_nprobes,
            refine_factor=index_settings.ann_refine_factor,
        ),
    )
    return StageReport(
        name="vectors",
        fingerprint="",
        seconds=round(time.perf_counter() - started, 3),
        counts={"vectors": vectors.num_rows, "embedded": embed_stats.computed, "reused": embed_stats.reused},
        rate=embed_stats.computed / embed_seconds if embed_stats.computed else None,
        rate_unit="embeddings/s",
        details={
            "model": {"name": embedder.model_name, "max_seq_length": embedder.max_seq_length},
            "ann": stats.model_dump(mode="json"),
        },
    )


def validate(building: Path, evidence: pa.Table, embedder_settings: EmbedderSettings) -> dict[str, str]:
    """Counts agree across the indexes and each index answers one smoke query: 'ok' or what failed."""
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
        hits = index.search(Embedder(embedder_settings).encode([first["text"]])[0], 5)
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

    for name, fn in (("bm25", bm25), ("aliases", aliases), ("vectors", vectors), ("graph", graph)):
        check(name, fn)
    return results
