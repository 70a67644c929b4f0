"""What one retrieval pass keeps of a question (``Trace``), and the cache file that keeps a whole run.

Every ablation of the harness is a re-ordering of what the pass kept, so a run's traces can be saved
and the configurations re-derived later (``hqa eval --traces``) without retrieving again.
"""

from __future__ import annotations

import pickle
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from ingest.files import atomic_path
from query.evaluation.loaders import BenchmarkQuestion
from query.pipeline import StagedRun


@dataclass
class Trace:
    """What the retrieval pass keeps of one question (the rows themselves are fetched again on demand)."""

    question: BenchmarkQuestion
    staged: StagedRun | None
    baseline: list[str] = field(default_factory=list)
    present: dict[str, bool] = field(default_factory=dict)
    tables: dict[str, str | None] = field(default_factory=dict)
    sources: dict[str, str] = field(default_factory=dict)
    labels: np.ndarray = field(default_factory=lambda: np.zeros(0, dtype=bool))
    rankings: dict[str, list[str]] = field(default_factory=dict)
    stage_one_scores: dict[str, dict[str, float]] = field(default_factory=dict)
    """Per stage-one ranking, its head's scores: what stage two mixes with."""
    timings: dict[str, float] = field(default_factory=dict)
    error: str | None = None
    fold: int | None = None


def save_traces(path: Path, main: list[Trace], extra: dict[str, list[Trace]]) -> None:
    """Keep a run's passes so the configurations can be re-derived without retrieving again."""
    path.parent.mkdir(parents=True, exist_ok=True)
    with atomic_path(path) as tmp, tmp.open("wb") as f:
        pickle.dump({"main": main, "extra": extra}, f, protocol=pickle.HIGHEST_PROTOCOL)


def load_traces(path: Path) -> tuple[list[Trace], dict[str, list[Trace]]]:
    """A run's passes as ``save_traces`` wrote them."""
    with path.open("rb") as f:
        data = pickle.load(f)  # our own cache file, written by save_traces
    return data["main"], data["extra"]
