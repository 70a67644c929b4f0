"""Top-k from Tantivy is a function of the documents, not of the order a writer stored them in."""

from __future__ import annotations

from pathlib import Path

import tantivy

from index.tantivy_text import TIE_MARGIN, safe_query_text, top_docs


def _index(path: Path, ids: list[str], texts: list[str]) -> tantivy.Index:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=True)
    path.mkdir()
    index = tantivy.Index(builder.build(), path=str(path))
    writer = index.writer(heap_size=15_000_000, num_threads=1)
    for doc_id, text in zip(ids, texts, strict=True):
        writer.add_document(tantivy.Document(doc_id=doc_id, text=text))
    writer.commit()
    writer.wait_merging_threads()
    index.reload()
    return index


def test_tied_scores_come_back_in_id_order_whatever_the_insertion_order(tmp_path: Path) -> None:
    ids = [f"row{i:03d}" for i in range(40)]
    texts = ["Belgium population census"] * 40  # every document scores the same
    forward = _index(tmp_path / "forward", ids, texts)
    backward = _index(tmp_path / "backward", ids[::-1], texts[::-1])
    query_words = safe_query_text("Belgium's population?")

    def top(index: tantivy.Index, k: int) -> list[str]:
        hits = top_docs(index.searcher(), index.parse_query(query_words, ["text"]), k, "doc_id")
        return [doc["doc_id"][0] for _, doc in hits]

    assert top(forward, 10) == top(backward, 10) == ids[:10]
    assert len(top(forward, 100)) == 40  # fewer matches than k: all of them, still in order


def test_higher_scores_still_come_first(tmp_path: Path) -> None:
    ids = ["a", "b", "c"]
    index = _index(tmp_path / "idx", ids, ["population", "population population population", "census"])
    hits = top_docs(index.searcher(), index.parse_query("population", ["text"]), 5, "doc_id")
    assert [doc["doc_id"][0] for _, doc in hits] == ["b", "a"]
    assert hits[0][0] > hits[1][0]


def test_ties_reaching_past_k_are_read_before_the_cut(tmp_path: Path) -> None:
    n = TIE_MARGIN // 2 + 20
    ids = [f"r{i:03d}" for i in range(n)]
    index = _index(tmp_path / "idx", ids[::-1], ["same words"] * n)
    hits = top_docs(index.searcher(), index.parse_query("same", ["text"]), 5, "doc_id")
    assert [doc["doc_id"][0] for _, doc in hits] == ids[:5]
