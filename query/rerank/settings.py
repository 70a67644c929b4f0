"""How the pipeline re-ranks (``[rerank]`` in an engine config)."""

from __future__ import annotations

from pathlib import Path
from typing import Any

from pydantic import BaseModel, ConfigDict, Field, model_validator

from query.rerank.models import BUNDLED_RANKER
from query.rerank.pair_scorers import PairScorerSettings


class RerankSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    stage1: bool = Field(True, description="feature ranker over the pool; off = fused order")
    stage1_keep: int = Field(100, ge=1, description="head of the fused pool stage one re-orders and keeps")
    ranker: Path | None = Field(
        BUNDLED_RANKER,
        description="stage-one weights (JSON); the bundled ones were fitted on OTT-QA dev; None = hand-set",
    )
    stage2: PairScorerSettings | None = Field(
        None,
        description="pair scorer of stage two: a table with its 'name' ('late-interaction', 'cross-encoder') "
        "and its settings, or just the name; None = off: on OTT-QA dev late interaction lowered answer "
        "presence at 30 at every mixing weight (see the README)",
    )
    stage2_keep: int = Field(30, ge=1)
    stage2_weight: float = Field(0.5, ge=0.0, le=1.0, description="pair score's share of the final score")

    @model_validator(mode="before")
    @classmethod
    def _scorer_by_name(cls, values: Any) -> Any:
        """``stage2 = "late-interaction"`` is that scorer with its default settings."""
        if isinstance(values, dict) and isinstance(values.get("stage2"), str):
            return {**values, "stage2": {"name": values["stage2"]}}
        return values
