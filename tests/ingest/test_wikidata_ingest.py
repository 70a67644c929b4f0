"""Wikidata ingest on the real sample dumps; expected values are read from the dump by the test itself."""

from __future__ import annotations

import bz2
import json
import shutil
from itertools import pairwise
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from ingest.shard_output import ErrorRateExceeded
from ingest.shards import Shard
from ingest.wikidata.ingest import WikidataIngestOptions, WikidataScope, ingest_wikidata
from ingest.wikidata.properties import resolve_property_labels, write_bundled_properties
from schemas import arrow_schema
from schemas.wikidata import Entity, Statement
from tests.conftest import WIKIDATA_API, WIKIDATA_ITEMS


def _raw_entities(path: Path) -> list[dict]:
    """The dump's entities parsed with the standard library, independent of the code under test."""
    with bz2.open(path, "rt", encoding="utf-8") as f:
        return [json.loads(line.rstrip().rstrip(",")) for line in f if line.strip() not in ("[", "]", "")]


@pytest.fixture(scope="module")
def items_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wikidata")
    ingest_wikidata(WIKIDATA_ITEMS, out)
    return out


def test_statement_count_matches_an_independent_count(items_out: Path) -> None:
    raw = _raw_entities(WIKIDATA_ITEMS)
    expected = sum(len(claims) for e in raw for claims in e["claims"].values())
    assert expected == 12_599
    statements = pl.read_parquet(items_out / "statements" / "wikidata-sample-items.all.parquet")
    assert statements.height == expected
    assert statements["statement_id"].n_unique() == expected
    entities = pl.read_parquet(items_out / "entities" / "wikidata-sample-items.all.parquet")
    assert entities.height == len(raw) == 100


def test_parquet_files_carry_the_schema_derived_from_the_models(items_out: Path) -> None:
    for table, model in (("statements", Statement), ("entities", Entity)):
        schema = pq.read_schema(items_out / table / "wikidata-sample-items.all.parquet")
        assert schema.equals(arrow_schema(model), check_metadata=False), table


def test_belgium_population_keeps_point_in_time_qualifiers(items_out: Path) -> None:
    belgium = next(e for e in _raw_entities(WIKIDATA_ITEMS) if e["id"] == "Q31")
    expected = {
        c["id"]: (
            c["mainsnak"]["datavalue"]["value"]["amount"],
            c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"],
        )
        for c in belgium["claims"]["P1082"]
        if "P585" in c.get("qualifiers", {})
    }
    assert len(expected) >= 2
    statements = pl.read_parquet(items_out / "statements" / "wikidata-sample-items.all.parquet")
    rows = statements.filter((pl.col("subject") == "Q31") & (pl.col("property") == "P1082")).to_dicts()
    got = {}
    for row in rows:
        times = [q["value_time"] for q in row["qualifiers"] if q["property"] == "P585"]
        if times:
            got[row["statement_id"]] = (row["value_amount_text"], times[0])
            assert row["value_kind"] == "quantity"
            assert row["value_amount"] == float(row["value_amount_text"])
            assert row["qualifiers"][0]["value_year"] == int(times[0][1:5])
    assert got == expected


def test_entity_row_fields_for_belgium(items_out: Path) -> None:
    raw = next(e for e in _raw_entities(WIKIDATA_ITEMS) if e["id"] == "Q31")
    entities = pl.read_parquet(items_out / "entities" / "wikidata-sample-items.all.parquet")
    row = entities.filter(pl.col("id") == "Q31").to_dicts()[0]
    assert row["label"] == raw["labels"]["en"]["value"] == "Belgium"
    assert row["enwiki_title"] == "Belgium"
    assert row["sitelink_count"] == len(raw["sitelinks"])
    assert row["aliases"] == [a["value"] for a in raw["aliases"]["en"]]
    assert row["instance_of"] == [c["mainsnak"]["datavalue"]["value"]["id"] for c in raw["claims"]["P31"]]


def test_head_of_state_qualifiers_and_dangling_items_are_kept(items_out: Path) -> None:
    statements = pl.read_parquet(items_out / "statements" / "wikidata-sample-items.all.parquet")
    heads = statements.filter((pl.col("subject") == "Q31") & (pl.col("property") == "P35")).to_dicts()
    assert heads and all(h["value_item"] for h in heads)
    assert any(q["property"] == "P580" and q["value_year"] for h in heads for q in h["qualifiers"])
    entity_ids = set(pl.read_parquet(items_out / "entities")["id"])
    assert any(h["value_item"] not in entity_ids for h in heads), "heads of state are not in the slice"


