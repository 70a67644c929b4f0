"""Plan one index build: what each stage's output depends on, and whether anything changed at all.

The plan is plain data (JSON-able), made once per build and handed to every step, so the CLI can
run the steps in one process and the Airflow rebuild can run them as separate tasks on separate
workers. Fingerprints hash the exact bytes of a stage's inputs plus its settings and a format
number: equal fingerprint, equal output, so the previous version's output can be reused.

Evidence is fingerprinted per ingest file: a file's evidence depends on that file, on the
``Lexicon`` (entity labels, page titles, property labels, units: read from the whole ingest) and
on the verbalizer settings. A changed shard re-verbalizes its own files; a changed label
re-verbalizes everything, because any file may name that entity. The typed statements depend on
the statement files and the same lexicon.
"""

from __future__ import annotations

import logging
import shutil
import time
from collections.abc import Callable
from pathlib import Path

from pydantic import BaseModel, Field

from index import layout
from index.duck import MemoryBudget, connect
from index.evidence import ingest_files
from index.fingerprints import combine, hash_files
from index.integrity import damaged_files
from index.lexicon import table_files
from index.names import NameStats, build_names
from index.versions import BUILDING_PREFIX, VersionStore
from schemas.build import Manifest
from schemas.settings import IndexSettings

log = logging.getLogger(__name__)

# Bump a stage's number when its code changes what it writes: old outputs are then not reused.
STAGE_FORMATS = {
    "evidence": 1,
    "entities": 1,
    "bm25": 1,
    "vectors": 1,
    "graph": 6,  # 5: INT64 node keys; 6: MENTIONED_IN, HAS_EVIDENCE one way (index.graph.SCHEMA)
    "statements": 1,
    "tables": 1,
}
KG_TABLES = ("entities", "statements", "properties")
PAGE_TABLES = ("pages", "passages", "table_rows", "infobox_fields", "links")
LEXICON_TABLES = ("entities", "properties", "pages")  # what the name tables are built from


class VerbalizeJob(BaseModel):
    """One ingest file to verbalize into one evidence file."""

    table: str
    path: str
    output: str = Field(description="evidence file name inside the version's evidence folder")
    key: str = Field(description="fingerprint of this file's evidence")


class BuildPlan(BaseModel):
    version: str
    index_dir: str
    ingest_dir: str
    building: str | None = Field(description="folder the build writes into; None when up to date")
    previous: str | None = Field(description="published version whose unchanged outputs are reused")
    unit_table: str = Field(description="the bundled unit labels the verbalizer names units with")
    memory_mb: int = Field(description="memory each step of this build may use (index.memory_mb)")
    fingerprints: dict[str, str]
    verbalize: list[VerbalizeJob]
    started: float = Field(description="epoch seconds, for the manifest's total time")
    removed_runs: list[str] = Field(default_factory=list, description="ingest runs dropped: no longer inputs")
    run: str | None = Field(
        None, description="the rebuild run whose marker every step checks it sees (index.shared_state)"
    )

    @property
    def up_to_date(self) -> bool:
        return self.building is None

    @property
    def building_dir(self) -> Path:
        if self.building is None:
            raise RuntimeError(f"index {self.version} is up to date: this build has nothing to write")
        return Path(self.building)

    @property
    def work_dir(self) -> Path:
        """Scratch of this build (name tables, DuckDB spill, stage files): removed before publishing."""
        return self.building_dir / layout.WORK

    @property
    def names_dir(self) -> Path:
        return self.work_dir / "names"

    def mapped_paths(self, convert: Callable[[str | None], str | None]) -> BuildPlan:
        """This plan with every path passed through ``convert`` (to or from the form a plan travels in
        between workers: ``index.shared_state.portable`` / ``local``)."""
        jobs = [j.model_copy(update={"path": convert(j.path)}) for j in self.verbalize]
        paths = {f: convert(getattr(self, f)) for f in ("index_dir", "ingest_dir", "building", "previous")}
        return self.model_copy(update={**paths, "unit_table": convert(self.unit_table), "verbalize": jobs})

    def previous_manifest(self) -> Manifest | None:
        return VersionStore(Path(self.index_dir)).manifest(Path(self.previous)) if self.previous else None


def _file_hashes(ingest_dir: Path, tables: tuple[str, ...]) -> dict[str, str]:
    files = table_files(ingest_dir, tables)
    return {str(p.relative_to(ingest_dir)): hash_files([p], ingest_dir) for p in files}


