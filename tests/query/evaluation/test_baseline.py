"""The plain BM25 baseline: whole passages re-joined from the index's windows, one document per table row."""

from __future__ import annotations

import polars as pl

from query.evaluation.baseline import DOC_PREFIX, PlainBm25, baseline_documents


def _evidence(version_dir) -> pl.DataFrame:
    files = sorted((version_dir / "evidence").glob("*.parquet"))
    frame = pl.concat(
        [pl.read_parquet(f, columns=["evidence_id", "source_type", "text", "provenance"]) for f in files]
    )
    return frame.unique("evidence_id").unnest("provenance")


def test_passages_are_whole_and_other_rows_stay_as_they_are(sample_index) -> None:
    _, result = sample_index
    evidence = _evidence(result.version_dir)
    docs = baseline_documents(result.version_dir)
    text = evidence.filter(pl.col("source_type") == "text")
    passages = text.select(
        "source", "page_id", pl.col("section_path").list.join("/"), "passage_order"
    ).unique()
    assert docs.filter(pl.col("source_type") == "text").height == passages.height
    for source_type in ("kg", "table", "infobox"):
        assert (
            docs.filter(pl.col("source_type") == source_type).height
            == evidence.filter(pl.col("source_type") == source_type).height
        )
    assert docs["doc_id"].str.starts_with(DOC_PREFIX).all() and docs["doc_id"].n_unique() == docs.height
    # a split passage: its windows in order, the context prefix once
    split = text.filter(pl.col("window") == 1).row(0, named=True)
    key = (split["source"], split["page_id"], split["passage_order"], split["section_path"])
    windows = (
        text.filter(
            (pl.col("source") == key[0])
            & (pl.col("page_id") == key[1])
            & (pl.col("passage_order") == key[2])
            & (pl.col("section_path") == key[3])
        )
        .sort("window")["text"]
        .to_list()
    )
    prefix = windows[0].split(": ", 1)[0] + ": "
    whole = windows[0] + " " + " ".join(w.removeprefix(prefix) for w in windows[1:])
    assert whole in docs["text"].to_list()


def test_search_returns_whole_documents_and_table_ids(sample_index, tmp_path) -> None:
    _, result = sample_index
    baseline = PlainBm25.open_or_build(result.version_dir, tmp_path)
    hits = baseline.search("interior decorator Sunrise 1927/28", 5)
    assert hits and hits[0].source_type == "table" and hits[0].table_id
    assert "Rochus Gliese" in " ".join(h.text for h in hits)
    assert baseline.search("+:()", 5) == []
    again = PlainBm25.open_or_build(result.version_dir, tmp_path)  # built once, then reused
    assert (again.path / "complete").stat().st_mtime == (baseline.path / "complete").stat().st_mtime