def test_value_kinds_cover_every_datavalue_type(items_out: Path) -> None:
    statements = pl.read_parquet(items_out / "statements" / "wikidata-sample-items.all.parquet")
    kinds = set(statements["value_kind"])
    assert {"item", "string", "monolingualtext", "quantity", "time", "globecoordinate", "none"} <= kinds
    coords = statements.filter(pl.col("value_kind") == "globecoordinate")
    assert coords["value_latitude"].is_between(-90, 90).all()
    novalue = statements.filter(pl.col("snak_type") != "value")
    assert novalue.height == 11 and (novalue["value_kind"] == "none").all()


def test_scope_filters(tmp_path: Path) -> None:
    options = WikidataIngestOptions(scope=WikidataScope(ids=frozenset({"Q31", "Q45"})))
    summary = ingest_wikidata(WIKIDATA_ITEMS, tmp_path, options)
    assert summary.records_written == 2 and summary.records_skipped == 98
    ids = set(pl.read_parquet(tmp_path / "entities")["id"])
    assert ids == {"Q31", "Q45"}
    cities = WikidataIngestOptions(scope=WikidataScope(instance_of=frozenset({"Q515"})), shard=Shard())
    out = tmp_path / "cities"
    ingest_wikidata(WIKIDATA_ITEMS, out, cities)
    expected = {
        e["id"]
        for e in _raw_entities(WIKIDATA_ITEMS)
        if any(
            c["mainsnak"].get("datavalue", {}).get("value", {}).get("id") == "Q515"
            for c in e["claims"].get("P31", [])
        )
    }
    assert expected and set(pl.read_parquet(out / "entities")["id"]) == expected


