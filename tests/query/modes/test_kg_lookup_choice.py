"""How the KG lookup picks among one (entity, property) pair's statements: rank, time, labels.

Statements are written here by hand (``TypedStatement``), so each rule is seen alone; the end-to-end
behaviour on the real sample index is in ``test_kg_lookup.py``.
"""

from __future__ import annotations

from query.modes.base import Understanding
from query.modes.kg_lookup import KgLookupMode, answer_value
from schemas.query import Intent, TimeConstraint
from schemas.statements import TypedStatement


def _statement(n: int, rank: str = "normal", **values) -> TypedStatement:
    base = {
        "statement_id": f"Q1${n}",
        "subject": "Q1",
        "subject_label": "Testland",
        "property": "P1082",
        "property_label": "population",
        "rank": rank,
        "snak_type": "value",
        "value_kind": "quantity",
        "value_amount": float(n),
        "value_amount_text": f"+{n}",
        "value_text": f"{n:,}",
        "qualifiers": [],
        "source": "test",
    }
    return TypedStatement.model_validate({**base, **values})


def _understanding(years=(), cues=()) -> Understanding:
    intent = Intent(
        question="q",
        answer_type="number",
        time=TimeConstraint(years=list(years), cues=list(cues)),
        extractor="test",
    )
    return Understanding("q", intent, [])


MODE = KgLookupMode(statements=None, evidence=None, properties=None, index_version="t")  # type: ignore[arg-type]


def test_deprecated_statements_never_answer():
    chosen, why = MODE.choose([_statement(5, "deprecated"), _statement(6, "deprecated")], _understanding())
    assert chosen == [] and "deprecated" in why


def test_preferred_rank_wins_over_a_more_recent_normal_one():
    old_preferred = _statement(1000, "preferred", point_in_time_year=2000)
    new_normal = _statement(2000, "normal", point_in_time_year=2020)
    chosen, _ = MODE.choose([new_normal, old_preferred], _understanding())
    assert chosen[0] is old_preferred


def test_among_equal_ranks_the_most_recent_wins():
    chosen, _ = MODE.choose(
        [_statement(1, point_in_time_year=1990), _statement(2, point_in_time_year=2010)], _understanding()
    )
    assert chosen[0].value_amount == 2


def test_a_year_needs_a_covering_qualifier():
    by_point = _statement(7, point_in_time_year=1990)
    by_interval = _statement(8, start_year=1980, end_year=1985)
    open_ended = _statement(9, start_year=2001)
    assert MODE.choose([by_point, by_interval, open_ended], _understanding([1990]))[0] == [by_point]
    assert MODE.choose([by_point, by_interval, open_ended], _understanding([1983]))[0] == [by_interval]
    assert MODE.choose([by_point, by_interval, open_ended], _understanding([2024]))[0] == [open_ended]
    chosen, why = MODE.choose([by_point, by_interval], _understanding([1066]))
    assert chosen == [] and "1066" in why


def test_first_and_last_order_by_time():
    a, b, c = (_statement(n, point_in_time_year=y) for n, y in ((1, 1950), (2, 1900), (3, 2000)))
    assert MODE.choose([a, b, c], _understanding(cues=["first"]))[0][0] is b
    assert MODE.choose([a, b, c], _understanding(cues=["last"]))[0][0] is c


def test_an_unlabelled_item_is_never_chosen():
    unlabelled = _statement(1, value_kind="item", value_item="Q950958", value_item_label=None)
    labelled = _statement(2, value_kind="item", value_item="Q90", value_item_label="Paris")
    assert MODE.choose([unlabelled, labelled], _understanding())[0] == [labelled]
    chosen, why = MODE.choose([unlabelled], _understanding())
    assert chosen == [] and "Q950958" in why and "no label" in why


def test_values_as_answers_keep_units_apart_and_dates_at_the_asked_precision():
    area = _statement(
        30528, value_amount_text="+30528", value_unit="Q712226", value_unit_label="square kilometre"
    )
    assert answer_value(area, "number") == ("30,528", "square kilometre")
    founded = _statement(
        1, value_kind="time", value_time="+1830-10-04T00:00:00Z", value_year=1830, value_precision=11
    )
    assert answer_value(founded, "year") == ("1830", None)
    assert answer_value(founded, "date") == ("4 October 1830", None)
