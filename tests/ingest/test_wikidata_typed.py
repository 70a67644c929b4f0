"""The typed Wikidata decoder gives exactly the rows of the general reader, and hands it every line it does
not take: the general reader (orjson + dicts) is the reference here, run on the same lines."""

from __future__ import annotations

import bz2
import json
from pathlib import Path

import orjson
import polars as pl
import pytest

from ingest.wikidata.extract import STATEMENT_FIELDS, entity_row, statement_rows
from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata
from ingest.wikidata.typed import TYPED_MISSES, entity_decoder, typed_rows
from tests.conftest import WIKIDATA_API, WIKIDATA_ITEMS


def _lines(path: Path) -> list[bytes]:
    data = bz2.decompress(path.read_bytes()).split(b"\n")
    return [line.rstrip(b",") for line in data if line.strip() not in (b"[", b"]", b"")]


def _general(line: bytes, language: str = "en") -> tuple[dict, list[tuple]]:
    entity = orjson.loads(line)
    return entity_row(entity, language), statement_rows(entity)


@pytest.mark.parametrize("language", ["en", "de", "mul"])
def test_typed_rows_equal_the_general_readers_on_both_sample_dumps(language: str) -> None:
    decode = entity_decoder(language)
    lines = _lines(WIKIDATA_ITEMS) + _lines(WIKIDATA_API)
    for line in lines:  # every real line is taken by the typed path, else the speed-up silently vanishes
        assert typed_rows(decode, line, language) == _general(line, language)
    labels = [typed_rows(decode, line, language)[0]["label"] for line in lines]
    raw = [json.loads(line).get("labels") or {} for line in lines]
    expected = [(entry.get(language) or entry.get("mul") or {}).get("value") for entry in raw]
    assert labels == expected and (language == "mul" or any(expected))  # the language really was read


def _variant(change) -> bytes:
    belgium = next(json.loads(line) for line in _lines(WIKIDATA_ITEMS) if b'"id": "Q31"' in line[:40])
    change(belgium)
    return json.dumps(belgium).encode()


def _first_claim(entity: dict, prop: str) -> dict:
    return entity["claims"][prop][0]


# Lines the typed path refuses but the general reader keeps: its rows are the general reader's.
KEPT = {
    "value type newer than the code": lambda e: _first_claim(e, "P17")["mainsnak"].update(
        datavalue={"type": "newkind", "value": {"a": 1}}
    ),
    "null datavalue": lambda e: _first_claim(e, "P17")["mainsnak"].update(datavalue=None),
    "entity id with numeric-id only": lambda e: _first_claim(e, "P17")["mainsnak"]["datavalue"]["value"].pop(
        "id"
    ),
    "quantity bound given as a number": lambda e: _first_claim(e, "P1082")["mainsnak"]["datavalue"][
        "value"
    ].update(lowerBound=5),
    "object value holding an id under P31": lambda e: e["claims"]["P31"].append(
        {
            "mainsnak": {
                "snaktype": "value",
                "property": "P31",
                "datavalue": {
                    "type": "globecoordinate",
                    "value": {"latitude": 1, "longitude": 2, "id": "Q9"},
                },
            }
        }
    ),
    "empty qualifiers given as a list": lambda e: _first_claim(e, "P17").update(qualifiers=[]),
    "label entry that is empty": lambda e: e["labels"].update(en={}),
}


@pytest.mark.parametrize("name", sorted(KEPT))
def test_a_line_outside_the_typed_shape_gets_the_general_readers_rows(name: str) -> None:
    line = _variant(KEPT[name])
    with pytest.raises(TYPED_MISSES):
        typed_rows(entity_decoder("en"), line, "en")
    row, statements = _general(line)
    assert row["id"] == "Q31" and statements  # the general reader keeps it


def _ingest(tmp_path: Path, lines: list[bytes]) -> tuple[pl.DataFrame, pl.DataFrame, pl.DataFrame]:
    dump = tmp_path / "dump.json"
    dump.write_bytes(b"[\n" + b",\n".join(lines) + b"\n]\n")
    ingest_wikidata(dump, tmp_path / "out", WikidataIngestOptions(max_error_rate=None))
    read = [pl.read_parquet(tmp_path / "out" / table) for table in ("entities", "statements", "quarantine")]
    return read[0], read[1], read[2]


def test_lines_the_typed_path_refuses_are_kept_or_quarantined_by_the_general_reader(tmp_path: Path) -> None:
    good = _lines(WIKIDATA_ITEMS)[:3]
    kept = [_variant(change) for change in KEPT.values()]
    bad = [
        _variant(lambda e: e["claims"]["P17"].__setitem__(0, {"mainsnak": 3})),  # an int where an object is
        _variant(lambda e: e["labels"]["en"].update(value=12)),  # fits the outline, not the schema
        b'{"id": "Q1", "labels": {"de": {"value": "\xff"}}}',  # not UTF-8, in a language never decoded
        b'{"id": "Q1", "claims": {"P1": [1, 2,}}',  # broken JSON
    ]
    lines = good + kept + bad
    entities, statements, quarantine = _ingest(tmp_path, lines)
    expected = [_general(line) for line in good + kept]
    assert entities.to_dicts() == [row for row, _ in expected]
    ids = [statement[STATEMENT_FIELDS.index("statement_id")] for _, rows in expected for statement in rows]
    assert statements["statement_id"].to_list() == ids
    assert statements.filter(pl.col("value_kind") == "other").height == 1  # the newer value type, verbatim
    first_bad = len(good) + len(kept)
    assert quarantine.sort("line")["line"].to_list() == [first_bad + 2 + i for i in range(len(bad))]
    offsets = [2 + sum(len(line) + 2 for line in lines[:i]) for i in range(first_bad, len(lines))]
    assert quarantine.sort("line")["byte_offset"].to_list() == offsets
    errors = quarantine.sort("line")["error"].to_list()
    assert errors[0] == "'int' object has no attribute 'get'"  # the general reader's own words
    assert "do not fit its schema" in errors[1]
    assert "not valid UTF-8" in errors[2] and "expected a JSON value" in errors[3]


def test_an_infinite_number_in_a_part_never_read_no_longer_loses_the_entity(tmp_path: Path) -> None:
    """The one place the typed path differs on purpose: orjson refuses 1e999 anywhere in a line, msgspec
    steps over it when it lies in a part neither reader uses, and the entity is kept whole."""
    line = _variant(lambda e: e["sitelinks"]["dewiki"].update(size=0)).replace(b'"size": 0', b'"size": 1e999')
    with pytest.raises(orjson.JSONDecodeError):
        orjson.loads(line)
    entities, _, quarantine = _ingest(tmp_path, [line])
    assert entities["id"].to_list() == ["Q31"] and quarantine.is_empty()
