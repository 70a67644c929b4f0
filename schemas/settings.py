"""hqa's one settings object: defaults < config file (TOML/YAML) < environment (HQA_…) < CLI flags.

Airflow tasks and the CLI both build it once and pass plain values down; library code never
reads the environment itself.
"""

from __future__ import annotations

import tomllib
from pathlib import Path
from typing import Any

import yaml
from pydantic import Field
from pydantic_settings import BaseSettings, SettingsConfigDict

REPO_ROOT = Path(__file__).resolve().parents[1]


class HqaSettings(BaseSettings):
    model_config = SettingsConfigDict(env_prefix="HQA_", extra="forbid")

    data_dir: Path = Field(REPO_ROOT / "data", description="bundled samples and tables")
    state_dir: Path = Field(REPO_ROOT / ".state", description="generated output: ingest, indexes, Airflow")
    language: str = "en"
    workers: int = Field(0, description="parser processes; 0 = one per core")
    max_error_rate: float = Field(0.01, description="share of quarantined records that fails a run")

    @property
    def ingest_dir(self) -> Path:
        return self.state_dir / "ingest"

    @property
    def property_table(self) -> Path:
        return self.data_dir / "wikidata-properties.tsv.gz"

    @property
    def samples_dir(self) -> Path:
        return self.data_dir / "samples"

    @classmethod
    def load(cls, config_file: Path | None = None, **overrides: Any) -> HqaSettings:
        """Settings from an optional config file, then the environment, then ``overrides`` (CLI flags)."""
        values: dict[str, Any] = {}
        if config_file is not None:
            text = Path(config_file).read_text()
            values = (
                tomllib.loads(text) if Path(config_file).suffix == ".toml" else (yaml.safe_load(text) or {})
            )
        env_values = cls().model_dump(exclude_unset=True)
        values.update(env_values)
        values.update({k: v for k, v in overrides.items() if v is not None})
        return cls(**values)