def stage_fingerprints(
    index: IndexSettings, ingest_dir: Path, unit_table: Path
) -> tuple[dict[str, str], list[VerbalizeJob]]:
    """Each stage's fingerprint, and the verbalize jobs with their per-file fingerprints."""
    hashes = _file_hashes(ingest_dir, KG_TABLES + PAGE_TABLES)
    units_fp = hash_files([unit_table], unit_table.parent)
    ingest_fp = combine(sorted(hashes.items()))
    lexicon_fp = combine(
        units_fp, sorted((k, v) for k, v in hashes.items() if k.split("/", 1)[0] in LEXICON_TABLES)
    )
    verbalize = index.verbalize_settings().model_dump()
    jobs = []
    for table, path in ingest_files(ingest_dir):
        relative = str(path.relative_to(ingest_dir))
        key = combine(STAGE_FORMATS["evidence"], relative, hashes[relative], lexicon_fp, verbalize)
        jobs.append(VerbalizeJob(table=table, path=str(path), output=f"{table}.{path.name}", key=key))
    fingerprints = {
        "evidence": combine(STAGE_FORMATS["evidence"], sorted(j.key for j in jobs)),
        "entities": combine(STAGE_FORMATS["entities"], ingest_fp),
    }
    fingerprints["bm25"] = combine(STAGE_FORMATS["bm25"], fingerprints["evidence"])
    fingerprints["vectors"] = combine(
        STAGE_FORMATS["vectors"], fingerprints["evidence"], index.vector_settings_dump()
    )
    fingerprints["graph"] = combine(STAGE_FORMATS["graph"], fingerprints["evidence"], ingest_fp)
    # Typed statements read the statement files and the lexicon's labels; their evidence ids come from
    # the verbalizer's code, so its format number counts too.
    statement_files = sorted((k, v) for k, v in hashes.items() if k.split("/", 1)[0] == "statements")
    fingerprints["statements"] = combine(
        STAGE_FORMATS["statements"], STAGE_FORMATS["evidence"], statement_files, lexicon_fp
    )
    table_files_fp = sorted((k, v) for k, v in hashes.items() if k.split("/", 1)[0] == "table_rows")
    # rows carry the ids of their evidence: the keys of the table-row evidence files count too
    table_evidence = sorted(j.key for j in jobs if j.table == "table_rows")
    fingerprints["tables"] = combine(STAGE_FORMATS["tables"], table_files_fp, table_evidence)
    return fingerprints, jobs


def plan_build(
    index: IndexSettings,
    *,
    index_dir: Path,
    ingest_dir: Path,
    unit_table: Path,
    force: bool = False,
    version: str | None = None,
) -> BuildPlan:
    """Fingerprint the ingest output; start a build folder unless the current version is up to date.

    ``version`` names the new version (a scheduler passes one derived from its run, so a retried
    plan reuses the same folder); by default it is made from the clock. A started build gets its
    name tables (``index.names``), which every later step that names entities reads.
    """
    started = time.time()
    ingest_dir = Path(ingest_dir)
    if not table_files(ingest_dir, ("pages", "entities")):
        raise FileNotFoundError(f"no ingest output under {ingest_dir}: run `hqa ingest` first")
    store = VersionStore(index_dir)
    previous = store.current()
    previous_manifest = store.manifest(previous) if previous is not None else None
    fingerprints, jobs = stage_fingerprints(index, ingest_dir, unit_table)
    plan = BuildPlan(
        version=version or store.new_version_name(),
        index_dir=str(store.root),
        ingest_dir=str(ingest_dir),
        building=None,
        previous=None if force or previous is None else str(previous),
        unit_table=str(unit_table),
        memory_mb=index.memory_mb,
        fingerprints=fingerprints,
        verbalize=jobs,
        started=started,
    )
    if (
        not force
        and previous_manifest is not None
        and all(
            name in previous_manifest.stages and previous_manifest.stages[name].fingerprint == fp
            for name, fp in fingerprints.items()
        )
    ):
        # every byte is hashed (seconds a GB): unchanged inputs are when a scheduled rebuild has time to
        # find damage that kept file sizes, and heal it
        kept = previous_manifest
        damage = damaged_files(Path(previous or ""), kept.files, None, kept.checksums)
        if not damage:
            return plan.model_copy(update={"version": previous_manifest.version, "verbalize": []})
        # inputs unchanged, but the current version lost files: a new version builds the damaged parts
        # again (the others are linked from it as usual)
        log.warning("index %s is damaged (%s): building a new version", previous, "; ".join(damage[:3]))
    if (store.root / plan.version).exists():  # a published version already has this name
        plan.version = store.new_version_name()
    building = store.root / f"{BUILDING_PREFIX}{plan.version}"
    shutil.rmtree(building, ignore_errors=True)  # a retried plan starts its folder over
    plan.building = str(store.start(plan.version))
    write_names(plan)
    return plan


def write_names(plan: BuildPlan) -> NameStats:
    """The build's name tables, from the ingest output, in a file-backed DuckDB held to the budget."""
    work = plan.work_dir
    database = work / "names.duckdb"
    con = connect(MemoryBudget(memory_mb=plan.memory_mb), work / "spill-names", database=database)
    try:
        return build_names(Path(plan.ingest_dir), plan.names_dir, con)
    finally:
        con.close()
        for leftover in (database, database.with_name(database.name + ".wal")):
            leftover.unlink(missing_ok=True)
        shutil.rmtree(work / "spill-names", ignore_errors=True)
