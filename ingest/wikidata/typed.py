"""Decode a Wikidata entity line straight into the parts the ingest reads, skipping the rest in C.

Most of an entity line is what the ingest never uses: labels, descriptions and aliases in hundreds of
languages, sitelinks, the snaks of references. ``orjson.loads`` builds a dict, a string and a list for all
of it, and then frees them again. ``msgspec`` decodes into typed Structs that name only the fields we read
(labels in the kept language and 'mul', the enwiki sitelink, claims with their snaks and qualifiers) and
steps over every other key without building anything: the 5x sample dump decodes in 0.33 s instead of
0.81 s, and the rows are then read from attributes instead of ``dict.get`` calls.

The Structs describe the documented shape of the dump and nothing wider. A line that leaves it in any way
(a value type newer than this code, a null where the format has an object, an id that is a number, broken
JSON) makes ``typed_rows`` raise one of ``TYPED_MISSES``, and the caller reads the line again with the
general reader (``ingest.wikidata.extract``), which keeps what it can and quarantines the rest as it always
did. So the typed path only ever returns the rows the general reader would have returned: both write the
same tuples through the same value functions, numbers we keep are parsed by orjson in both, and a line
that is not UTF-8 anywhere (which orjson refuses, while msgspec checks only the strings it keeps) is sent
to the general reader too. One difference is left on purpose: a number too large for a float in a part
that neither reader uses (1e999 in some reference) fails orjson, while msgspec steps over it and the entity
is kept, whole.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import msgspec
import orjson
from msgspec import UNSET, Raw, Struct, UnsetType, field

from ingest.wikidata.extract import (
    INSTANCE_OF,
    KINDS,
    NO_VALUE,
    globe_values,
    item_values,
    monolingual_values,
    quantity_values,
    string_values,
    time_values,
)

TYPED_MISSES = (msgspec.MsgspecError, ValueError, RecursionError)
"""What ``typed_rows`` raises for a line it does not take: the general reader decides about that line."""

_NULL = Raw(b"null")


def _number(raw: Raw) -> Any:
    """A number we keep, parsed by orjson as the general reader parses it (an integer beyond 64 bits becomes
    a float there, where msgspec would keep a Python int; Arrow takes the one and refuses the other)."""
    return orjson.loads(memoryview(raw))


class _Text(Struct, gc=False):
    value: str


# A datavalue's 'value' object. Every key the format documents is declared (the unused ones as Raw) and any
# other key sends the line to the general reader, which lists an object value holding an 'id' as an
# instance-of target whatever its type: only the entity-id value may hold one here.


class _EntityId(Struct, forbid_unknown_fields=True, gc=False):
    id: str
    entity_type: Raw = field(default=_NULL, name="entity-type")
    numeric_id: Raw = field(default=_NULL, name="numeric-id")


class _Monolingual(Struct, forbid_unknown_fields=True, gc=False):
    text: str
    language: str


class _Quantity(Struct, forbid_unknown_fields=True, gc=False):
    amount: str
    unit: str | None = None
    lowerBound: str | None = None  # the dump's keys
    upperBound: str | None = None


class _Time(Struct, forbid_unknown_fields=True, gc=False):
    time: str
    precision: Raw = _NULL
    calendarmodel: str | None = None
    timezone: Raw = _NULL
    before: Raw = _NULL
    after: Raw = _NULL


class _Globe(Struct, forbid_unknown_fields=True, gc=False):
    latitude: Raw
    longitude: Raw
    globe: str | None = None
    altitude: Raw = _NULL
    precision: Raw = _NULL


# A snak's 'datavalue', told apart by its 'type'; an unknown type is a miss (the general reader keeps it
# verbatim). Each gives its value columns in the order of ``extract.VALUE_FIELDS``.


class _ItemValue(Struct, tag_field="type", tag="wikibase-entityid", gc=False):
    value: _EntityId

    def columns(self) -> tuple:
        return item_values(self.value.id)


class _StringValue(Struct, tag_field="type", tag="string", gc=False):
    value: str

    def columns(self) -> tuple:
        return string_values(self.value)


class _MonolingualValue(Struct, tag_field="type", tag="monolingualtext", gc=False):
    value: _Monolingual

    def columns(self) -> tuple:
        return monolingual_values(self.value.text, self.value.language)


class _QuantityValue(Struct, tag_field="type", tag="quantity", gc=False):
    value: _Quantity

    def columns(self) -> tuple:
        v = self.value
        return quantity_values(v.amount, v.unit, v.lowerBound, v.upperBound)


class _TimeValue(Struct, tag_field="type", tag="time", gc=False):
    value: _Time

    def columns(self) -> tuple:
        v = self.value
        return time_values(v.time, _number(v.precision), v.calendarmodel)


class _GlobeValue(Struct, tag_field="type", tag="globecoordinate", gc=False):
    value: _Globe

    def columns(self) -> tuple:
        v = self.value
        return globe_values(_number(v.latitude), _number(v.longitude), v.globe)


_DataValue = _ItemValue | _StringValue | _MonolingualValue | _QuantityValue | _TimeValue | _GlobeValue


class _Snak(Struct, gc=False):
    property: str
    snaktype: str = "value"
    datatype: str | None = None
    datavalue: _DataValue | UnsetType = UNSET  # a null datavalue is a miss: the general reader decides

    def row(self) -> tuple:
        """The snak as ``extract.snak_row`` gives it."""
        if self.datavalue is UNSET or self.snaktype != "value":
            return (self.property, self.snaktype, self.datatype, *NO_VALUE)
        return (self.property, self.snaktype, self.datatype, *self.datavalue.columns())  # type: ignore[union-attr]


class _Claim(Struct, gc=False):
    mainsnak: _Snak
    id: str | None = None
    rank: str = "normal"
    qualifiers: dict[str, list[_Snak]] | None = None
    qualifiers_order: list[str] | None = field(default=None, name="qualifiers-order")
    references: list[Raw] | None = None  # only counted


class _Sitelink(Struct, gc=False):
    title: str


_SITELINK = msgspec.json.Decoder(_Sitelink)


@cache
def entity_decoder(language: str) -> Callable[[bytes], Any]:
    """The decoder of entity lines for ``language``: its labels, descriptions and aliases are the only
    languages decoded (with 'mul', the language-neutral fallback), as fields of Structs made for it."""
    languages = [("wanted", _Text | None, None)] + (
        [] if language == "mul" else [("mul", _Text | None, None)]
    )
    labels = msgspec.defstruct("Labels", languages, rename={"wanted": language}, gc=False)
    aliases = msgspec.defstruct(
        "Aliases", [("wanted", list[_Text], [])], rename={"wanted": language}, gc=False
    )
    entity = msgspec.defstruct(
        "Entity",
        [
            ("id", str),
            ("type", str | None, None),
            ("datatype", str | None, None),
            ("labels", labels | list[Raw] | None, None),  # the API writes an empty map as []
            ("descriptions", labels | list[Raw] | None, None),
            ("aliases", aliases | list[Raw] | None, None),
            ("sitelinks", dict[str, Raw] | list[Raw] | None, None),
            ("claims", dict[str, list[_Claim]] | list[Raw] | None, None),
        ],
        gc=False,
    )
    return msgspec.json.Decoder(entity).decode


def typed_rows(decode: Callable[[bytes], Any], payload: bytes, language: str) -> tuple[dict, list[tuple]]:
    """The entity row and statement rows of one line, as ``extract.entity_row`` and ``statement_rows`` give
    them; raises one of ``TYPED_MISSES`` for a line outside the documented shape."""
    if not payload.isascii():
        payload.decode()  # a UnicodeDecodeError (a ValueError) where orjson would refuse the line
    entity = decode(payload)
    claims = entity.claims if isinstance(entity.claims, dict) else {}
    return _entity_row(entity, claims, language), _statement_rows(entity.id, claims)


def _language_value(texts: Any) -> str | None:
    if texts is None or isinstance(texts, list):
        return None
    entry = texts.wanted or getattr(texts, "mul", None)
    return entry.value if entry else None


def _entity_row(entity: Any, claims: dict[str, list[_Claim]], language: str) -> dict:
    sitelinks = entity.sitelinks if isinstance(entity.sitelinks, dict) else {}
    enwiki = sitelinks.get("enwiki")
    aliases = (
        entity.aliases.wanted if entity.aliases is not None and not isinstance(entity.aliases, list) else []
    )
    instance_of = [
        claim.mainsnak.datavalue.value.id  # type: ignore[union-attr]
        for claim in claims.get(INSTANCE_OF, ())
        if type(claim.mainsnak.datavalue) is _ItemValue
    ]
    return {
        "id": entity.id,
        "kind": entity.type if entity.type in KINDS else "other",
        "label": _language_value(entity.labels),
        "description": _language_value(entity.descriptions),
        "aliases": [alias.value for alias in aliases],
        "enwiki_title": None if enwiki is None else _SITELINK.decode(enwiki).title,
        "sitelink_count": len(sitelinks),
        "instance_of": instance_of,
        "datatype": entity.datatype,
    }


def _statement_rows(subject: str, claims: dict[str, list[_Claim]]) -> list[tuple]:
    rows: list[tuple] = []
    for claim_list in claims.values():
        for claim in claim_list:
            main = claim.mainsnak.row()
            qualifiers, order = claim.qualifiers, claim.qualifiers_order
            if qualifiers or order:
                qualifiers = qualifiers or {}
                nested = [q.row() for prop in order or list(qualifiers) for q in qualifiers.get(prop, ())]
            else:
                nested = []
            statement_id = claim.id or f"{subject}${main[0]}${len(rows)}"
            rows.append((*main, statement_id, subject, claim.rank, nested, len(claim.references or ())))
    return rows
