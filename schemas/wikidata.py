"""Row models for what the Wikidata ingest writes: entities, statements, properties.

A snak's value is stored in typed columns (one per value kind) instead of a JSON blob, so that
the verbalizer and the query engine can filter on years, amounts and items without re-parsing.
Exact decimal amounts are kept as text next to their float, because Wikidata quantities can carry
more digits than a double holds.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

from schemas.arrow import Arrow

Int8 = Annotated[int, Arrow(pa.int8())]
Int32 = Annotated[int, Arrow(pa.int32())]

ValueKind = Literal[
    "item",  # wikibase-entityid of any entity type: value_item holds the id (Q/P/L/…)
    "string",  # string, external-id, url, commonsMedia, geo-shape, tabular-data, math, …
    "monolingualtext",
    "quantity",
    "time",
    "globecoordinate",
    "none",  # somevalue / novalue snaks carry no value
    "other",  # a datavalue type this code does not know yet: raw JSON kept in value_string
]


class Snak(BaseModel):
    """One property/value pair: a statement's main snak or one of its qualifiers."""

    property: str
    snak_type: Literal["value", "somevalue", "novalue"]
    datatype: str | None = Field(None, description="Wikidata datatype, e.g. wikibase-item, external-id")
    value_kind: ValueKind
    value_item: str | None = None
    value_string: str | None = None
    value_language: str | None = None
    value_amount: float | None = None
    value_amount_text: str | None = Field(None, description="exact decimal as in the dump, e.g. +11150516")
    value_unit: str | None = Field(None, description="unit entity id; None for dimensionless '1'")
    value_lower: float | None = None
    value_upper: float | None = None
    value_time: str | None = Field(
        None, description="ISO-like time as in the dump, e.g. +2015-01-01T00:00:00Z"
    )
    value_year: int | None = Field(None, description="signed year of value_time, for time filters")
    value_precision: Int8 | None = Field(None, description="9=year, 10=month, 11=day, 7=century, …")
    value_calendar: str | None = Field(None, description="calendar model entity id, e.g. Q1985727")
    value_latitude: float | None = None
    value_longitude: float | None = None
    value_globe: str | None = None


class Statement(Snak):
    """A Wikidata statement: its main snak flattened, qualifiers nested, reference count kept."""

    statement_id: str
    subject: str
    rank: Literal["preferred", "normal", "deprecated"]
    qualifiers: list[Snak]
    reference_count: Int32


class Entity(BaseModel):
    """An item or property, in the ingest language."""

    id: str
    kind: Literal["item", "property", "lexeme", "other"]
    label: str | None
    description: str | None
    aliases: list[str]
    enwiki_title: str | None
    sitelink_count: Int32
    instance_of: list[str]
    datatype: str | None = Field(None, description="for properties: the datatype of their values")


class PropertyLabel(BaseModel):
    """Label and aliases of a property, from the dump itself or from the bundled table."""

    id: str
    label: str
    datatype: str | None
    aliases: list[str]
    description: str | None
    source: Literal["dump", "bundled"]