def test_byte_and_line_shards_partition_the_dump(tmp_path: Path) -> None:
    plain = tmp_path / "items.json"
    plain.write_bytes(bz2.decompress(WIKIDATA_ITEMS.read_bytes()))
    size = plain.stat().st_size
    cuts = [0, size // 3, size // 3 + 1, 2 * size // 3, size]
    ids: list[str] = []
    for start, end in pairwise(cuts):
        summary = ingest_wikidata(
            plain, tmp_path / "out", WikidataIngestOptions(shard=Shard(kind="bytes", start=start, end=end))
        )
        ids += pl.read_parquet(summary.outputs[0].path)["id"].to_list()
    assert sorted(ids) == sorted(e["id"] for e in _raw_entities(WIKIDATA_ITEMS))
    line_ids = []
    for start, end in ((0, 40), (40, None)):  # line ranges on the compressed file
        summary = ingest_wikidata(
            WIKIDATA_ITEMS,
            tmp_path / "lines",
            WikidataIngestOptions(shard=Shard(kind="lines", start=start, end=end)),
        )
        line_ids += pl.read_parquet(summary.outputs[0].path)["id"].to_list()
    assert line_ids == [e["id"] for e in _raw_entities(WIKIDATA_ITEMS)]
    assert Shard.parse("bytes:10:20").name == "bytes-10-20"
    with pytest.raises(ValueError, match="shard must look like"):
        Shard.parse("rows:1")


def test_rerunning_a_shard_replaces_its_output(tmp_path: Path) -> None:
    first = ingest_wikidata(WIKIDATA_API, tmp_path)
    second = ingest_wikidata(WIKIDATA_API, tmp_path)
    assert first.counts == second.counts
    assert len(list((tmp_path / "statements").glob("*.parquet"))) == 1
    assert pl.read_parquet(tmp_path / "statements").height == first.counts["statements"]
    assert not list(tmp_path.rglob("*.tmp"))


def test_line_delimited_api_entities(tmp_path: Path) -> None:
    summary = ingest_wikidata(WIKIDATA_API, tmp_path)
    with bz2.open(WIKIDATA_API, "rt") as f:
        raw = [json.loads(line) for line in f]
    assert summary.records_written == len(raw) == 635
    assert summary.counts["statements"] == sum(len(v) for e in raw for v in (e.get("claims") or {}).values())


def test_bad_json_line_in_the_middle_is_quarantined_with_its_position(tmp_path: Path) -> None:
    lines = bz2.decompress(WIKIDATA_ITEMS.read_bytes()).split(b"\n")
    broken_index = 50
    broken_id = json.loads(lines[broken_index].rstrip(b","))["id"]
    lines[broken_index] = broken = lines[broken_index][:5000]  # a line cut mid-entity
    lines.insert(20, b'{"type": "item", "id": "Q_bad", "claims": {"P1": [{"mainsnak": 3}]}},')
    dump = tmp_path / "broken.json.bz2"
    dump.write_bytes(bz2.compress(b"\n".join(lines)))
    summary = ingest_wikidata(dump, tmp_path / "out", WikidataIngestOptions(max_error_rate=0.05))
    assert summary.records_written == 99 and summary.quarantined == 2
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").sort("line")
    assert quarantine["line"].to_list() == [21, broken_index + 2]
    assert quarantine["record_id"].to_list() == ["Q_bad", None]
    offsets = [sum(len(x) + 1 for x in lines[: i - 1]) for i in quarantine["line"]]
    assert quarantine["byte_offset"].to_list() == offsets
    assert quarantine["excerpt"][1] == broken[:1000].decode()
    ids = set(pl.read_parquet(tmp_path / "out" / "entities")["id"])
    assert broken_id not in ids and len(ids) == 99


def test_cut_bz2_keeps_every_entity_before_the_cut(tmp_path: Path) -> None:
    data = WIKIDATA_ITEMS.read_bytes()
    cut = tmp_path / "cut.json.bz2"
    cut.write_bytes(data[: int(len(data) * 0.6)])
    summary = ingest_wikidata(cut, tmp_path / "out", WikidataIngestOptions(max_error_rate=None))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine")
    assert "TruncatedArchive" in quarantine["error_type"].to_list()
    # every complete line the cut archive still decompresses to was ingested
    decompressor = bz2.BZ2Decompressor()
    readable = decompressor.decompress(cut.read_bytes())
    complete = [
        json.loads(line.rstrip(b",")) for line in readable.split(b"\n")[:-1] if line not in (b"[", b"]")
    ]
    ids = pl.read_parquet(tmp_path / "out" / "entities")["id"].to_list()
    assert ids[: len(complete)] == [e["id"] for e in complete]
    assert summary.records_written == len(complete) >= 10
    # the partial last line and the truncation itself are both on record
    assert summary.quarantined == 2
    assert (
        quarantine.filter(pl.col("error_type") != "TruncatedArchive")["byte_offset"][0]
        == len(b"\n".join(readable.split(b"\n")[:-1])) + 1
    )


def test_error_rate_limit_fails_the_run_but_keeps_its_output(tmp_path: Path) -> None:
    lines = bz2.decompress(WIKIDATA_ITEMS.read_bytes()).split(b"\n")
    for i in range(1, 11):
        lines[i] = b"{not json},"
    dump = tmp_path / "bad.json"
    dump.write_bytes(b"\n".join(lines))
    with pytest.raises(ErrorRateExceeded, match=r"10 of 100 records .* above the limit of 5.0%"):
        ingest_wikidata(dump, tmp_path / "out", WikidataIngestOptions(max_error_rate=0.05))
    assert pl.read_parquet(tmp_path / "out" / "entities").height == 90
    assert pl.read_parquet(tmp_path / "out" / "quarantine").height == 10


def test_property_labels_prefer_the_dump(tmp_path: Path, settings) -> None:
    write_bundled_properties(tmp_path, settings.property_table)
    dump = tmp_path / "props.json"
    dump.write_text(
        "[\n"
        + json.dumps(
            {
                "type": "property",
                "id": "P1082",
                "datatype": "quantity",
                "labels": {"en": {"language": "en", "value": "population count"}},
                "claims": {},
            }
        )
        + "\n]\n"
    )
    ingest_wikidata(dump, tmp_path)
    labels = resolve_property_labels(tmp_path)
    assert labels.height == labels["id"].n_unique() > 12_000
    by_id = {r["id"]: r for r in labels.filter(pl.col("id").is_in(["P1082", "P585"])).to_dicts()}
    assert by_id["P1082"]["label"] == "population count" and by_id["P1082"]["source"] == "dump"
    assert by_id["P585"]["label"] == "point in time" and by_id["P585"]["source"] == "bundled"


def test_missing_input_and_bad_options_are_clear_errors(tmp_path: Path) -> None:
    with pytest.raises(FileNotFoundError, match="Wikidata dump not found"):
        ingest_wikidata(tmp_path / "nope.json.bz2", tmp_path)
    with pytest.raises(ValueError, match="max_error_rate"):
        WikidataIngestOptions(max_error_rate=2)
    shutil.rmtree(tmp_path)


def test_summary_checksums_the_whole_input(tmp_path: Path) -> None:
    import hashlib

    expected = hashlib.sha256(WIKIDATA_API.read_bytes()).hexdigest()
    assert ingest_wikidata(WIKIDATA_API, tmp_path).source_sha256 == expected
    shard = WikidataIngestOptions(shard=Shard(kind="lines", start=0, end=10))
    assert ingest_wikidata(WIKIDATA_API, tmp_path, shard).source_sha256 == expected


def test_an_entity_whose_id_is_not_a_string_is_quarantined_and_the_run_finishes(tmp_path: Path) -> None:
    """Issue 17: '{"id": 12, ...}' parses as JSON, and used to crash the run at its end (the quarantine
    row's record_id must be a string) with a .tmp file left in quarantine/."""
    lines = bz2.decompress(WIKIDATA_ITEMS.read_bytes()).split(b"\n")
    good = len([line for line in lines if line.strip(b",").startswith(b"{")])
    lines.insert(10, b'{"id": 12, "type": ["item"]},')
    lines.insert(30, b'{"id": {"nested": true}, "type": "item"},')
    dump = tmp_path / "numeric-id.json.bz2"
    dump.write_bytes(bz2.compress(b"\n".join(lines)))
    summary = ingest_wikidata(dump, tmp_path / "out", WikidataIngestOptions(max_error_rate=0.05))
    assert summary.records_written == good and summary.quarantined == 2
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").sort("line")
    assert quarantine["line"].to_list() == [11, 31]
    assert quarantine["record_id"].to_list() == ["12", "{'nested': True}"]
    assert not list((tmp_path / "out" / "quarantine").glob("*.tmp"))


def test_an_entity_whose_values_do_not_fit_the_schema_is_quarantined_and_the_run_finishes(
    tmp_path: Path,
) -> None:
    """Issue 17, found by tests/fuzz: a line of the right outline holding a value of the wrong type (a
    claim id that is an object, a label that is a number, a precision beyond int64) failed the Arrow
    conversion of its whole batch, and with it the run; a null where the schema allows none (a snak's
    property, a qualifier's) passed the conversion and failed the run when the file was written."""
    lines = bz2.decompress(WIKIDATA_ITEMS.read_bytes()).split(b"\n")
    good = [json.loads(line.rstrip(b",")) for line in lines if line.strip(b",").startswith(b"{")]
    belgium = next(e for e in good if e["id"] == "Q31")
    claim_id, label, precision, snak, qualifier = (json.loads(json.dumps(belgium)) for _ in range(5))
    claim_id["claims"]["P31"][0]["id"] = {"not": "a string"}
    label["labels"]["en"]["value"] = 12
    time_claim = next(c for c in precision["claims"]["P571"] if c["mainsnak"].get("datavalue"))
    time_claim["mainsnak"]["datavalue"]["value"]["precision"] = 2**64 - 1
    snak["claims"]["P17"][0]["mainsnak"]["property"] = None
    dated = next(c for c in qualifier["claims"]["P1082"] if "P585" in c.get("qualifiers", {}))
    dated["qualifiers"]["P585"][0]["property"] = None
    bad = {10: claim_id, 30: label, 60: precision, 70: snak, 80: qualifier}
    for at, entity in sorted(bad.items()):
        entity["id"] = f"Q_bad{at}"
        lines.insert(at, json.dumps(entity).encode() + b",")
    dump = tmp_path / "wrong-types.json.bz2"
    dump.write_bytes(bz2.compress(b"\n".join(lines)))
    summary = ingest_wikidata(dump, tmp_path / "out", WikidataIngestOptions(max_error_rate=0.05))
    assert summary.records_written == len(good) and summary.quarantined == len(bad)
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").sort("line")
    assert quarantine["line"].to_list() == [at + 1 for at in bad]
    assert quarantine["record_id"].to_list() == [f"Q_bad{at}" for at in bad]
    assert quarantine["error"][3].endswith("property holds a null")
    assert quarantine["error"][4].endswith("qualifiers.item.property holds a null")
    assert all("do not fit its schema" in error for error in quarantine["error"])
    entities = pl.read_parquet(tmp_path / "out" / "entities")
    assert entities["id"].to_list() == [e["id"] for e in good]
    statements = pl.read_parquet(tmp_path / "out" / "statements")
    assert statements.height == sum(len(claims) for e in good for claims in e["claims"].values())
