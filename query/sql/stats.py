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


def _result(name: str, result, n: list[int], alpha: float, below: str, above: str) -> StatisticalTest:
    """The test's outcome, its verdict read at ``alpha``: ``below`` when p < alpha, else ``above``."""
    p = _finite(result.pvalue)
    verdict = f"p < {alpha}: {below}" if p < alpha else f"p ≥ {alpha}: {above}"
    return StatisticalTest(
        name=name, statistic=_finite(result.statistic), p_value=p, n=n, alpha=alpha, verdict=verdict
    )


def normality(values: Sequence[float], alpha: float, min_values: int) -> StatisticalTest:
    _check([values], min_values)
    return _result(
        "Shapiro-Wilk", stats.shapiro(values), [len(values)], alpha,
        "not normally distributed", "normality not rejected",
    )  # fmt: skip


def correlation(xs: Sequence[float], ys: Sequence[float], alpha: float, min_values: int) -> StatisticalTest:
    if len(xs) != len(ys):
        raise ValueError("a correlation needs pairs")
    _check([xs, ys], min_values)
    return _result(
        "Pearson correlation", stats.pearsonr(xs, ys), [len(xs)], alpha,
        "a significant correlation", "no significant correlation",
    )  # fmt: skip


def variance_test(
    first: Sequence[float], second: Sequence[float], alpha: float, min_values: int
) -> StatisticalTest:
    _check([first, second], min_values)
    return _result(
        "Levene (median)", stats.levene(first, second, center="median"), [len(first), len(second)], alpha,
        "the variances differ", "no significant difference",
    )  # fmt: skip


__all__ = ["TooFewValues", "correlation", "normality", "variance_test"]
