"""BM25 over evidence with Tantivy: the text searched, source type and entity ids as exact-match filter
fields.

Only the text is searched: it already starts with its context ('Page / Section: …'), so the page title
counts once, as in any document. Searching a boosted title field as well counted it two or three times
and let every row of a page whose title shares a word with the question crowd out the rows that answer
it: on OTT-QA dev (first 500 questions) answer presence at 30 fell from 0.49 to 0.40 with title boost 2.

The English stemmer is used for text and title ("populations" finds "population"); ids and source
types use the raw tokenizer so a filter matches exactly. The index stores evidence id, source type,
title and text, so a hit can be shown without a second lookup.
"""

from __future__ import annotations

import math
import time
from collections.abc import Iterable
from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import tantivy
from pydantic import BaseModel

from index.tantivy_text import safe_query_text, top_docs
from ingest.gc_pause import gc_paused
from ingest.progress import progress
from schemas.evidence import SOURCE_TYPES

WRITER_HEAP_BYTES = 256_000_000
COLUMNS = ["evidence_id", "source_type", "title", "text", "entity_ids", "page_title"]


def en_stem_analyzer() -> tantivy.TextAnalyzer:
    """Tantivy's built-in ``en_stem`` tokenizer, rebuilt to turn words into the terms the text field
    holds (a builder builds once: each index gets its own)."""
    return (
        tantivy.TextAnalyzerBuilder(tantivy.Tokenizer.simple())
        .filter(tantivy.Filter.remove_long(40))
        .filter(tantivy.Filter.lowercase())
        .filter(tantivy.Filter.stemmer("english"))
        .build()
    )


def evidence_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("evidence_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("source_type", stored=True, tokenizer_name="raw")
    builder.add_text_field("title", stored=True, tokenizer_name="en_stem")
    builder.add_text_field("text", stored=True, tokenizer_name="en_stem")
    builder.add_text_field("entity_ids", stored=False, tokenizer_name="raw")
    builder.add_text_field("page_title", stored=True, tokenizer_name="raw")
    return builder.build()


class Bm25Stats(BaseModel):
    documents: int
    seconds: float
    docs_per_second: float


def build_bm25(
    batches: Iterable[pa.RecordBatch],
    out_dir: Path,
    *,
    total: int | None = None,
    heap_bytes: int = WRITER_HEAP_BYTES,
    threads: int = 2,
) -> Bm25Stats:
    """Index evidence rows (each id once; batches of the ``COLUMNS``) into a new Tantivy index at
    ``out_dir``. The writer's heap bounds what Tantivy holds before it writes a segment.

    The collector is paused while documents are built: each batch makes ~150k short-lived Python values,
    none in a reference cycle, and the collections they set off cost the Python thread CPU that Tantivy's
    two indexing threads need on a 2-core machine (~15 % more documents/s in A/B runs on the OTT-QA
    evidence). Documents as JSON lines serialized by polars were no faster: Tantivy then parses them on
    the same thread."""
    out_dir.mkdir(parents=True, exist_ok=False)
    started = time.perf_counter()
    index = tantivy.Index(evidence_schema(), path=str(out_dir))
    writer = index.writer(heap_size=max(threads * 15_000_000, heap_bytes), num_threads=threads)
    bar = progress("bm25", total=total, unit="doc", unit_scale=True)
    documents = 0
    with gc_paused():  # see the docstring
        for batch in batches:
            for ev_id, source_type, title, text, entity_ids, page_title in zip(
                *(batch.column(c).to_pylist() for c in COLUMNS), strict=True
            ):
                writer.add_document(
                    tantivy.Document(
                        evidence_id=ev_id,
                        source_type=source_type,
                        title=title,
                        text=text,
                        entity_ids=entity_ids,
                        page_title=page_title or "",
                    )
                )
            documents += batch.num_rows
            bar.update(batch.num_rows)
    writer.commit()
    writer.wait_merging_threads()
    bar.close()
    seconds = time.perf_counter() - started
    return Bm25Stats(documents=documents, seconds=round(seconds, 3), docs_per_second=documents / seconds)


@dataclass(frozen=True)
class Bm25Hit:
    evidence_id: str
    score: float
    source_type: str
    title: str
    text: str
    page_title: str | None


class Bm25Index:
    """A read-only BM25 index; searchers are cheap and safe to use from several threads."""

    def __init__(self, path: Path):
        self.path = Path(path)
        self._index = tantivy.Index.open(str(self.path))
        self._schema = self._index.schema
        self._searcher = self._index.searcher()  # the index is read-only: one searcher for the statistics
        self._analyzer = en_stem_analyzer()
        self._docs = self._searcher.num_docs
        self._doc_freqs: dict[str, int] = {}  # term -> documents holding it; terms of candidates recur

    def count(self) -> int:
        return self._docs

    def specificity(self, text: str) -> float:
        """How rare the rarest word of ``text`` is in the indexed text: its idf over the largest possible
        idf, from 0 (in every document, or no word at all) to 1 (in none).

        A reader scores answer candidates by it: "American" or "Football Club" sit in tens of thousands
        of rows and are seldom what a question asks for; "Clay Helton" has a word few rows hold.
        """
        terms = self._analyzer.analyze(text)
        if not terms or not self._docs:
            return 0.0
        rarest = min(self._doc_freq(term) for term in terms)
        return max(0.0, math.log((self._docs + 1) / (rarest + 1)) / math.log(self._docs + 1))

    def occurs(self, text: str) -> bool:
        """Whether every word of ``text`` is in some indexed row: a name the text knows, whether or not
        an entity carries it (a question's name that is in no alias may still be in a passage)."""
        terms = self._analyzer.analyze(text)
        return bool(terms) and all(self._doc_freq(term) > 0 for term in terms)

    def _doc_freq(self, term: str) -> int:
        freq = self._doc_freqs.get(term)
        if freq is None:
            freq = self._doc_freqs[term] = self._searcher.doc_freq("text", term)
        return freq

    def search(
        self,
        question: str,
        k: int = 10,
        *,
        source_types: list[str] | None = None,
        boost_entities: list[str] | None = None,
        entity_boost: float = 1.0,
    ) -> list[Bm25Hit]:
        """Top-k evidence for free text; optional source-type filter and a boost for linked entities."""
        words = safe_query_text(question)
        if not words:
            return []
        query = self._index.parse_query(words, ["text"])
        clauses = [(tantivy.Occur.Must, query)]
        if source_types:
            unknown = set(source_types) - set(SOURCE_TYPES)
            if unknown:
                raise ValueError(f"unknown source types {sorted(unknown)}; known: {SOURCE_TYPES}")
            clauses.append((tantivy.Occur.Must, self._any_term("source_type", source_types)))
        if boost_entities:
            boost = tantivy.Query.boost_query(self._any_term("entity_ids", boost_entities), entity_boost)
            clauses.append((tantivy.Occur.Should, boost))
        if len(clauses) > 1:
            query = tantivy.Query.boolean_query(clauses)
        searcher = self._index.searcher()
        hits = []
        for score, doc in top_docs(searcher, query, k, "evidence_id"):
            hits.append(
                Bm25Hit(
                    evidence_id=doc["evidence_id"][0],
                    score=score,
                    source_type=doc["source_type"][0],
                    title=doc["title"][0],
                    text=doc["text"][0],
                    page_title=(doc["page_title"] or [""])[0] or None,
                )
            )
        return hits

    def _any_term(self, field: str, values: list[str]) -> tantivy.Query:
        return tantivy.Query.term_set_query(self._schema, field, list(values))
