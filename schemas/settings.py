"""hqa's one settings object: defaults < config file (TOML/YAML) < environment (HQA_…) < CLI flags.

Airflow tasks and the CLI both build it once and pass plain values down; library code never
reads the environment itself.
"""

from __future__ import annotations

import tomllib
from datetime import timedelta
from pathlib import Path
from typing import Any, Literal

import yaml
from pydantic import BaseModel, Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]

# Defaults the index settings share with the components they configure (index.embedder, index.vectors):
# written once, here, where the lowest layer can see them.
EMBEDDING_MODEL = "all-MiniLM-L6-v2"
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
        EMBEDDING_MODEL, description="sentence embedder (index.embedder.MODELS); wordllama-l2-256 is fast"
    )
    embedding_batch_size: int = Field(8, ge=1, description="texts per encoder batch (8: fastest on 2 cores)")
    embedding_workers: int = Field(2, ge=1, description="encoder copies in parallel, one torch thread each")
    max_seq_length: int | None = Field(None, description="encoder token cap; None = the model's own (256)")
    embedding_precision: Precision = Field(
        EMBEDDING_PRECISION,
        description="number format the build embeds in; 'auto' = bfloat16 where the CPU multiplies it "
        "natively (1.7x float32 on this machine, 99 % of top-10 neighbours kept), else float32",
    )
    ann_min_rows: int = Field(ANN_MIN_ROWS, ge=1, description="build an ANN index from this many vectors on")
    ann_nprobes: int = Field(ANN_NPROBES, ge=1)
    ann_refine_factor: int | None = Field(
        ANN_REFINE_FACTOR, description="re-rank this many times k candidates exactly"
    )
    keep_versions: int = Field(3, ge=1, description="published index versions kept on disk")

    def verbalize_settings(self) -> VerbalizeSettings:
        return VerbalizeSettings.model_validate(self.model_dump(include=set(VerbalizeSettings.model_fields)))

    def vector_settings_dump(self) -> dict:
        """The settings that change what the vector stage writes (its fingerprint)."""
        return self.model_dump(
            include={"embedding_model", "max_seq_length", "ann_min_rows", "ann_nprobes", "ann_refine_factor"}
        )


class AirflowSettings(BaseModel):
    """How the Airflow DAGs schedule and retry (HQA_AIRFLOW__SCHEDULE=…, or an [airflow] table)."""

    schedule: str | None = Field("@weekly", description="cron or preset of the index rebuild; None = manual")
    retries: int = Field(3, ge=0)
    retry_delay_seconds: int = Field(60, ge=1, description="first retry delay; doubles on each retry")
    max_retry_delay_seconds: int = Field(3600, ge=1)
    ingest_parallelism: int = Field(4, ge=1, description="shards of one run ingested at the same time")
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


class HqaSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HQA_", env_nested_delimiter="__", extra="forbid")

    data_dir: Path = Field(REPO_ROOT / "data", description="bundled samples and tables")
    state_dir: Path = Field(REPO_ROOT / ".state", description="generated output: ingest, indexes, Airflow")
    language: str = "en"
    workers: int = Field(0, description="parser processes; 0 = one per core")
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
        return self.data_dir / "wikidata-properties.tsv.gz"

    @property
    def samples_dir(self) -> Path:
        return self.data_dir / "samples"

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> HqaSettings:
        """Settings from an optional config file, then the environment, then ``overrides`` (CLI flags)."""
        file_values: dict[str, Any] = {}
        if config_file is not None:
            text = Path(config_file).read_text()
            file_values = (
                tomllib.loads(text) if Path(config_file).suffix == ".toml" else (yaml.safe_load(text) or {})
            )
        env_values = cls().model_dump(exclude_unset=True)
        flags = {k: v for k, v in overrides.items() if v is not None}  # None = the flag was not given
        return cls(**deep_merge(deep_merge(file_values, env_values), flags))


def deep_merge(base: dict[str, Any], top: dict[str, Any]) -> dict[str, Any]:
    """``base`` with ``top`` laid over it, tables merged key by key: ``HQA_INDEX__KEEP_VERSIONS`` keeps
    the config file's other ``[index]`` keys. A non-table value of ``top`` replaces what ``base`` had."""
    out = dict(base)
    for key, value in top.items():
        below = out.get(key)
        out[key] = deep_merge(below, value) if isinstance(value, dict) and isinstance(below, dict) else value
    return out
