"""The graph-critic LLM benchmark's one fitted number: the validator's floor on the reader's confidence."""

from __future__ import annotations

import pytest

from tests.conftest import REPO, load_script

SCRIPT = REPO / "benchmarks" / "graph_critic_llm.py"


def _reading(confidence: float | None, right: bool) -> dict:
    return {"answered": confidence is not None, "confidence": confidence, "em": 1.0 if right else 0.0}


def test_the_floor_is_the_one_with_the_best_balanced_accuracy_on_the_tuning_readings() -> None:
    fit_floor = load_script(SCRIPT).fit_floor
    # right answers at 0.9 and 0.95; wrong ones at 0.5, 0.7, 0.92 and one unknown. Floors in (0.7, 0.9]
    # accept both right answers and reject 3 of 4 wrong ones: (1 + 3/4) / 2 = 0.875, the best there is;
    # the lowest such floor on the 0.05 grid is 0.75.
    readings = [_reading(0.9, True), _reading(0.95, True)]
    readings += [_reading(0.5, False), _reading(0.7, False), _reading(0.92, False), _reading(None, False)]
    assert fit_floor(readings) == (0.75, 0.875)


def test_a_tuning_fold_without_right_or_wrong_answers_is_refused() -> None:
    fit_floor = load_script(SCRIPT).fit_floor
    with pytest.raises(SystemExit, match="right and wrong"):
        fit_floor([_reading(0.9, True)])
