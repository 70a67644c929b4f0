"""Typed statements of the sample index, checked against the raw Wikidata dump JSON, plus bad and empty input.

Expected values are read straight from the bz2 dumps here, not from the ingest or the lexicon.
"""

from __future__ import annotations

import bz2
import json
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from index import layout
from index.duck import MemoryBudget, connect
from index.names import NameStore, build_names
from index.reader import IndexReader
from index.statements import ROW_GROUP_ROWS, StatementStore, build_statements
from schemas import arrow_schema
from schemas.statements import RANK_ORDER, TypedStatement
from tests.conftest import WIKIDATA_API, WIKIDATA_ITEMS

ENTITY_URI = "http://www.wikidata.org/entity/"


def dump_entities(path: Path) -> Iterator[dict]:
    with bz2.open(path, "rt", encoding="utf-8") as lines:
        for line in lines:
            line = line.strip().rstrip(",")
            if line.startswith("{"):
                try:
                    yield json.loads(line)
                except json.JSONDecodeError:  # the stream sample holds deliberately broken lines
                    continue


@pytest.fixture(scope="module")
def items() -> dict[str, dict]:
    return {e["id"]: e for e in dump_entities(WIKIDATA_ITEMS)}


@pytest.fixture(scope="module")
def stream_ids() -> set[str]:
    """Ids of the other sample dump: a label found in both files could come from either."""
    return {e["id"] for e in dump_entities(WIKIDATA_API) if "id" in e}


@pytest.fixture(scope="module")
def belgium(items) -> dict:
    (entity,) = [e for e in items.values() if e.get("labels", {}).get("en", {}).get("value") == "Belgium"]
    return entity


@pytest.fixture(scope="module")
def reader(sample_index) -> IndexReader:
    _, result = sample_index
    return IndexReader(result.version_dir)


@pytest.fixture(scope="module")
def store(reader) -> StatementStore:
    return reader.statements


def _time(snak: dict) -> str:
    return snak["datavalue"]["value"]["time"]


def test_belgium_population_matches_the_dump(store, belgium):
    claims = belgium["claims"]["P1082"]
    found = store.lookup([belgium["id"]], ["P1082"])
    assert len(found) == len(claims)
    assert {s.statement_id for s in found} == {c["id"] for c in claims}
    (in_2014,) = [c for c in claims if any(_time(q).startswith("+2014-") for q in c["qualifiers"]["P585"])]
    (typed,) = [s for s in found if s.point_in_time_year == 2014]
    amount = in_2014["mainsnak"]["datavalue"]["value"]["amount"]
    assert typed.statement_id == in_2014["id"]
    assert typed.value_amount == float(amount) and typed.value_amount_text == amount
    assert typed.point_in_time == _time(in_2014["qualifiers"]["P585"][0])
    assert typed.subject_label == "Belgium" and typed.property_label == "population"
    assert typed.qualifiers[0].property == "P585" and "2014" in typed.qualifiers[0].text


def test_preferred_statement_sorts_first(store, belgium):
    found = store.lookup([belgium["id"]], ["P1082"])
    preferred = {c["id"] for c in belgium["claims"]["P1082"] if c["rank"] == "preferred"}
    assert preferred and found[0].statement_id in preferred
    assert [RANK_ORDER[s.rank] for s in found] == sorted(RANK_ORDER[s.rank] for s in found)


def test_area_carries_its_unit_label(store, belgium):
    (claim,) = belgium["claims"]["P2046"]
    value = claim["mainsnak"]["datavalue"]["value"]
    (area,) = store.lookup([belgium["id"]], ["P2046"])
    assert area.value_amount == float(value["amount"])
    assert area.value_unit == value["unit"].removeprefix(ENTITY_URI)
    assert area.value_unit_label == "square kilometre"
    assert area.value_text == f"{int(value['amount']):,} square kilometre"


def test_item_values_are_labelled_only_when_the_slice_names_them(store, belgium, items, stream_ids):
    typed = {s.statement_id: s for s in store.lookup([belgium["id"]])}
    known = unknown = 0
    for claims in belgium["claims"].values():
        for claim in claims:
            value = claim["mainsnak"].get("datavalue", {}).get("value")
            if claim["mainsnak"]["datatype"] != "wikibase-item" or not value:
                continue
            statement = typed[claim["id"]]
            assert statement.value_item == value["id"]
            if value["id"] in stream_ids:
                continue
            if value["id"] in items:
                assert statement.value_item_label == items[value["id"]]["labels"]["en"]["value"]
                known += 1
            else:
                assert statement.value_item_label is None  # never the id itself
                assert statement.value_text == value["id"]
                unknown += 1
    assert known and unknown


def test_statement_cites_its_evidence_row(store, reader, belgium):
    (typed,) = [s for s in store.lookup([belgium["id"]], ["P1082"]) if s.point_in_time_year == 2014]
    evidence = pl.read_parquet(reader.evidence_files()).filter(pl.col("evidence_id") == typed.evidence_id)
    assert evidence.height >= 1
    text = evidence["text"][0]
    assert text.startswith("Belgium, population, ") and f"{int(typed.value_amount):,}" in text
    assert evidence["provenance"][0]["statement_id"] == typed.statement_id


def test_external_ids_are_kept_without_evidence(store, belgium):
    claim = next(
        c
        for claims in belgium["claims"].values()
        for c in claims
        if c["mainsnak"]["datatype"] == "external-id" and c["mainsnak"]["snaktype"] == "value"
    )
    (typed,) = [s for s in store.lookup([belgium["id"]]) if s.statement_id == claim["id"]]
    assert typed.value_string == claim["mainsnak"]["datavalue"]["value"]
    assert typed.evidence_id is None


