"""The entity-linking table: every name an entity goes by, with P(entity | mention) and popularity.

Names come from Wikidata labels and aliases, Wikipedia titles, redirects and link anchor texts; anchor
counts give the prior (how often "Einstein" links to Albert Einstein rather than elsewhere). The pairs
are stored as Parquet (built by ``index.entities``) and in a small Tantivy index, so the query engine
can look a mention up exactly, in normalized form, or fuzzily, in milliseconds without loading the table.
"""

from __future__ import annotations

import re
import time
import unicodedata
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import duckdb
import pyarrow.parquet as pq
import tantivy
from pydantic import BaseModel

from index.duck import record_batches, sql_path
from index.tantivy_text import safe_query_text

SOURCE_RANK = {"label": 0, "title": 1, "alias": 2, "redirect": 3, "anchor": 4}
MAX_ALIAS_CHARS = 200
_NON_WORD = re.compile(r"[\W_]+", re.UNICODE)


def normalize_mention(text: str) -> str:
    """Casefolded, accents removed, punctuation as single spaces: 'Zürich ' and 'zurich' meet."""
    decomposed = unicodedata.normalize("NFKD", text)
    stripped = "".join(c for c in decomposed if not unicodedata.combining(c))
    return _NON_WORD.sub(" ", stripped.casefold()).strip()


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


ALIAS_INDEX_SQL = """
WITH entities AS (
    SELECT entity_id, arg_max(label, file_row_number) AS label,
           arg_max(popularity, file_row_number) AS popularity
    FROM read_parquet({entities}, file_row_number=true) GROUP BY entity_id
)
SELECT a.alias, a.alias_norm, a.entity_id, a.prior,
       coalesce(e.label, a.entity_id) AS label, coalesce(e.popularity, 0.0) AS popularity
FROM read_parquet({aliases}, file_row_number=true) a LEFT JOIN entities e USING (entity_id)
ORDER BY a.file_row_number
"""


def build_alias_index(
    aliases: Path,
    entities: Path,
    out_dir: Path,
    con: duckdb.DuckDBPyConnection,
    batch_rows: int = 50_000,
    heap_bytes: int = 128_000_000,
) -> AliasStats:
    """A Tantivy index of the alias table (in its order), each alias with its entity's label and
    popularity (joined by DuckDB; an entity without a record is named by its id, popularity 0)."""
    out_dir.mkdir(parents=True, exist_ok=False)
    started = time.perf_counter()
    index = tantivy.Index(alias_schema(), path=str(out_dir))
    writer = index.writer(heap_size=max(15_000_000, heap_bytes), num_threads=1)
    sql = ALIAS_INDEX_SQL.format(aliases=sql_path(aliases), entities=sql_path(entities))
    rows = 0
    for batch in record_batches(con, sql, rows=batch_rows):
        for alias, norm, eid, prior, label, popularity in zip(
            *(batch.column(c).to_pylist() for c in batch.schema.names), strict=True
        ):
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
        rows += batch.num_rows
    writer.commit()
    writer.wait_merging_threads()
    entity_count = pq.ParquetFile(entities).metadata.num_rows
    return AliasStats(aliases=rows, entities=entity_count, seconds=round(time.perf_counter() - started, 3))


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
