"""Stage 2 of the query engine: candidate entities for each mention, ranked, never a single forced guess.

Candidates come from the alias index (exact, normalized, then fuzzy names with P(entity | alias));
the entity table adds descriptions and page titles. Each candidate is scored by a weighted mix

    score = (w_a * alias + w_p * popularity + w_c * context) / (w_a + w_p + w_c)

  - alias:      match weight x prior; exact 1.0, normalized 0.9, fuzzy 0.5 (``AliasIndex.MATCH_WEIGHT``),
                a fuzzy hit also times the share of the matched name's words the mention has;
  - popularity: the entity's log-scaled sitelinks and in-links, in [0, 1];
  - context:    how many of the question's other content words (not the mention's own) occur in the
                candidate's label, description and page title, saturating at ``CONTEXT_WORDS`` words
                (or at all of them for short questions).

Defaults 0.6 / 0.2 / 0.2: the name decides; popularity and context order namesakes (a "Robert"
described as a character moves up when the question speaks of a character).
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq

from index import layout
from index.aliases import AliasHit, AliasIndex, normalize_mention
from index.reader import IndexReader
from query.understand.properties import stem
from query.understand.settings import LinkingSettings
from query.understand.tokens import content_words
from schemas.query import EntityCandidate, LinkedMention, Mention

CONTEXT_WORDS = 3
"""Shared words at which the context signal saturates."""


@dataclass(frozen=True)
class EntityInfo:
    entity_id: str
    label: str
    description: str | None
    page_title: str | None
    popularity: float


class EntityTable:
    """The index's entity table, read once: Arrow columns plus one dict from entity id to row.

    The OTT-QA index holds ~180k entities; strings stay in Arrow buffers and are turned into Python
    objects only for the few candidates a question asks about. Read-only, so threads may share it.
    """

    COLUMNS = ("entity_id", "label", "description", "page_title", "popularity")

    def __init__(self, table: pa.Table):
        missing = [c for c in self.COLUMNS if c not in table.column_names]
        if missing:
            raise ValueError(f"entity table lacks columns {missing}: rebuild the index")
        self._label = table["label"].combine_chunks()
        self._description = table["description"].combine_chunks()
        self._page_title = table["page_title"].combine_chunks()
        self._popularity = table["popularity"].combine_chunks()
        self._rows = {eid: i for i, eid in enumerate(table["entity_id"].to_pylist())}
        items = pc.fill_null(pc.match_substring_regex(table["entity_id"], r"^Q\d+$"), False)
        paged = table.filter(pc.and_(items, pc.is_valid(table["page_title"])))
        # the Wikidata item whose Wikipedia page a page entity is (an evidence row links pages by title)
        self._item_of_page = dict(
            zip(paged["page_title"].to_pylist(), paged["entity_id"].to_pylist(), strict=True)
        )

    @classmethod
    def load(cls, path: Path) -> EntityTable:
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(f"entity table {path} not found: build the index first (hqa index build)")
        table = cls(pq.read_table(path, columns=list(cls.COLUMNS), use_threads=False))
        pa.default_memory_pool().release_unused()  # the Parquet decoder's scratch space
        return table

    @classmethod
    def from_reader(cls, reader: IndexReader) -> EntityTable:
        return cls.load(reader.path / layout.ENTITY_TABLE)

    def __len__(self) -> int:
        return len(self._rows)

    def __contains__(self, entity_id: str) -> bool:
        return entity_id in self._rows

    def item_of_page(self, title: str) -> str | None:
        """The Wikidata item whose English Wikipedia page is ``title``, if the index holds one."""
        return self._item_of_page.get(title)

    def get(self, entity_id: str) -> EntityInfo | None:
        row = self._rows.get(entity_id)
        if row is None:
            return None
        return EntityInfo(
            entity_id,
            self._label[row].as_py(),
            self._description[row].as_py(),
            self._page_title[row].as_py(),
            self._popularity[row].as_py() or 0.0,
        )

    def ids_matching(self, pattern: str, limit: int) -> list[str]:
        """Ids of entities whose label or description matches the regular expression ``pattern`` (RE2
        syntax), at most ``limit``, in table order: one vectorized pass over both columns."""
        hit = pc.or_(
            pc.fill_null(pc.match_substring_regex(self._label, pattern), False),
            pc.fill_null(pc.match_substring_regex(self._description, pattern), False),
        )
        rows = pc.indices_nonzero(hit).to_pylist()[:limit]
        ids = list(self._rows)
        return [ids[i] for i in rows]

    def description(self, entity_id: str) -> str | None:
        row = self._rows.get(entity_id)
        return None if row is None else self._description[row].as_py()


class EntityLinker:
    """Mentions -> ranked candidate entities; holds no mutable state, so threads may share it."""

    name = "aliases"

    def __init__(
        self,
        aliases: AliasIndex,
        entities: EntityTable | None = None,
        settings: LinkingSettings | None = None,
    ):
        self.aliases = aliases
        self.entities = entities
        self.settings = settings or LinkingSettings()
        s = self.settings
        self._total = s.alias_weight + s.popularity_weight + s.context_weight

    @classmethod
    def from_reader(cls, reader: IndexReader, settings: LinkingSettings | None = None) -> EntityLinker:
        """A linker over the reader's alias index and entity table (read once, here)."""
        return cls(reader.aliases, EntityTable.from_reader(reader), settings)

    def to_dict(self) -> dict:
        return {"name": self.name, **self.settings.model_dump()}

    def run(self, question: str, mentions: list[Mention], k: int | None = None) -> list[LinkedMention]:
        """Up to k candidates per mention, best first; a mention nothing matches keeps an empty list."""
        k = self.settings.k if k is None else k
        if k < 1:
            raise ValueError(f"k must be at least 1, got {k}")
        question_words = {stem(w) for w in content_words(question)}
        by_text: dict[str, list[EntityCandidate]] = {}  # local to this call: a question may repeat a name
        linked = []
        for mention in mentions:
            if mention.text not in by_text:
                context_words = question_words - {stem(w) for w in content_words(mention.text)}
                hits = self.aliases.lookup(
                    mention.text, k=max(self.settings.pool, k), fuzzy=self.settings.fuzzy
                )
                by_text[mention.text] = self._rank(hits, context_words, mention.text)
            linked.append(LinkedMention(mention=mention, candidates=by_text[mention.text][:k]))
        return linked

    def _rank(self, hits: list[AliasHit], context_words: set[str], mention: str) -> list[EntityCandidate]:
        size = len(normalize_mention(mention).split())
        candidates = [self._candidate(hit, context_words, size) for hit in hits]
        candidates.sort(key=lambda c: (-c.score, -c.popularity, c.entity_id))
        return candidates

    def _candidate(self, hit: AliasHit, context_words: set[str], mention_size: int) -> EntityCandidate:
        info = self.entities.get(hit.entity_id) if self.entities is not None else None
        description = info.description if info else None
        page_title = info.page_title if info else None
        alias = _alias_score(hit, mention_size)
        context = _context(context_words, hit.label, description, page_title)
        s = self.settings
        weighted = s.alias_weight * alias + s.popularity_weight * hit.popularity
        score = (weighted + s.context_weight * context) / self._total
        return EntityCandidate(
            entity_id=hit.entity_id,
            label=hit.label,
            description=description,
            page_title=page_title,
            match=hit.match,
            prior=hit.prior,
            popularity=hit.popularity,
            context=round(context, 4),
            score=round(score, 6),
        )


def _alias_score(hit: AliasHit, mention_size: int) -> float:
    """Match weight x prior; a fuzzy hit on a longer name is worth only the share of it the mention
    covers ("Danish" is not "Danish Meteorological Institute")."""
    score = AliasIndex.MATCH_WEIGHT[hit.match] * hit.prior
    if hit.match == "fuzzy":
        score *= min(1.0, mention_size / max(1, len(normalize_mention(hit.alias).split())))
    return score


def _context(question_words: set[str], *texts: str | None) -> float:
    """Share of the question's words found in the texts, saturating at ``CONTEXT_WORDS`` shared words."""
    if not question_words:
        return 0.0
    entity_words = {stem(w) for text in texts if text for w in content_words(text)}
    shared = len(question_words & entity_words)
    return min(1.0, shared / min(CONTEXT_WORDS, len(question_words)))
