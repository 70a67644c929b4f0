"""The BM25 index holds each evidence row exactly as given (newlines, quotes, line separators, a missing
page title) and finds it by its text, its source type and its entities."""

from __future__ import annotations

from pathlib import Path

import pyarrow as pa
import tantivy

from index.bm25 import COLUMNS, Bm25Index, build_bm25

ROWS = {
    "evidence_id": ["e1", "e2", "e3"],
    "source_type": ["text", "table", "text"],
    "title": ["Zürich / History", 'The "Quoted" Page', "Line\u2028separated"],
    "text": [
        "Zürich: founded by the Romans\nas Turicum, a customs post.",
        'Population table: 1,234 people; "census" \\ backslash \u0085 next-line 😀',
        "A text with a form feed\f and a tab\tinside.",
    ],
    "entity_ids": [["Q72"], [], ["Q1", "Q2"]],
    "page_title": ["Zürich", None, "Line separated"],
}


def _batch() -> pa.RecordBatch:
    schema = pa.schema(
        [(name, pa.list_(pa.string()) if name == "entity_ids" else pa.string()) for name in COLUMNS]
    )
    return pa.RecordBatch.from_pydict(ROWS, schema=schema)


def _expected(row: int) -> dict:
    return {name: ROWS[name][row] if name != "page_title" else ROWS[name][row] or "" for name in COLUMNS}


def test_the_index_stores_every_field_as_given_and_finds_by_text_source_and_entity(tmp_path: Path) -> None:
    stats = build_bm25([_batch()], tmp_path / "bm25", threads=1)
    assert stats.documents == 3
    index = tantivy.Index.open(str(tmp_path / "bm25"))
    searcher = index.searcher()
    stored = {}
    for _, address in searcher.search(tantivy.Query.all_query(), 10).hits:
        doc = searcher.doc(address).to_dict()
        stored[doc["evidence_id"][0]] = doc
    for i, evidence_id in enumerate(ROWS["evidence_id"]):
        doc, row = stored[evidence_id], _expected(i)
        for name in ("source_type", "title", "text", "page_title"):
            assert doc[name] == [row[name]], name
    bm25 = Bm25Index(tmp_path / "bm25")
    assert [h.evidence_id for h in bm25.search("Turicum customs")] == ["e1"]
    assert [h.evidence_id for h in bm25.search("census population", source_types=["text"])] == []
    assert [h.page_title for h in bm25.search("census population")] == [None]  # no page title: None again
    boosted = bm25.search("text", boost_entities=["Q2"], entity_boost=5.0)
    assert boosted[0].evidence_id == "e3"
