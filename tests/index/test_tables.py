"""The tables stage: every table of the sample, row by row with its cells, looked up by table id.

Expected rows are read straight from the bundled OTT-QA tables JSON, not through the ingest.
"""

from __future__ import annotations

import gzip
import json

import pyarrow.parquet as pq
import pytest

from index import layout
from index.reader import IndexReader
from index.tables import ROW_GROUP_ROWS
from tests.conftest import OTTQA


@pytest.fixture(scope="module")
def reader(sample_index) -> IndexReader:
    settings, _ = sample_index
    return IndexReader.open(settings.index_dir)


@pytest.fixture(scope="module")
def raw_tables() -> dict[str, dict]:
    with gzip.open(OTTQA / "tables.json.gz", "rt") as f:
        return json.load(f)


def test_every_ottqa_table_comes_back_whole_in_row_order(reader, raw_tables) -> None:
    assert reader.has_tables
    for table_id, raw in list(raw_tables.items())[:40]:
        rows = reader.tables.rows(table_id)
        assert [r.row_index for r in rows] == list(range(len(raw["data"]))), table_id
        headers = [" ".join(h[0].split()) for h in raw["header"]]
        for row, cells in zip(rows, raw["data"], strict=True):
            assert [" ".join(c.text.split()) for c in row.cells] == [" ".join(c[0].split()) for c in cells]
            assert [" ".join(c.header.split()) for c in row.cells] == headers
        linked = {
            url.removeprefix("/wiki/").replace("_", " ")
            for cells in raw["data"]
            for c in cells
            for url in c[1]
        }
        stored = {link.target for row in rows for cell in row.cells for link in cell.links}
        assert {t.casefold() for t in stored} <= {t.casefold() for t in linked}


def test_file_is_sorted_by_table_and_row_and_counts_match_the_manifest(reader, sample_index) -> None:
    _, result = sample_index
    table = pq.read_table(reader.path / layout.TABLE_ROWS, columns=["table_id", "row_index"])
    keys = list(zip(table["table_id"].to_pylist(), table["row_index"].to_pylist(), strict=True))
    assert keys == sorted(keys) and len(set(keys)) == len(keys)  # one row per (table, row)
    counts = result.manifest.counts
    assert counts["tables_rows"] == reader.tables.count() == table.num_rows
    assert counts["tables_tables"] == len({k[0] for k in keys})
    metadata = pq.ParquetFile(reader.path / layout.TABLE_ROWS).metadata
    assert all(metadata.row_group(i).num_rows <= ROW_GROUP_ROWS for i in range(metadata.num_row_groups))


def test_an_unknown_table_has_no_rows(reader) -> None:
    assert reader.tables.rows("No_such_table_0") == []
    assert reader.tables.rows("") == []


def test_each_row_names_the_evidence_that_says_it(reader) -> None:
    import polars as pl

    evidence = pl.read_parquet(reader.evidence_files()).filter(pl.col("source_type") == "table")
    said = {
        r["evidence_id"]: (r["provenance"]["table_id"], r["provenance"]["row_index"], r["text"])
        for r in evidence.iter_rows(named=True)
    }
    rows = pq.read_table(reader.path / layout.TABLE_ROWS).to_pylist()
    assert rows and all(r["evidence_id"] in said for r in rows)  # the sample has no empty rows
    exact = 0
    for r in rows:
        table_id, row_index, text = said[r["evidence_id"]]
        assert table_id == r["table_id"]
        # a row's evidence says each of its cells (two rows with the same cells share one evidence id)
        assert all(
            " ".join(c["text"].split()) in " ".join(text.split()) for c in r["cells"] if c["text"].strip()
        )
        exact += row_index == r["row_index"]
    assert exact > 0.95 * len(rows)
