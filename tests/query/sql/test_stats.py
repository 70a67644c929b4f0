"""The statistics tests' refusals and verdicts, against SciPy and hand-made samples."""

from __future__ import annotations

import pytest

from query.sql import stats


def test_small_or_constant_samples_are_refused():
    with pytest.raises(stats.TooFewValues, match="at least 5"):
        stats.normality([1.0, 2.0, 3.0, 4.0], 0.05, 5)
    with pytest.raises(stats.TooFewValues, match="equal"):
        stats.variance_test([1.0] * 6, [1.0, 2.0, 3.0, 4.0, 5.0], 0.05, 5)
    with pytest.raises(stats.TooFewValues):
        stats.correlation([1.0, 2.0, 3.0, 4.0, 5.0], [2.0] * 5, 0.05, 5)


def test_a_perfect_line_correlates_and_a_step_is_not_normal():
    xs = [float(i) for i in range(10)]
    test = stats.correlation(xs, [3 * x + 1 for x in xs], 0.05, 5)
    assert test.statistic == pytest.approx(1.0) and test.p_value < 1e-6 and "significant" in test.verdict
    skewed = [1.0] * 12 + [100.0, 1000.0, 10000.0]
    assert stats.normality(skewed, 0.05, 5).p_value < 0.05
