"""The plain BM25 baseline every evaluation is compared with: one Tantivy document per passage and one per
table row, the question as the query, nothing else.

The engine's own BM25 index holds evidence *windows* (passages cut at ~100 words so that they fit the
encoder) with their context prefix; the baseline must not inherit that choice, or the report would
compare the engine with a weaker straw man. So the harness rebuilds whole passages from the windows of
the index version it evaluates (grouped by page, section and passage order, in window order) and indexes
them beside the table rows, KG statements and infobox fields as they are. Plain means: Tantivy's default
tokenizer (no stemming), one text field, no title field, no boosts, no filters.

The index is built once per index version into the harness's cache folder (a few seconds on the full
OTT-QA corpus) and reused by later runs.
"""

from __future__ import annotations

import shutil
import time
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import tantivy

from index import layout
from index.tantivy_text import safe_query_text, top_docs
from ingest.progress import progress

DOC_PREFIX = "base:"
"""Baseline document ids start with this, so they never collide with evidence ids in a trace."""


@dataclass(frozen=True)
class BaselineHit:
    doc_id: str
    text: str
    source_type: str
    table_id: str | None


def baseline_documents(version_dir: Path) -> pl.DataFrame:
    """One row per baseline document: passages re-joined from their windows, every other row as it is.

    Columns: ``doc_id``, ``source_type``, ``text``, ``table_id``. A later window's context prefix
    ('Page / Section: ') repeats the first window's and is dropped when the windows are joined.
    """
    files = sorted((Path(version_dir) / layout.EVIDENCE).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no evidence files under {version_dir / layout.EVIDENCE}")
    frame = (
        pl.concat(
            [pl.read_parquet(f, columns=["evidence_id", "source_type", "text", "provenance"]) for f in files]
        )
        .unique("evidence_id", keep="first", maintain_order=True)
        .unnest("provenance")
    )
    text = frame.filter(pl.col("source_type") == "text").with_columns(
        pl.col("section_path").list.join(" / ").alias("section"), pl.col("window").fill_null(0)
    )
    passages = (
        text.sort("window")
        .group_by(["source", "page_id", "section", "passage_order"], maintain_order=True)
        .agg(pl.col("evidence_id").first(), pl.col("text"))
        .with_columns(pl.col("text").map_elements(_join_windows, return_dtype=pl.String))
        .select(
            pl.col("evidence_id"),
            pl.lit("text").alias("source_type"),
            "text",
            pl.lit(None, pl.String).alias("table_id"),
        )
    )
    others = frame.filter(pl.col("source_type") != "text").select(
        "evidence_id", "source_type", "text", "table_id"
    )
    docs = pl.concat([passages, others])
    return docs.with_columns((pl.lit(DOC_PREFIX) + pl.col("evidence_id")).alias("doc_id")).drop("evidence_id")


def _join_windows(windows: pl.Series) -> str:
    texts = windows.to_list()
    head = texts[0]
    prefix, sep, _ = head.partition(": ")
    joined = [head]
    for later in texts[1:]:
        joined.append(later[len(prefix) + len(sep) :] if sep and later.startswith(prefix + sep) else later)
    return " ".join(joined)


def _schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("doc_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("source_type", stored=True, tokenizer_name="raw")
    builder.add_text_field("table_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("text", stored=True, tokenizer_name="default")
    return builder.build()


class PlainBm25:
    """The baseline index of one index version; searchers are cheap and thread-safe."""

    def __init__(self, path: Path):
        self.path = path
        self._index = tantivy.Index.open(str(path))

    @classmethod
    def open_or_build(cls, version_dir: Path, cache_root: Path) -> PlainBm25:
        """The baseline for ``version_dir`` under ``cache_root/<version>``, built first if missing."""
        version_dir = Path(version_dir).resolve()
        path = Path(cache_root) / version_dir.name
        if not (path / "complete").exists():
            build_plain_bm25(version_dir, path)
        return cls(path)

    def search(self, question: str, k: int) -> list[BaselineHit]:
        words = safe_query_text(question)
        if not words:
            return []
        searcher = self._index.searcher()
        hits = []
        for _, doc in top_docs(searcher, self._index.parse_query(words, ["text"]), k, "doc_id"):
            table_id = doc["table_id"][0] if doc["table_id"] else None
            hits.append(
                BaselineHit(doc["doc_id"][0], doc["text"][0], doc["source_type"][0], table_id or None)
            )
        return hits


def build_plain_bm25(version_dir: Path, path: Path) -> None:
    """Index the baseline documents into ``path`` (replaced); a ``complete`` marker ends a good build."""
    started = time.perf_counter()
    if path.exists():
        shutil.rmtree(path)
    path.mkdir(parents=True)
    docs = baseline_documents(version_dir)
    index = tantivy.Index(_schema(), path=str(path))
    writer = index.writer(heap_size=256_000_000, num_threads=2)
    bar = progress("baseline bm25", total=docs.height, unit="doc", unit_scale=True)
    for batch in docs.iter_slices(20_000):
        for doc_id, source_type, text, table_id in batch.select(
            "doc_id", "source_type", "text", "table_id"
        ).iter_rows():
            writer.add_document(
                tantivy.Document(doc_id=doc_id, source_type=source_type, text=text, table_id=table_id or "")
            )
        bar.update(batch.height)
    writer.commit()
    writer.wait_merging_threads()
    bar.close()
    (path / "complete").write_text(f"{docs.height} documents in {time.perf_counter() - started:.1f} s\n")


__all__ = ["DOC_PREFIX", "BaselineHit", "PlainBm25", "baseline_documents", "build_plain_bm25"]
