"""table-sql over sets of KG entities, on the real sample index; every gold value is computed here from
the raw dump JSON (both sample files), with the set's definition written out as Wikidata ids."""

from __future__ import annotations

import pytest

from query import Engine, EngineConfig

MODES = ["kg-lookup", "table-sql", "retrieve-read"]
CITY = {"Q515", "Q1549591", "Q1637706", "Q200250"}  # city, big city, million city, metropolis
CHILE, MOUNTAIN = "Q298", "Q8502"


@pytest.fixture(scope="module")
def raw(raw_dump) -> dict[str, dict]:
    return raw_dump


@pytest.fixture(scope="module")
def engine(sample_index):
    _, result = sample_index
    with Engine.open(result.version_dir, EngineConfig(modes=MODES, reader="candidates")) as engine:
        yield engine


def _items(entity: dict, prop: str) -> set[str]:
    """The item values of the best-rank statements (preferred if any, else normal): Wikidata's truthy ones."""
    live = [c for c in entity.get("claims", {}).get(prop, []) if c["rank"] != "deprecated"]
    best = [c for c in live if c["rank"] == "preferred"] or live
    return {
        c["mainsnak"]["datavalue"]["value"]["id"] for c in best if c["mainsnak"].get("snaktype") == "value"
    }


def _amount(entity: dict, prop: str) -> float | None:
    """The value a user would read: preferred rank first, then the latest point in time (P585)."""
    claims = [
        c
        for c in entity.get("claims", {}).get(prop, [])
        if c["rank"] != "deprecated" and c["mainsnak"].get("snaktype") == "value"
    ]
    if not claims:
        return None

    def year(c: dict) -> int:
        times = c.get("qualifiers", {}).get("P585", [])
        if not times or "datavalue" not in times[0]:
            return -(10**6)
        return int(times[0]["datavalue"]["value"]["time"][1:5])

    best = min(claims, key=lambda c: (0 if c["rank"] == "preferred" else 1, -year(c)))
    return float(best["mainsnak"]["datavalue"]["value"]["amount"])


def _label(entity: dict) -> str:
    return entity.get("labels", {}).get("en", {}).get("value", entity["id"])


def test_the_city_with_the_most_inhabitants(engine, raw):
    cities = [e for e in raw.values() if _items(e, "P31") & CITY]
    values = {e["id"]: v for e in cities if (v := _amount(e, "P1082")) is not None}
    best = max(values, key=values.get)
    result = engine.ask("Which city has the most inhabitants?")
    assert result.mode == "table-sql", result.route
    assert (result.answer, result.answer_entity_id) == (_label(raw[best]), best)
    assert result.unit is None  # the answer is a city, not a quantity
    table = result.table
    assert table.source == "graph" and "MATCH (e:Entity)" in table.set_query
    assert sorted(table.set_params["classes"]) == sorted(CITY) and table.set_params["any_country"]
    assert table.total_rows == len(cities)
    assert float(table.value.replace(",", "")) == values[best]
    chosen = (
        table.rows[-1] if table.rows[-1].row_index == table.selected[0] else table.rows[table.selected[0]]
    )
    assert chosen.cells[1].provenance.startswith("statement ")
    assert result.supporting_evidence_ids and result.evidence[0].source_type == "kg"


def test_a_count_over_a_threshold(engine, raw):
    cities = [e for e in raw.values() if _items(e, "P31") & CITY]
    expected = sum((_amount(e, "P1082") or 0) > 1_000_000 for e in cities)
    result = engine.ask("How many cities have more than 1 million inhabitants?")
    assert result.mode == "table-sql", result.route
    assert result.answer == str(expected)
    assert "WHERE value > $1" in result.table.sql and result.table.params == [1_000_000.0]


def test_an_explicit_list_compares_its_members(engine, raw):
    names = {"Bonn": None, "Parma": None, "Siena": None}
    for entity in raw.values():
        if _label(entity) in names and entity.get("claims", {}).get("P2046"):
            names[_label(entity)] = _amount(entity, "P2046")
    assert all(v is not None for v in names.values())
    result = engine.ask("Which of Bonn, Parma and Siena has the largest area?")
    assert result.mode == "table-sql", result.route
    assert result.answer == max(names, key=names.get) and result.unit is None  # a city, not an area
    assert result.table.set_query == "explicit list" and result.table.total_rows == 3


def test_chilean_mountains_and_a_count_the_index_cannot_make(engine, raw):
    mountains = [e for e in raw.values() if CHILE in _items(e, "P17") and MOUNTAIN in _items(e, "P31")]
    heights = {e["id"]: v for e in mountains if (v := _amount(e, "P2044")) is not None}
    result = engine.ask("Which Chilean mountain has the highest elevation?")
    assert result.mode == "table-sql", result.route
    assert result.answer_entity_id == max(heights, key=heights.get)
    assert result.table.set_params["country"] == CHILE and result.table.total_rows == len(mountains)
    # the places in Chile (Chile itself excluded): none has a population statement in the sample
    places = [e for e in raw.values() if CHILE in _items(e, "P17") and e["id"] != CHILE]
    assert all(_amount(e, "P1082") is None for e in places)
    count = engine.ask("How many of the Chilean places in the index have more than 100,000 inhabitants?")
    assert count.mode == "table-sql" and count.unknown and count.confidence == 0.0
    assert count.table.total_rows == len(places) and "no value" in count.table.note


def test_a_set_the_index_cannot_resolve_is_declined_with_its_reason(engine):
    result = engine.ask("Which Atlantean city has the most inhabitants?")
    step = next(s for s in result.route if s.mode == "table-sql")
    assert result.mode != "table-sql" and step.outcome == "declined" and "Atlantean" in step.reason


def test_an_ordinal_and_an_aggregate_over_the_cities(engine, raw):
    cities = [e for e in raw.values() if _items(e, "P31") & CITY]
    values = {e["id"]: v for e in cities if (v := _amount(e, "P1082")) is not None}
    ranked = sorted(set(values.values()), reverse=True)
    second = [i for i, v in values.items() if v == ranked[1]]
    result = engine.ask("Which city has the second most inhabitants?")
    assert result.mode == "table-sql", result.route
    assert result.answer_entity_id in second and "place 2" in result.table.operation
    total = engine.ask("What is the total population of the cities?")
    assert total.mode == "table-sql", total.route
    assert float(total.answer.replace(",", "")) == pytest.approx(sum(values.values()))
    assert "sum(value)" in total.table.sql
