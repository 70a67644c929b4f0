"""A weighted sum over named features, saved as JSON: what stage one and the answer scorer both are.

Weights are kept by name, so a file stays readable and a feature added later weighs 0 in an older file;
a name the model does not know is refused rather than ignored.
"""

from __future__ import annotations

import json
from pathlib import Path
from typing import ClassVar, Self

import numpy as np
from pydantic import BaseModel, Field


class LinearModel(BaseModel):
    FEATURES: ClassVar[tuple[str, ...]] = ()
    KIND: ClassVar[str] = "model"

    weights: dict[str, float]
    bias: float = 0.0
    trained_on: str | None = Field(None, description="what the weights were fitted on; None = hand-set")

    def vector(self) -> np.ndarray:
        unknown = set(self.weights) - set(self.FEATURES)
        if unknown:
            raise ValueError(f"unknown {self.KIND} features {sorted(unknown)}; known: {self.FEATURES}")
        return np.array([self.weights.get(f, 0.0) for f in self.FEATURES], dtype=np.float64)

    def score(self, matrix: np.ndarray) -> np.ndarray:
        return matrix @ self.vector() + self.bias

    @classmethod
    def load(cls, path: Path) -> Self:
        return cls.model_validate_json(Path(path).read_text())

    def save(self, path: Path) -> None:
        Path(path).write_text(json.dumps(self.model_dump(), indent=2) + "\n")
