"""OTT-QA adapter on the bundled slice of the real release."""

from __future__ import annotations

import gzip
import json
import shutil
from pathlib import Path

import polars as pl
import pytest

from ingest.ottqa import OttqaIngestOptions, ingest_ottqa, page_id_for
from tests.conftest import OTTQA


@pytest.fixture(scope="module")
def release() -> tuple[dict, dict]:
    with gzip.open(OTTQA / "tables.json.gz", "rt") as t, gzip.open(OTTQA / "passages.json.gz", "rt") as p:
        return json.load(t), json.load(p)


@pytest.fixture(scope="module")
def ottqa_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("ottqa")
    ingest_ottqa(OTTQA, out)
    return out


def test_every_table_row_and_passage_is_loaded(ottqa_out: Path, release: tuple[dict, dict]) -> None:
    tables, passages = release
    rows = pl.read_parquet(ottqa_out / "table_rows")
    assert rows.height == sum(len(t["data"]) for t in tables.values())
    assert set(rows["table_id"]) == set(tables)
    texts = pl.read_parquet(ottqa_out / "passages")
    lead = texts.filter(pl.col("section_path").list.len() == 0)
    assert set(passages.values()) <= set(lead["text"])


def test_table_cells_keep_headers_and_links(ottqa_out: Path, release: tuple[dict, dict]) -> None:
    tables, _ = release
    table_id, table = next(iter(tables.items()))
    rows = pl.read_parquet(ottqa_out / "table_rows").filter(pl.col("table_id") == table_id).sort("row_index")
    first = rows.to_dicts()[0]
    assert [c["header"] for c in first["cells"]] == [
        h[0] or f"Column {i + 1}" for i, h in enumerate(table["header"])
    ]
    assert [c["text"] for c in first["cells"]] == [cell[0] for cell in table["data"][0]]
    linked = [(c["text"], c["links"]) for c in first["cells"] if c["links"]]
    raw_linked = [(cell[0], cell[1]) for cell in table["data"][0] if cell[1]]
    assert len(linked) == len(raw_linked)
    assert first["page_title"] == table["title"] and first["page_id"] == page_id_for(table["title"])


def test_links_point_to_passage_pages(ottqa_out: Path) -> None:
    links = pl.read_parquet(ottqa_out / "links")
    pages = set(pl.read_parquet(ottqa_out / "pages")["title"])
    assert links.height > 1000
    assert links["target_title"].is_in(list(pages)).mean() > 0.9
    assert (links["source_kind"] == "table").all() and links["relation"].null_count() == 0


def test_a_broken_release_file_keeps_the_members_before_the_break(tmp_path: Path) -> None:
    release = tmp_path / "release"
    release.mkdir()
    shutil.copy(OTTQA / "tables.json.gz", release)
    text = gzip.decompress((OTTQA / "passages.json.gz").read_bytes()).decode()
    cut_at = len(text) // 2
    (release / "passages.json.gz").write_bytes(gzip.compress(text[:cut_at].encode()))
    summary = ingest_ottqa(release, tmp_path / "out", OttqaIngestOptions(max_error_rate=None))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").to_dicts()
    assert len(quarantine) == 1 and quarantine[0]["record_id"] == "passages.json.gz"
    assert 0 < cut_at - quarantine[0]["char_offset"] < 5000
    cut = text[:cut_at]
    separator = '", "/wiki/'
    complete = cut[: cut.rfind(separator)].count(separator) + 1  # members wholly before the cut
    assert summary.records_written == 40 + complete  # 40 tables, then the passages


def test_streamed_and_whole_file_paths_agree(ottqa_out: Path, tmp_path: Path) -> None:
    summary = ingest_ottqa(OTTQA, tmp_path, OttqaIngestOptions(max_in_memory_bytes=0))
    for table in ("pages", "passages", "table_rows", "links"):
        assert pl.read_parquet(tmp_path / table).equals(pl.read_parquet(ottqa_out / table)), table
    assert summary.quarantined == 0


def test_members_of_the_wrong_shape_or_text_are_quarantined_and_the_rest_kept(
    release: tuple[dict, dict], ottqa_out: Path, tmp_path: Path
) -> None:
    """Issue 17, found by tests/fuzz: a cell that is a number or null, a section title that is a
    list, a lone surrogate (a '\\ud800' escape, a byte that is not UTF-8) or a table index beyond 32 bits
    failed the Parquet write of the whole release (or raised AttributeError); a byte that is not UTF-8 also
    lost every member of its 1 MB read-ahead chunk, and thousands of nested '[' raised RecursionError."""
    tables, passages = release
    good_id, good = next(iter(tables.items()))
    bad_tables = {
        "Bad_number_0": {**good, "data": [[[12, []]]]},
        "Bad_null_link_0": {**good, "data": [[["x", [None]]]]},
        "Bad_section_0": {**good, "section_title": ["not", "text"]},
        "Bad_surrogate_0": {**good, "title": "\ud800"},
        "Bad_index_99999999999": good,
    }
    table_text = json.dumps({**bad_tables, **tables}).encode().replace(b"Bad_number_0", b"Bad_\xe9_0", 1)
    bad_passages = {"/wiki/Bad_escape": "\udfff", "/wiki/Bad_bytes": "BYTES", "/wiki/Bad_number": 3}
    passage_text = json.dumps({**bad_passages, **passages}).encode().replace(b"BYTES", b"\xff\xfe", 1)
    passage_text = passage_text[:-1] + b', "/wiki/Bad_nesting": ' + b"[" * 100_000 + b"]" * 100_000 + b"}"
    folder = tmp_path / "release"
    folder.mkdir()
    (folder / "tables.json.gz").write_bytes(gzip.compress(table_text))
    (folder / "passages.json.gz").write_bytes(gzip.compress(passage_text))
    summary = ingest_ottqa(folder, tmp_path / "out", OttqaIngestOptions(max_error_rate=None))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").to_dicts()
    assert [q["record_id"] for q in quarantine] == [
        "Bad_\\udce9_0",
        *list(bad_tables)[1:],
        *bad_passages,
        "passages.json.gz",
    ]
    assert "nested too deeply" in quarantine[-1]["error"]
    nesting = passage_text.decode(errors="surrogateescape").index("[" * 1000)
    assert quarantine[-1]["char_offset"] == nesting  # where the value too deep to read starts
    assert summary.records_written == len(tables) + len(passages)
    for table in ("pages", "passages", "table_rows", "links"):
        assert pl.read_parquet(tmp_path / "out" / table).equals(pl.read_parquet(ottqa_out / table)), table
    assert good_id in set(pl.read_parquet(tmp_path / "out" / "table_rows")["table_id"])
