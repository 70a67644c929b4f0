"""Names and identities the verbalizer, the typed statements and the graph all resolve the same way.

One place decides what an entity is called (Wikidata label, else its Wikipedia title, else its id),
where a title redirects to, and which entity a page is about (the page's Wikidata sitelink, else the
page title itself, so pages without a Wikidata id still become entities).

A ``Lexicon`` holds the names of one batch of records only: ``index.names.NameStore.lexicon`` fills it
from the build's name tables with the ids and titles the batch mentions, so it is bounded by the batch,
never by the corpus. Redirect chains come already walked from the name tables (``resolved``); asking a
lexicon for a title it was not given is an error, not a silent "no redirect".
"""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

MAX_REDIRECT_HOPS = 5


def table_files(ingest_dir: Path, tables: tuple[str, ...]) -> list[Path]:
    """The shard files of these ingest tables, table by table, each table's files in name order."""
    return [path for table in tables for path in sorted((Path(ingest_dir) / table).glob("*.parquet"))]


class TitleNotLookedUp(KeyError):
    """A title outside the batch's lexicon: the caller did not collect it with the batch's keys."""


@dataclass
class Lexicon:
    labels: dict[str, str] = field(default_factory=dict)
    descriptions: dict[str, str] = field(default_factory=dict)
    aliases: dict[str, list[str]] = field(default_factory=dict)
    entity_titles: dict[str, str] = field(default_factory=dict, repr=False)  # qid -> enwiki title
    articles: dict[str, tuple[int, int | None, str]] = field(default_factory=dict, repr=False)
    resolved: dict[str, str] = field(default_factory=dict, repr=False)  # title -> where redirects lead
    title_entities: dict[str, str] = field(default_factory=dict, repr=False)  # title -> entity it names
    property_labels: dict[str, str] = field(default_factory=dict, repr=False)
    units: dict[str, str] = field(default_factory=dict, repr=False)  # bundled labels of common units

    def add_titles(self, titles: Iterable[str]) -> None:
        """Titles looked up: each leads to itself and names itself unless the name tables say otherwise."""
        for title in titles:
            self.resolved.setdefault(title, title)
            self.title_entities.setdefault(title, title)

    def resolve_title(self, title: str) -> str:
        """Follow redirects (a bounded number of hops, walked when the name tables were built)."""
        try:
            return self.resolved[title]
        except KeyError:
            raise TitleNotLookedUp(
                f"title {title!r} is not in this batch's lexicon; collect it first"
            ) from None

    def entity_for_title(self, title: str) -> str:
        """The entity a page title names: its Wikidata id via the sitelink, else the resolved title."""
        try:
            return self.title_entities[title]
        except KeyError:
            raise TitleNotLookedUp(
                f"title {title!r} is not in this batch's lexicon; collect it first"
            ) from None

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
