"""hqa's one settings object: defaults < config file (TOML/YAML) < environment (HQA_…) < CLI flags.

Airflow tasks and the CLI both build it once and pass plain values down; library code never
reads the environment itself.
"""

from __future__ import annotations

import os
import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field, ValidationInfo, field_validator
from pydantic_settings import BaseSettings, SettingsConfigDict

from schemas.evidence import SOURCE_TYPES, SourceType

REPO_ROOT = Path(__file__).resolve().parents[1]
DEFAULT_DATA_DIR = REPO_ROOT / "data"
DEFAULT_STATE_DIR = REPO_ROOT / ".state"
PROPERTY_TABLE = "wikidata-properties.tsv.gz"
ENGINE_TABLE = "engine"
"""The table of a settings file that holds the query engine's config (``query.config.EngineConfig``)."""


def bundled_property_table() -> Path:
    """The Wikidata property labels that ship with hqa (``data/``)."""
    return DEFAULT_DATA_DIR / PROPERTY_TABLE


def read_config_file(path: Path, what: str = "settings") -> dict[str, Any]:
    """The tables of a TOML or YAML settings file (an empty YAML file: none). A file that is not a readable
    config raises a ``ValueError`` naming it: a parser's own exception would not say which file to fix."""
    path = Path(path)
    kind = "TOML" if path.suffix == ".toml" else "YAML"
    try:
        text = path.read_text(encoding="utf-8")
        values = tomllib.loads(text) if kind == "TOML" else yaml.safe_load(text)
    except (OSError, UnicodeDecodeError, tomllib.TOMLDecodeError, yaml.YAMLError, RecursionError) as exc:
        raise ValueError(f"{path} is not a readable {kind} file: {type(exc).__name__}: {exc}") from exc
    if values is None:
        return {}
    if not isinstance(values, dict):
        raise ValueError(f"{path} must hold a table of {what}, not a {type(values).__name__}")
    return values


# Defaults the index settings share with the components they configure (index.embedder, index.vectors):
# written once, here, where the lowest layer can see them.
# The build's default embedder is static (wordllama): on the OTT-QA questions it retrieves as well as
# MiniLM once fused with BM25, the KG walk and the hop, at ~1/60 of the cost
# (benchmarks/results/embedders.md), which is what makes embedding a full dump affordable on CPUs.
# all-MiniLM-L6-v2 stays one setting away (HQA_INDEX__EMBEDDING_MODEL); the reranker's MaxSim uses it anyway.
EMBEDDING_MODEL = "wordllama-l2-256"
Precision = Literal["auto", "float32", "bfloat16"]
EMBEDDING_PRECISION: Precision = "auto"
ANN_MIN_ROWS = 50_000
ANN_NPROBES = 20
ANN_REFINE_FACTOR = 30


class VerbalizeSettings(BaseModel):
    """What the verbalizer writes (part of every evidence file's fingerprint: nothing else may go here)."""

    max_words: int = Field(100, ge=10, description="words per passage window, before its context prefix")
    entity_summaries: bool = Field(True, description="evidence for each entity's description and aliases")


class IndexSettings(VerbalizeSettings):
    """How ``hqa build`` verbalizes, embeds and indexes (HQA_INDEX__MAX_WORDS=…, or an [index] table).

    The verbalizer's fields (``max_words``, ``entity_summaries``) come from ``VerbalizeSettings``."""

    memory_mb: int = Field(
        1024,
        ge=128,
        description="memory one build stage (one task) may use for its own data: DuckDB's memory_limit is "
        "half of it (it spills to the build folder past that), batch sizes, Kùzu's buffer pool and Tantivy's "
        "writer heap are cut to it. Libraries add their own (the embedding model ~0.3-0.6 GB)",
    )
    embedding_model: str = Field(
        EMBEDDING_MODEL,
        description="sentence embedder (index.embedder.MODELS): static wordllama-l2-256 (default), the "
        "transformer all-MiniLM-L6-v2 (~60x the cost), minilm-l6-m2v-256 (made once: hqa models --distill)",
    )
    embedding_batch_size: int = Field(8, ge=1, description="texts per encoder batch (8: fastest on 2 cores)")
    embedding_workers: int = Field(2, ge=1, description="encoder copies in parallel, one torch thread each")
    max_seq_length: int | None = Field(None, description="encoder token cap; None = the model's own (256)")
    embedding_precision: Precision = Field(
        EMBEDDING_PRECISION,
        description="number format the build embeds in; 'auto' = bfloat16 where the CPU multiplies it "
        "natively (1.7x float32 on this machine, 99 % of top-10 neighbours kept), else float32",
    )
    embedding_device: Literal["cpu", "cuda"] = Field(
        "cpu", description="where the build's transformer encodes run; 'cuda' fails at once without a GPU"
    )
    embed_sources: list[SourceType] = Field(
        [s for s in SOURCE_TYPES if s != "kg"],
        min_length=1,
        description="evidence source types the vector stage embeds; rows of the others get no vector (cosine "
        "0 for the dense retriever and feature) and are still served by BM25, the KG walk and the graph. KG "
        "statements are left out by default: embedding them changed no answer on the KG question set and "
        "none on the OTT-QA sample (benchmarks/results/embedders.md), at 56 % of the sample's rows",
    )
    ann_min_rows: int = Field(ANN_MIN_ROWS, ge=1, description="build an ANN index from this many vectors on")
    ann_nprobes: int = Field(ANN_NPROBES, ge=1)
    ann_refine_factor: int | None = Field(
        ANN_REFINE_FACTOR, description="re-rank this many times k candidates exactly"
    )
    keep_versions: int = Field(3, ge=1, description="published index versions kept on disk")

    @field_validator("embed_sources")
    @classmethod
    def _sources_once_in_order(cls, value: list[SourceType]) -> list[SourceType]:
        """One order for one set, so the same sources give the same vector-stage fingerprint."""
        return [s for s in SOURCE_TYPES if s in value]

    def verbalize_settings(self) -> VerbalizeSettings:
        return VerbalizeSettings.model_validate(self.model_dump(include=set(VerbalizeSettings.model_fields)))

    def vector_settings_dump(self) -> dict:
        """The settings that change what the vector stage writes (its fingerprint)."""
        return self.model_dump(
            include={
                "embedding_model",
                "max_seq_length",
                "embed_sources",
                "ann_min_rows",
                "ann_nprobes",
                "ann_refine_factor",
            }
        )


