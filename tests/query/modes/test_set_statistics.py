"""Statistics and relationship questions over sets of KG entities, on the real sample index. Every
expected value is computed here from the raw dump JSON, with SciPy's reference tests and the
standard library's statistics, never through the engine's tables."""

from __future__ import annotations

import statistics
from collections import Counter

import pytest
from scipy import stats

from tests.query.modes.test_entity_sets import CITY, MOUNTAIN, _amount, _items, _label, engine, raw

__all__ = ["engine", "raw"]  # the module's fixtures, shared
GERMANY, COUNTRY = "Q183", {"Q6256", "Q3624078"}
COMMUNE = {"Q25412", "Q484170"}


def _values(raw: dict, classes: set[str], prop: str, country: str | None = None) -> list[float]:
    members = [
        e
        for e in raw.values()
        if _items(e, "P31") & classes and (country is None or country in _items(e, "P17"))
    ]
    return [v for e in members if (v := _amount(e, prop)) is not None]


def test_a_normality_question_gives_the_test_and_its_verdict(engine, raw):
    values = _values(raw, CITY, "P1082", GERMANY)
    expected = stats.shapiro(values)
    result = engine.ask("Is the population of the German cities normally distributed?")
    assert result.mode == "table-sql", result.route
    test = result.table.test
    assert test.name == "Shapiro-Wilk" and test.n == [len(values)]
    assert test.p_value == pytest.approx(expected.pvalue) and test.statistic == pytest.approx(
        expected.statistic
    )
    assert result.answer == ("no" if expected.pvalue < 0.05 else "yes")
    assert result.table.sql.startswith("SELECT value FROM question_table")
    assert len(result.supporting_evidence_ids) == min(10, len(values))


def test_a_correlation_is_pearsons_r_and_its_significance(engine, raw):
    countries = [e for e in raw.values() if _items(e, "P31") & COUNTRY]
    pairs = [
        (p, a)
        for e in countries
        if (p := _amount(e, "P1082")) is not None and (a := _amount(e, "P2046")) is not None
    ]
    r = statistics.correlation([p for p, _ in pairs], [a for _, a in pairs])
    result = engine.ask("What is the correlation between the population and the area of the countries?")
    assert result.mode == "table-sql", result.route
    assert result.answer == f"{r:.2f}" and result.table.test.n == [len(pairs)]
    assert [c.name for c in result.table.columns] == ["entity", "value", "value2"]
    significant = stats.pearsonr([p for p, _ in pairs], [a for _, a in pairs]).pvalue < 0.05
    asked = engine.ask("Is there a correlation between the population and the area of the countries?")
    assert asked.answer == ("yes" if significant else "no")


def test_a_variance_test_between_two_sets_and_the_variance_itself(engine, raw):
    cities, mountains = _values(raw, CITY, "P2044"), _values(raw, {MOUNTAIN}, "P2044")
    expected = stats.levene(cities, mountains, center="median")
    result = engine.ask("Do the cities and the mountains differ in the variance of their elevation?")
    assert result.mode == "table-sql", result.route
    assert result.table.test.n == [len(cities), len(mountains)]
    assert result.table.test.p_value == pytest.approx(expected.pvalue)
    assert result.answer == ("yes" if expected.pvalue < 0.05 else "no")
    assert {r.cells[1].text for r in result.table.rows} <= {"city", "mountain"}
    spread = engine.ask("What is the standard deviation of the elevation of the mountains?")
    assert float(spread.answer.replace(",", "")) == pytest.approx(statistics.stdev(mountains), abs=0.006)
    assert spread.unit == "metre"
    variance = engine.ask("What is the variance of the elevation of the mountains?")
    assert float(variance.answer.replace(",", "")) == pytest.approx(statistics.variance(mountains), abs=0.006)
    assert variance.unit is None and "metre)²" in variance.table.note  # not in metres


def test_relationships_count_members_by_their_country(engine, raw):
    cities = [e for e in raw.values() if _items(e, "P31") & CITY]
    countries = Counter(c for e in cities for c in _items(e, "P17"))
    top, n = countries.most_common(1)[0]
    assert list(countries.values()).count(n) == 1  # no tie at the top in the sample
    result = engine.ask("Which country has the most cities?")
    assert result.mode == "table-sql", result.route
    assert (result.answer_entity_id, result.answer, result.table.value) == (top, _label(raw[top]), str(n))
    assert "GROUP BY" in result.table.sql and len(result.table.selected) == n
    count = engine.ask("How many of the cities are in Germany?")
    assert count.mode == "table-sql" and count.answer == str(countries[GERMANY])
    assert count.table.set_params["country"] == GERMANY


def test_too_few_values_or_shared_members_are_refused_not_guessed(engine, raw):
    elevations = _values(raw, COMMUNE, "P2044")
    assert 0 < len(elevations) < 5  # the sample's communes: too few elevations for a test
    result = engine.ask("Is the elevation of the communes normally distributed?")
    step = next(s for s in result.route if s.mode == "table-sql")
    assert result.mode != "table-sql" and step.outcome == "declined" and "at least 5 values" in step.reason
    shared = engine.ask("Do the cities and the German cities differ in the variance of their population?")
    step = next(s for s in shared.route if s.mode == "table-sql")
    assert shared.mode != "table-sql" and "share" in step.reason