def test_deprecated_statement_is_kept_last_without_evidence(store, items):
    subject, prop, claim = next(
        (e["id"], p, c)
        for e in items.values()
        for p, claims in e.get("claims", {}).items()
        for c in claims
        if c["rank"] == "deprecated"
    )
    found = store.lookup([subject], [prop])
    (typed,) = [s for s in found if s.statement_id == claim["id"]]
    assert typed.rank == "deprecated" and typed.evidence_id is None
    assert found.index(typed) >= len([c for c in items[subject]["claims"][prop] if c["rank"] != "deprecated"])


def test_unknown_subjects_and_empty_requests_find_nothing(store, belgium):
    assert store.lookup(["Q999999999999"]) == []
    assert store.lookup([]) == []
    assert store.lookup([belgium["id"]], []) == []
    assert store.lookup([belgium["id"]], ["P999999"]) == []


def test_file_holds_every_ingested_statement_sorted_in_small_row_groups(store, sample_ingest, sample_index):
    _, result = sample_index
    ingested = sum(
        pq.ParquetFile(p).metadata.num_rows for p in (sample_ingest.out_dir / "statements").glob("*.parquet")
    )
    stage = result.manifest.stages["statements"]
    assert store.count() == ingested - stage.counts["skipped"] and stage.counts["skipped"] == 0
    assert result.manifest.validation["statements"] == "ok"
    metadata = pq.read_metadata(store.path)
    assert metadata.num_row_groups > 1
    assert all(metadata.row_group(i).num_rows <= ROW_GROUP_ROWS for i in range(metadata.num_row_groups))
    keys = pq.read_table(store.path, columns=["subject", "property", "rank"]).to_pylist()
    order = [(k["subject"], k["property"], RANK_ORDER[k["rank"]]) for k in keys]
    assert order == sorted(order)
    assert pq.read_schema(store.path).remove_metadata() == arrow_schema(TypedStatement).remove_metadata()


def test_lookups_from_many_threads_agree(store, belgium, items):
    subjects = [belgium["id"], *sorted(items)[:5]]
    expected = [s.statement_id for s in store.lookup(subjects)]
    with ThreadPoolExecutor(8) as pool:
        results = list(pool.map(lambda _: [s.statement_id for s in store.lookup(subjects)], range(16)))
    assert expected and all(r == expected for r in results)


def _build(ingest: Path, out: Path, work: Path):
    """The statements stage on its own, with the name tables of this ingest."""
    budget = MemoryBudget(memory_mb=256)
    with connect(budget, work / "spill", database=work / "names.duckdb") as con:
        build_names(ingest, work / "names", con)
    names = NameStore(work / "names", connect(budget, work / "spill2"))
    return build_statements(ingest, names, out, work / "statements", budget)


def test_rows_that_do_not_fit_are_skipped_with_their_ids(tmp_path, sample_ingest):
    source = sorted((sample_ingest.out_dir / "statements").glob("*.parquet"))[0]
    rows = pq.read_table(source).slice(0, 60).to_pylist()
    rows[3]["rank"] = "bogus"
    rows[7].update(value_kind="globecoordinate", snak_type="value", value_latitude=None, datatype="globe")
    for row in rows:  # an ingest that wrote text into a float column: Arrow refuses that row alone
        row["value_amount"] = None
    rows[11].update(value_kind="quantity", snak_type="value", value_amount="a lot", value_amount_text="+1")
    ingest = tmp_path / "ingest"
    (ingest / "statements").mkdir(parents=True)
    pq.write_table(pa.Table.from_pylist(rows), ingest / "statements" / "odd.all.parquet")

    out = tmp_path / layout.STATEMENT_TABLE
    stats = _build(ingest, out, tmp_path / "work")

    bad = {rows[i]["statement_id"] for i in (3, 7, 11)}
    assert stats.input_rows == 60 and stats.skipped == 3 and set(stats.skipped_ids) == bad
    store = StatementStore(out)
    assert store.count() == 57 and store.stats == stats
    kept = pq.read_table(out, columns=["statement_id", "subject_label", "property_label"])
    assert not bad & set(kept["statement_id"].to_pylist())
    # an ingest with no entities knows no names: labels are None, not the ids
    assert kept["subject_label"].null_count == kept["property_label"].null_count == 57


def test_no_wikidata_input_gives_an_empty_file(tmp_path):
    (tmp_path / "ingest" / "pages").mkdir(parents=True)
    out = tmp_path / layout.STATEMENT_TABLE
    stats = _build(tmp_path / "ingest", out, tmp_path / "work")
    assert stats.statements == stats.input_rows == stats.files == 0
    assert pq.read_schema(out).remove_metadata() == arrow_schema(TypedStatement).remove_metadata()
    store = StatementStore(out)
    assert store.count() == 0 and store.lookup(["Q31"]) == []


def test_a_version_built_before_the_stage_says_to_rebuild(tmp_path, reader):
    old = tmp_path / reader.version
    old.mkdir()
    # such a version also predates the manifest's file list, which would name the missing files at open
    manifest = reader.manifest.model_copy(update={"files": {}})
    (old / "manifest.json").write_text(manifest.model_dump_json())
    stale = IndexReader(old)
    assert not stale.has_statements and reader.has_statements
    with pytest.raises(FileNotFoundError, match=r"statements\.parquet.*hqa build"):
        _ = stale.statements
