"""Row models for what the index build writes: verbalized evidence, entity aliases, graph rows, manifests.

Evidence is the one unit every retriever returns (BM25, vectors, graph), whatever source it came from:
a KG statement, a passage window, a table row or an infobox field, each turned into a short text that
stands on its own. Its id is a hash of that text, so an unchanged record keeps its id (and its cached
embedding) across builds, and a record that changed gets a new one.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

from schemas.arrow import Arrow

Int32 = Annotated[int, Arrow(pa.int32())]

SourceType = Literal["kg", "text", "table", "infobox"]
SOURCE_TYPES: tuple[SourceType, ...] = ("kg", "text", "table", "infobox")


class Provenance(BaseModel):
    """Where one piece of evidence came from, precisely enough to show it to a user or find it again."""

    source: str = Field(description="dump file name the record was read from")
    page_id: int | None = None
    revision_id: int | None = None
    section_path: list[str] = Field(default_factory=list)
    passage_order: Int32 | None = Field(None, description="passage position within its page")
    window: Int32 | None = Field(None, description="window index when a long passage was split")
    table_id: str | None = Field(None, description="'<Page_title>_<table index>', as OTT-QA names tables")
    table_index: Int32 | None = None
    row_index: Int32 | None = None
    infobox_template: str | None = None
    infobox_key: str | None = None
    statement_id: str | None = None
    property: str | None = Field(None, description="Wikidata property id of a KG statement")


class Evidence(BaseModel):
    evidence_id: str = Field(description="content hash of source type and text: stable across builds")
    source_type: SourceType
    text: str = Field(description="self-contained verbalization, context first: 'Page / Section: …'")
    title: str = Field(description="page title, or the subject entity's label for KG statements")
    page_title: str | None = Field(None, description="Wikipedia page the evidence sits on or is about")
    entity_ids: list[str] = Field(
        description="entity keys mentioned: Wikidata ids, or page titles of pages with no Wikidata id"
    )
    link_targets: list[str] = Field(description="normalized titles of the pages the evidence links to")
    provenance: Provenance


AliasSource = Literal["label", "alias", "title", "redirect", "anchor"]


class Alias(BaseModel):
    """One (mention, entity) pair with how often the mention was seen naming the entity."""

    alias: str = Field(description="the surface form as written")
    alias_norm: str = Field(description="normalized form used for exact lookup (casefolded, no accents)")
    entity_id: str = Field(description="entity key: Wikidata id, or page title when there is none")
    source: AliasSource = Field(description="strongest source of this pair (label > alias > title > …)")
    count: int = Field(description="times seen: anchor count, or 1 for labels, titles and redirects")
    prior: float = Field(description="P(entity | alias_norm) from the counts")


class EntityRecord(BaseModel):
    """An entity as the linker and the graph see it, with a popularity signal."""

    entity_id: str = Field(description="Wikidata id, or page title when there is none")
    label: str
    description: str | None
    page_title: str | None = Field(None, description="its Wikipedia page, from the sitelink or the title")
    sitelinks: Int32
    inlinks: Int32 = Field(description="links from ingested pages to its page")
    popularity: float = Field(description="log-scaled mix of sitelinks and in-links, in [0, 1]")