class AirflowSettings(BaseModel):
    """How the Airflow DAGs schedule and retry (HQA_AIRFLOW__SCHEDULE=…, or an [airflow] table)."""

    schedule: str | None = Field("@weekly", description="cron or preset of the index rebuild; None = manual")
    retries: int = Field(3, ge=0)
    retry_delay_seconds: int = Field(60, ge=1, description="first retry delay; doubles on each retry")
    max_retry_delay_seconds: int = Field(3600, ge=1)
    ingest_parallelism: int = Field(4, ge=1, description="shards of one run ingested at the same time")
    worker_concurrency: int = Field(
        1,
        ge=1,
        description="tasks one worker machine runs at once (set it as AIRFLOW__CELERY__WORKER_CONCURRENCY): "
        "an ingest task sized by HQA_WORKERS=0 takes its share of the cores, not all of them",
    )
    qa_chunk_size: int = Field(100, ge=1, description="questions per mapped batch-QA task")
    qa_questions: Path | None = Field(None, description="questions the QA DAG answers; None = the samples")

    def task_defaults(self) -> dict[str, Any]:
        """Every hqa DAG's ``default_args``: retries with exponential back-off."""
        return {
            "retries": self.retries,
            "retry_delay": timedelta(seconds=self.retry_delay_seconds),
            "retry_exponential_backoff": True,
            "max_retry_delay": timedelta(seconds=self.max_retry_delay_seconds),
        }


class RemoteSettings(BaseModel):
    """Object storage for published index versions, dumps and a rebuild's shared state (HQA_REMOTE__URL=…,
    HQA_REMOTE__STATE_URL=…, or a [remote] table).

    Credentials are never settings: the S3 client reads the standard AWS variables (AWS_ACCESS_KEY_ID,
    AWS_SECRET_ACCESS_KEY, AWS_SESSION_TOKEN) or ~/.aws, so they stay out of config files, flags and the
    manifests that record the settings. ``endpoint`` and ``region`` also apply to ``s3://`` dump sources.
    """

    url: str | None = Field(
        None,
        description="root of the published versions, s3://bucket/prefix or file:///abs/path; None = "
        "no remote (builds publish locally only)",
    )
    state_url: str | None = Field(
        None,
        description="where a rebuild's workers exchange their state (ingest output, plans' files, evidence, "
        "embedding-cache parts), s3://bucket/prefix or file:///abs/path; None = every worker mounts one "
        "shared HQA_STATE_DIR. When set, each worker's HQA_STATE_DIR is local scratch (index.state_exchange)",
    )
    endpoint: str | None = Field(
        None,
        description="S3-compatible server, e.g. http://127.0.0.1:9000 (MinIO, moto); None = AWS itself",
    )
    region: str = Field("us-east-1", description="S3 region of the bucket")
    chunk_mb: int = Field(
        8, ge=1, le=512, description="bytes moved per read or write while streaming a file (memory per file)"
    )
    checkpoint_every: int = Field(
        100,
        ge=0,
        description="a rebuild step that read at least this many change records past the newest checkpoint "
        "of the shared state folds them into a new one, so later steps read no further back; 0 = never",
    )
    checkpoint_settle_seconds: float = Field(
        120.0,
        ge=0,
        description="only change records named this long before a step read the log are folded into a "
        "checkpoint: keep it above the workers' largest clock difference plus the slowest record upload",
    )
    gc_grace_hours: float = Field(
        24.0,
        ge=0,
        description="garbage collection (`hqa index gc`, the rebuild's last task) deletes an unreferenced "
        "blob or published version only when its objects are older than this: a step uploads its blobs "
        "before the record that names them, so keep it above the slowest step's push plus the clock "
        "difference between the object store and the collecting host. A day is far above both and well "
        "below the weekly schedule: what a rebuild leaves behind is gone by the next one's collection",
    )

    @field_validator("url", "state_url")
    @classmethod
    def _url(cls, value: str | None, info: ValidationInfo) -> str | None:
        if value is not None and not value.startswith(("s3://", "file:///")):
            raise ValueError(
                f"remote {info.field_name} must be s3://bucket/prefix or file:///abs/path, got {value!r}"
            )
        return value.rstrip("/") if value else value

    @field_validator("endpoint")
    @classmethod
    def _endpoint(cls, value: str | None) -> str | None:
        if value is not None and not value.startswith(("http://", "https://")):
            raise ValueError(f"remote endpoint must start with http:// or https://, got {value!r}")
        return value


class HqaSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HQA_", env_nested_delimiter="__", extra="forbid")

    data_dir: Path = Field(DEFAULT_DATA_DIR, description="bundled samples and tables")
    state_dir: Path = Field(DEFAULT_STATE_DIR, description="generated output: ingest, indexes, Airflow")
    language: str = "en"
    workers: int = Field(
        0,
        ge=0,
        description="parser processes of one ingest task; 0 = the cores this process may run on (its CPU "
        "affinity) shared out over airflow.worker_concurrency tasks",
    )
    max_error_rate: float = Field(0.01, description="share of quarantined records that fails a run")
    answer_max_failure_rate: float | None = Field(
        0.1,
        ge=0,
        le=1,
        description="share of batch questions whose answering raised that fails the run "
        "(after every answer is written); None = never",
    )
    embedding_cache: Path | None = Field(
        None, description="embedding cache folder (default <state_dir>/embeddings); may be shared"
    )
    engine_config: Path | None = Field(
        None, description="query-engine config file (TOML/YAML) batch jobs use; None = the defaults"
    )
    index: IndexSettings = Field(default_factory=IndexSettings)
    airflow: AirflowSettings = Field(default_factory=AirflowSettings)
    remote: RemoteSettings = Field(default_factory=RemoteSettings)

    @property
    def parser_workers(self) -> int:
        """The parser processes an ingest task starts: ``workers``, or its slot's share of the cores."""
        return self.workers or slot_cores(self.airflow.worker_concurrency)

    @property
    def ingest_dir(self) -> Path:
        return self.state_dir / "ingest"

    @property
    def index_dir(self) -> Path:
        """Root of the index versions; ``current`` inside it points at the published one."""
        return self.state_dir / "indexes"

    @property
    def embedding_cache_dir(self) -> Path:
        """Embeddings by evidence id, kept across builds (and across index versions)."""
        return self.embedding_cache or self.state_dir / "embeddings"

    @property
    def reports_dir(self) -> Path:
        """Run reports of index rebuilds (JSON + Markdown), newest also as ``rebuild-latest``."""
        return self.state_dir / "reports"

    @property
    def answers_dir(self) -> Path:
        return self.state_dir / "answers"

    @property
    def unit_table(self) -> Path:
        return self.data_dir / "wikidata-units.tsv"

    @property
    def property_table(self) -> Path:
        return self.data_dir / PROPERTY_TABLE

    @property
    def samples_dir(self) -> Path:
        return self.data_dir / "samples"

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> HqaSettings:
        """Settings from an optional config file, then the environment, then ``overrides`` (CLI flags).

        The file's ``engine`` table, if it has one, is the query engine's (``EngineConfig.load`` reads it),
        so one file can carry both."""
        file_values: dict[str, Any] = {}
        if config_file is not None:
            file_values = read_config_file(config_file)
            file_values.pop(ENGINE_TABLE, None)
        env_values = cls().model_dump(exclude_unset=True)
        flags = {k: v for k, v in overrides.items() if v is not None}  # None = the flag was not given
        return cls(**deep_merge(deep_merge(file_values, env_values), flags))


def slot_cores(tasks_per_machine: int = 1) -> int:
    """Cores one of ``tasks_per_machine`` tasks may use: the CPU affinity of this process (a container's or
    a ``taskset``'s share, which ``os.cpu_count()`` ignores) divided between the tasks, at least one."""
    available = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count() or 1
    return max(1, available // max(1, tasks_per_machine))


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` laid over it, tables merged key by key: ``HQA_INDEX__KEEP_VERSIONS`` keeps
    the config file's other ``[index]`` keys. A non-table value of ``top`` replaces what ``base`` had."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        out[key] = deep_merge(below, value) if isinstance(value, dict) and isinstance(below, dict) else value
    return out
