"""Statistics questions over the values a guarded SELECT returned: SciPy's tests, with their p-values.

A question asks "is the population of the German cities normally distributed?", "is there a
correlation between the population and the area of the countries?", "do the cities and the mountains
differ in the variance of their elevation?". The SQL (``query.sql.guard``) selects the values — so the
user sees exactly which rows went in — and one of three tests reads them:

- Shapiro-Wilk for normality: the most powerful of the common tests at the small n a set question has;
- Pearson's r with its two-sided p-value for a correlation (r is what "what is the correlation" asks);
- Levene's test centred on the median (Brown-Forsythe) for a difference in variance: unlike Bartlett's
  it does not assume the samples are normal, and set sizes and values here are rarely normal.

Fewer than ``min_values`` values in a sample is refused (``TooFewValues``), never answered: with three
values a normality test's p-value is noise that a user would read as a finding. A sample whose values
are all equal is refused too (every test divides by its spread).
"""

from __future__ import annotations

import math
from collections.abc import Sequence

from scipy import stats

from schemas.query import StatisticalTest


class TooFewValues(ValueError):
    """A test asked of samples too small (or too constant) to say anything."""


def _check(samples: Sequence[Sequence[float]], min_values: int) -> None:
    for sample in samples:
        if len(sample) < min_values:
            raise TooFewValues(f"a test needs at least {min_values} values per sample; one has {len(sample)}")
        if len(set(sample)) < 2:
            raise TooFewValues(f"all {len(sample)} values of a sample are equal: nothing to test")


def _finite(value: float) -> float:
    if not math.isfinite(value):
        raise TooFewValues(f"the test returned {value}: the values cannot be tested")
    return float(value)


def normality(values: Sequence[float], alpha: float, min_values: int) -> StatisticalTest:
    _check([values], min_values)
    result = stats.shapiro(values)
    p = _finite(result.pvalue)
    verdict = (
        f"p < {alpha}: not normally distributed" if p < alpha else f"p ≥ {alpha}: normality not rejected"
    )
    return StatisticalTest(
        name="Shapiro-Wilk", statistic=_finite(result.statistic), p_value=p, n=[len(values)],
        alpha=alpha, verdict=verdict,
    )  # fmt: skip


def correlation(xs: Sequence[float], ys: Sequence[float], alpha: float, min_values: int) -> StatisticalTest:
    if len(xs) != len(ys):
        raise ValueError("a correlation needs pairs")
    _check([xs, ys], min_values)
    result = stats.pearsonr(xs, ys)
    p = _finite(result.pvalue)
    verdict = (
        f"p < {alpha}: a significant correlation" if p < alpha else f"p ≥ {alpha}: no significant correlation"
    )
    return StatisticalTest(
        name="Pearson correlation", statistic=_finite(result.statistic), p_value=p, n=[len(xs)],
        alpha=alpha, verdict=verdict,
    )  # fmt: skip


def variance_test(
    first: Sequence[float], second: Sequence[float], alpha: float, min_values: int
) -> StatisticalTest:
    _check([first, second], min_values)
    result = stats.levene(first, second, center="median")
    p = _finite(result.pvalue)
    verdict = f"p < {alpha}: the variances differ" if p < alpha else f"p ≥ {alpha}: no significant difference"
    return StatisticalTest(
        name="Levene (median)", statistic=_finite(result.statistic), p_value=p,
        n=[len(first), len(second)], alpha=alpha, verdict=verdict,
    )  # fmt: skip


__all__ = ["TooFewValues", "correlation", "normality", "variance_test"]
