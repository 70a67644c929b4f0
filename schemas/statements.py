"""Row models for the index's typed statements: Wikidata statements with their labels, per version.

The ingest's ``Statement`` rows carry ids only; here each id that has a name carries it beside it
(a label the slice does not know is None, never the id repeated), every value also reads as text,
and the qualifiers questions ask about most (point in time, start time, end time) are flattened
into columns, so the query side can filter and compare values without a lexicon. ``evidence_id``
ties a statement to the KG evidence row the verbalizer wrote for it.
"""

from __future__ import annotations

from typing import Annotated, Literal

import pyarrow as pa
from pydantic import BaseModel, Field

from schemas.arrow import Arrow
from schemas.wikidata import ValueKind

Int8 = Annotated[int, Arrow(pa.int8())]

Rank = Literal["preferred", "normal", "deprecated"]
RANK_ORDER: dict[str, int] = {"preferred": 0, "normal": 1, "deprecated": 2}


class TypedQualifier(BaseModel):
    """One qualifier of a statement, typed as in the ingest, with labels and its text."""

    property: str
    property_label: str | None
    snak_type: Literal["value", "somevalue", "novalue"]
    value_kind: ValueKind
    value_item: str | None = None
    value_item_label: str | None = Field(None, description="None when the slice has no name for the item")
    value_string: str | None = None
    value_language: str | None = None
    value_amount: float | None = None
    value_amount_text: str | None = Field(None, description="exact decimal as in the dump, e.g. +11150516")
    value_unit: str | None = Field(None, description="unit entity id; None for dimensionless amounts")
    value_unit_label: str | None = None
    value_time: str | None = Field(None, description="time as in the dump, e.g. +2014-01-01T00:00:00Z")
    value_year: int | None = None
    value_precision: Int8 | None = Field(None, description="9=year, 10=month, 11=day, 7=century, …")
    value_latitude: float | None = None
    value_longitude: float | None = None
    text: str = Field(description="the value as people write it: '1 January 2014', '30,528 square kilometre'")


class TypedStatement(BaseModel):
    """One Wikidata statement of the index, deprecated ones included (with their rank)."""

    statement_id: str
    subject: str
    subject_label: str | None
    property: str
    property_label: str | None
    rank: Rank
    datatype: str | None = Field(None, description="Wikidata datatype, e.g. wikibase-item, quantity")
    snak_type: Literal["value", "somevalue", "novalue"]
    value_kind: ValueKind
    value_item: str | None = None
    value_item_label: str | None = Field(None, description="None when the slice has no name for the item")
    value_string: str | None = Field(None, description="string values and the text of monolingual text")
    value_language: str | None = Field(None, description="language code of a monolingual text")
    value_amount: float | None = None
    value_amount_text: str | None = Field(None, description="exact decimal as in the dump, e.g. +11150516")
    value_unit: str | None = Field(None, description="unit entity id; None for dimensionless amounts")
    value_unit_label: str | None = None
    value_time: str | None = Field(None, description="time as in the dump, e.g. +2014-01-01T00:00:00Z")
    value_year: int | None = Field(None, description="signed year of value_time")
    value_precision: Int8 | None = Field(None, description="9=year, 10=month, 11=day, 7=century, …")
    value_calendar: str | None = Field(None, description="calendar model entity id, e.g. Q1985727")
    value_latitude: float | None = None
    value_longitude: float | None = None
    value_globe: str | None = None
    value_text: str = Field(description="the value as people write it ('' when there is nothing to say)")
    point_in_time: str | None = Field(None, description="time of the first P585 (point in time) qualifier")
    point_in_time_year: int | None = None
    point_in_time_precision: Int8 | None = None
    start_time: str | None = Field(None, description="time of the first P580 (start time) qualifier")
    start_year: int | None = None
    start_precision: Int8 | None = None
    end_time: str | None = Field(None, description="time of the first P582 (end time) qualifier")
    end_year: int | None = None
    end_precision: Int8 | None = None
    qualifiers: list[TypedQualifier]
    evidence_id: str | None = Field(
        None, description="the KG evidence row of this statement; None when the verbalizer skips it"
    )
    source: str = Field(description="name of the ingest file the statement was read from")
