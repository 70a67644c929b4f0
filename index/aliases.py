"""The entity-linking table: every name an entity goes by, with P(entity | mention) and popularity.

Names come from Wikidata labels and aliases, Wikipedia titles, redirects and link anchor texts; anchor
counts give the prior (how often "Einstein" links to Albert Einstein rather than elsewhere). The pairs
are stored as Parquet and in a small Tantivy index, so the query engine can look a mention up exactly,
in normalized form, or fuzzily, in milliseconds without loading the table.
"""

from __future__ import annotations

import math
import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import polars as pl
import pyarrow as pa
import tantivy
from pydantic import BaseModel

from index.lexicon import Lexicon, read_table
from index.tantivy_text import safe_query_text
from ingest.parquet_sink import rows_to_table
from schemas.arrow import arrow_schema
from schemas.evidence import Alias, EntityRecord

SOURCE_RANK = {"label": 0, "title": 1, "alias": 2, "redirect": 3, "anchor": 4}
MAX_ALIAS_CHARS = 200
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_mention(text: str) -> str:
    """Casefolded, accents removed, punctuation as single spaces: 'Zürich ' and 'zurich' meet."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", stripped.casefold()).strip()


def entity_records(lexicon: Lexicon, ingest_dir: Path) -> pa.Table:
    """One ``EntityRecord`` per Wikidata entity and per article page without a Wikidata id."""
    inlinks: dict[str, int] = {}
    links = read_table(ingest_dir, "links", ["target_title"])
    if links is not None:
        for title, count in links.group_by("target_title").len().iter_rows():
            entity = lexicon.entity_for_title(title)
            inlinks[entity] = inlinks.get(entity, 0) + count
    rows = []
    for qid, sitelinks in lexicon.sitelinks.items():
        rows.append(
            (qid, lexicon.name(qid), lexicon.descriptions.get(qid), lexicon.page_title_for(qid), sitelinks)
        )
    for title in lexicon.articles:
        if title not in lexicon.title_entities:
            rows.append((title, title, None, title, 0))
    max_sitelinks = max((r[4] for r in rows), default=0)
    max_inlinks = max(inlinks.values(), default=0)

    def popularity(sitelinks: int, links_in: int) -> float:
        a = math.log1p(sitelinks) / math.log1p(max_sitelinks) if max_sitelinks else 0.0
        b = math.log1p(links_in) / math.log1p(max_inlinks) if max_inlinks else 0.0
        return round(0.5 * a + 0.5 * b, 6)

    return rows_to_table(
        [
            {
                "entity_id": eid,
                "label": label,
                "description": desc,
                "page_title": page,
                "sitelinks": sitelinks,
                "inlinks": inlinks.get(eid, 0),
                "popularity": popularity(sitelinks, inlinks.get(eid, 0)),
            }
            for eid, label, desc, page, sitelinks in rows
        ],
        EntityRecord,
    )


def alias_table(lexicon: Lexicon, ingest_dir: Path) -> pa.Table:
    """(alias, entity) pairs from every naming source, counted, with the prior per normalized alias."""
    pairs: list[tuple[str, str, str, int]] = []
    for qid, label in lexicon.labels.items():
        pairs.append((label, qid, "label", 1))
        pairs.extend((alias, qid, "alias", 1) for alias in lexicon.aliases.get(qid, []))
    for title in lexicon.articles:
        pairs.append((title, lexicon.entity_for_title(title), "title", 1))
    for title in lexicon.redirects:
        pairs.append((title, lexicon.entity_for_title(title), "redirect", 1))
    frame = pl.DataFrame(pairs, schema=["alias", "entity_id", "source", "count"], orient="row")
    links = read_table(ingest_dir, "links", ["target_title", "anchor_text"])
    if links is not None:
        anchors = links.group_by(["anchor_text", "target_title"]).len("count")
        resolved = [lexicon.entity_for_title(t) for t in anchors["target_title"]]
        frame = pl.concat(
            [
                frame,
                anchors.select(
                    pl.col("anchor_text").alias("alias"),
                    pl.Series("entity_id", resolved),
                    pl.lit("anchor").alias("source"),
                    pl.col("count").cast(pl.Int64),
                ),
            ]
        )
    frame = frame.filter(
        (pl.col("alias").str.strip_chars().str.len_chars() > 0)
        & (pl.col("alias").str.len_chars() <= MAX_ALIAS_CHARS)
    )
    frame = frame.with_columns(
        pl.Series("alias_norm", [normalize_mention(a) for a in frame["alias"]]),
        pl.col("source").replace_strict(SOURCE_RANK, return_dtype=pl.Int8).alias("_rank"),
    ).filter(pl.col("alias_norm") != "")
    grouped = (
        frame.sort("_rank")
        .group_by(["alias_norm", "entity_id"], maintain_order=True)
        .agg(pl.col("alias").first(), pl.col("source").first(), pl.col("count").sum())
        .with_columns((pl.col("count") / pl.col("count").sum().over("alias_norm")).alias("prior"))
        .sort(["alias_norm", "prior"], descending=[False, True])
    )
    return grouped.select(list(arrow_schema(Alias).names)).to_arrow().cast(arrow_schema(Alias))


def alias_schema() -> tantivy.Schema:
    builder = tantivy.SchemaBuilder()
    builder.add_text_field("alias", stored=True, tokenizer_name="default")
    builder.add_text_field("alias_exact", stored=False, tokenizer_name="raw")
    builder.add_text_field("alias_norm", stored=True, tokenizer_name="raw")
    builder.add_text_field("entity_id", stored=True, tokenizer_name="raw")
    builder.add_text_field("label", stored=True, tokenizer_name="raw")
    builder.add_float_field("prior", stored=True)
    builder.add_float_field("popularity", stored=True)
    return builder.build()


class AliasStats(BaseModel):
    aliases: int
    entities: int
    seconds: float


def build_alias_index(aliases: pa.Table, entities: pa.Table, out_dir: Path) -> AliasStats:
    out_dir.mkdir(parents=True, exist_ok=False)
    started = time.perf_counter()
    info = {
        eid: (label, pop)
        for eid, label, pop in zip(
            entities["entity_id"].to_pylist(),
            entities["label"].to_pylist(),
            entities["popularity"].to_pylist(),
            strict=True,
        )
    }
    index = tantivy.Index(alias_schema(), path=str(out_dir))
    writer = index.writer(heap_size=128_000_000, num_threads=1)
    for alias, norm, eid, prior in zip(
        *(aliases[c].to_pylist() for c in ("alias", "alias_norm", "entity_id", "prior")), strict=True
    ):
        label, popularity = info.get(eid, (eid, 0.0))
        writer.add_document(
            tantivy.Document(
                alias=alias,
                alias_exact=alias,
                alias_norm=norm,
                entity_id=eid,
                label=label,
                prior=float(prior),
                popularity=float(popularity),
            )
        )
    writer.commit()
    writer.wait_merging_threads()
    return AliasStats(
        aliases=aliases.num_rows, entities=entities.num_rows, seconds=round(time.perf_counter() - started, 3)
    )


MatchKind = Literal["exact", "normalized", "fuzzy"]


@dataclass(frozen=True)
class AliasHit:
    entity_id: str
    label: str
    alias: str
    match: MatchKind
    prior: float
    popularity: float
    score: float


class AliasIndex:
    """Mention -> candidate entities: exact, then normalized, then fuzzy (edit distance 1 per word)."""

    MATCH_WEIGHT: dict[str, float] = {"exact": 1.0, "normalized": 0.9, "fuzzy": 0.5}  # noqa: RUF012

    def __init__(self, path: Path):
        self._index = tantivy.Index.open(str(path))
        self._schema = self._index.schema

    def count(self) -> int:
        return self._index.searcher().num_docs

    def lookup(self, mention: str, k: int = 10, *, fuzzy: bool = True) -> list[AliasHit]:
        """Up to k candidate entities, best first (match kind, then prior and popularity)."""
        norm = normalize_mention(mention)
        if not norm:
            return []
        best: dict[str, AliasHit] = {}
        queries: list[tuple[MatchKind, tantivy.Query]] = [
            ("exact", tantivy.Query.term_query(self._schema, "alias_exact", mention.strip())),
            ("normalized", tantivy.Query.term_query(self._schema, "alias_norm", norm)),
        ]
        words = safe_query_text(norm).split()
        if fuzzy and words:
            queries.append(("fuzzy", self._fuzzy(words)))
        searcher = self._index.searcher()
        for kind, query in queries:
            for _, address in searcher.search(query, max(k * 5, 50)).hits:
                doc = searcher.doc(address)
                eid = doc["entity_id"][0]
                prior, popularity = doc["prior"][0], doc["popularity"][0]
                if kind == "fuzzy" and len(doc["alias_norm"][0].split()) > 2 * len(words) + 1:
                    continue  # a long title that merely contains the words is not a name for them
                score = self.MATCH_WEIGHT[kind] * (0.7 * prior + 0.3 * popularity + 0.1)
                if eid not in best or best[eid].score < score:
                    best[eid] = AliasHit(
                        eid, doc["label"][0], doc["alias"][0], kind, prior, popularity, score
                    )
            if len(best) >= k and kind != "exact":
                break
        return sorted(best.values(), key=lambda h: (-h.score, h.entity_id))[:k]

    def _fuzzy(self, words: list[str]) -> tantivy.Query:
        """Every word must match, allowing one edit in words of five letters or more."""
        clauses = [
            (
                tantivy.Occur.Must,
                tantivy.Query.fuzzy_term_query(self._schema, "alias", w, distance=1 if len(w) >= 5 else 0),
            )
            for w in words
        ]
        return tantivy.Query.boolean_query(clauses)
