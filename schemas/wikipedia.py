"""Row models for what the Wikipedia ingest (and the OTT-QA adapter) writes.

Every row carries its page id and title so that each table can be read alone; links keep both
the normalized target title (as MediaWiki resolves it) and the anchor text the reader saw.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

from schemas.arrow import Arrow

Int32 = Annotated[int, Arrow(pa.int32())]


class LinkRef(BaseModel):
    """A link as it sits inside a passage, infobox value or table cell."""

    target: str = Field(description="normalized target title, e.g. 'Alfred Kleiner'")
    anchor: str = Field(description="the text the reader sees")


class Page(BaseModel):
    page_id: int
    title: str
    namespace: Int32
    revision_id: int | None
    revision_timestamp: str | None = Field(None, description="ISO 8601, UTC, as in the dump")
    redirect_target: str | None = Field(None, description="normalized title; set for redirects only")
    length: int = Field(description="wikitext length in characters")
    categories: list[str]
    source: str = Field(description="dump file name this page came from")


class Passage(BaseModel):
    page_id: int
    page_title: str
    section_path: list[str] = Field(description="heading trail, outermost first; [] for the lead")
    order: Int32 = Field(description="position of the passage within its page, from 0")
    text: str
    links: list[LinkRef]


class InfoboxField(BaseModel):
    page_id: int
    page_title: str
    template: str = Field(description="normalized template name, e.g. 'Infobox scientist'")
    infobox_index: Int32
    key: str
    value_text: str
    value_links: list[LinkRef]


class TableCell(BaseModel):
    column: Int32
    header: str = Field(description="column header; stacked header rows joined with ' / '")
    text: str
    links: list[LinkRef]


class TableRow(BaseModel):
    table_id: str = Field(description="'<Page_title>_<table index>', the naming OTT-QA uses")
    page_id: int
    page_title: str
    section_path: list[str]
    table_index: Int32 = Field(description="position of the table within its page, from 0")
    caption: str | None
    row_index: Int32 = Field(description="position among the table's data rows, from 0")
    cells: list[TableCell] = Field(description="rowspan/colspan expanded: one cell per column")


class IndexedTableRow(TableRow):
    """A table row as an index version keeps it: with the id of the evidence that says it."""

    evidence_id: str | None = Field(description="the row's table evidence; None when it had no text")


LinkSource = Literal["passage", "infobox", "table"]


class Link(BaseModel):
    source_page_id: int
    source_title: str
    source_kind: LinkSource
    source_index: Int32 = Field(description="passage order, infobox index or table index")
    row_index: Int32 | None = Field(None, description="table row, for table links")
    relation: str | None = Field(None, description="infobox key or table column header")
    target_title: str
    target_fragment: str | None = Field(None, description="section anchor after '#'")
    anchor_text: str
