"""Names and identities the verbalizer, the alias table and the graph all resolve the same way.

One place decides what an entity is called (Wikidata label, else its Wikipedia title, else its id),
where a title redirects to, and which entity a page is about (the page's Wikidata sitelink, else the
page title itself, so pages without a Wikidata id still become entities). Loaded once per build from
the ingest output; plain dicts, which hold the sample and OTT-QA slices with room to spare (a full
Wikidata label set would move to a Parquet join; see the README).
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import polars as pl

from ingest.wikidata.properties import resolve_property_labels

MAX_REDIRECT_HOPS = 5


def table_files(ingest_dir: Path, tables: tuple[str, ...]) -> list[Path]:
    """The shard files of these ingest tables, table by table, each table's files in name order."""
    return [path for table in tables for path in sorted((Path(ingest_dir) / table).glob("*.parquet"))]


def read_table(ingest_dir: Path, table: str, columns: list[str] | None = None) -> pl.DataFrame | None:
    """All shards of one ingest table as one frame, or None when no reader wrote it."""
    files = table_files(ingest_dir, (table,))
    if not files:
        return None
    return pl.concat([pl.read_parquet(f, columns=columns) for f in files], how="vertical_relaxed")


@dataclass
class Lexicon:
    labels: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    sitelinks: dict[str, int] = field(default_factory=dict)
    entity_titles: dict[str, str] = field(default_factory=dict, repr=False)  # qid -> enwiki title
    title_entities: dict[str, str] = field(default_factory=dict, repr=False)  # enwiki title -> qid
    property_labels: dict[str, str] = field(default_factory=dict, repr=False)
    redirects: dict[str, str] = field(default_factory=dict, repr=False)
    articles: dict[str, tuple[int, int | None, str]] = field(default_factory=dict, repr=False)
    units: dict[str, str] = field(default_factory=dict, repr=False)  # bundled labels of common units

    @classmethod
    def load(cls, ingest_dir: Path, unit_table: Path | None = None) -> Lexicon:
        lex = cls()
        if unit_table is not None:
            units = pl.read_csv(unit_table, separator="\t", quote_char=None)
            lex.units = dict(zip(units["id"], units["label"], strict=True))
        entities = read_table(
            ingest_dir,
            "entities",
            ["id", "label", "description", "aliases", "enwiki_title", "sitelink_count"],
        )
        if entities is not None:
            for qid, label, desc, aliases, title, sitelinks in entities.iter_rows():
                if label:
                    lex.labels[qid] = label
                if desc:
                    lex.descriptions[qid] = desc
                if aliases:
                    lex.aliases[qid] = aliases
                lex.sitelinks[qid] = sitelinks
                if title:
                    lex.entity_titles[qid] = title
                    lex.title_entities.setdefault(title, qid)
        if (Path(ingest_dir) / "properties").is_dir():
            props = resolve_property_labels(ingest_dir)
            lex.property_labels = dict(zip(props["id"], props["label"], strict=True))
        pages = read_table(
            ingest_dir, "pages", ["page_id", "title", "namespace", "revision_id", "redirect_target", "source"]
        )
        if pages is not None:
            for page_id, title, namespace, revision, target, source in pages.iter_rows():
                if target:
                    lex.redirects[title] = target
                elif namespace == 0:
                    lex.articles.setdefault(title, (page_id, revision, source))
        return lex

    def resolve_title(self, title: str) -> str:
        """Follow redirects (a bounded number of hops, so a redirect loop cannot hang a build)."""
        for _ in range(MAX_REDIRECT_HOPS):
            target = self.redirects.get(title)
            if target is None or target == title:
                break
            title = target
        return title

    def entity_for_title(self, title: str) -> str:
        """The entity a page title names: its Wikidata id via the sitelink, else the resolved title."""
        resolved = self.resolve_title(title)
        return self.title_entities.get(resolved) or self.title_entities.get(title) or resolved

    def name(self, entity_id: str) -> str:
        """What to call an entity in text: label, else Wikipedia title, else the id itself."""
        return self.labels.get(entity_id) or self.entity_titles.get(entity_id) or entity_id

    def unit_name(self, unit_id: str) -> str:
        return self.labels.get(unit_id) or self.units.get(unit_id) or unit_id

    def property_name(self, property_id: str) -> str:
        return self.property_labels.get(property_id) or self.labels.get(property_id) or property_id

    def page_title_for(self, entity_id: str) -> str | None:
        """The Wikipedia page of an entity: sitelink for Wikidata ids, the key itself for title entities."""
        if entity_id in self.entity_titles:
            return self.entity_titles[entity_id]
        return entity_id if entity_id in self.articles else None
