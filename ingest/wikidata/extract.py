"""Turn one Wikidata entity (parsed JSON) into an entity row and its statement rows.

Statements are plain tuples in the column order of ``schemas.wikidata.Statement`` (an entity is a
dict), because this loop runs once per statement of a 100 GB dump. Values are normalized on the
way: entity URIs become ids (units, calendars, globes), amounts keep their exact text beside a
float, and times keep their precision and calendar and get a signed year for filtering.
"""

from __future__ import annotations

from typing import Any

import orjson

ENTITY_URI = "http://www.wikidata.org/entity/"
INSTANCE_OF = "P31"
_ID_PREFIX = {"item": "Q", "property": "P", "lexeme": "L"}
KINDS = {"item", "property", "lexeme"}
_EMPTY_VALUE = {
    "value_item": None,
    "value_string": None,
    "value_language": None,
    "value_amount": None,
    "value_amount_text": None,
    "value_unit": None,
    "value_lower": None,
    "value_upper": None,
    "value_time": None,
    "value_year": None,
    "value_precision": None,
    "value_calendar": None,
    "value_latitude": None,
    "value_longitude": None,
    "value_globe": None,
}


class EntityError(ValueError):
    """The entity JSON is not of the shape the dump format promises."""


def _uri_id(uri: str | None) -> str | None:
    if not uri or uri == "1":
        return None
    return uri[len(ENTITY_URI) :] if uri.startswith(ENTITY_URI) else uri


def _float(text: str | None) -> float | None:
    return None if text is None else float(text)


def _year(time: str) -> int | None:
    """Signed year of a Wikidata time string ('+2015-00-00T…', '-0300-…')."""
    sign = -1 if time.startswith("-") else 1
    digits = time.lstrip("+-").split("-", 1)[0]
    return sign * int(digits) if digits.isdigit() else None


VALUE_FIELDS = ("value_kind", *_EMPTY_VALUE)  # a snak's value columns, in the schema's order
SNAK_FIELDS = ("property", "snak_type", "datatype", *VALUE_FIELDS)
STATEMENT_FIELDS = (*SNAK_FIELDS, "statement_id", "subject", "rank", "qualifiers", "reference_count")
_ITEM = SNAK_FIELDS.index("value_item")
_QUALIFIERS = STATEMENT_FIELDS.index("qualifiers")
NO_VALUE = ("none", *(None,) * len(_EMPTY_VALUE))
_ITEM_TAIL = (None,) * (len(_EMPTY_VALUE) - 1)


def snak_row(snak: dict[str, Any]) -> tuple:
    """One snak as a tuple of ``SNAK_FIELDS``: property, snak type, datatype and its typed value columns
    (all None for somevalue/novalue).

    Tuples in column order, not a dict per snak: this runs for every statement and qualifier of a dump,
    and the Arrow columns are built by transposing the tuples. The value is read before the property, so
    a snak broken in both is reported for its value.
    """
    datavalue = snak.get("datavalue")
    snak_type = snak.get("snaktype", "value")
    if datavalue is None or snak_type != "value":
        return (snak["property"], snak_type, snak.get("datatype"), *NO_VALUE)
    kind = datavalue["type"]
    value = datavalue["value"]
    if kind == "wikibase-entityid":
        entity_id = value.get("id")
        if entity_id is None:  # old dumps: numeric-id only
            entity_id = f"{_ID_PREFIX.get(value['entity-type'], 'Q')}{value['numeric-id']}"
        values = item_values(entity_id)
    elif kind == "string":
        values = string_values(value)
    elif kind == "monolingualtext":
        values = monolingual_values(value["text"], value["language"])
    elif kind == "quantity":
        values = quantity_values(
            value["amount"], value.get("unit"), value.get("lowerBound"), value.get("upperBound")
        )
    elif kind == "time":
        values = time_values(value["time"], value.get("precision"), value.get("calendarmodel"))
    elif kind == "globecoordinate":
        values = globe_values(value["latitude"], value["longitude"], value.get("globe"))
    else:  # a value type newer than this code: keep it verbatim rather than lose it
        values = ("other", None, orjson.dumps(datavalue).decode(), *(None,) * 13)
    return (snak["property"], snak_type, snak.get("datatype"), *values)


# The value columns (``VALUE_FIELDS``) of each datavalue type, normalized: shared by this general reader and
# the typed decoder (``ingest.wikidata.typed``), so that both write the same rows.


def item_values(entity_id: str) -> tuple:
    return ("item", entity_id, *_ITEM_TAIL)


def string_values(text: str) -> tuple:
    return ("string", None, text, *(None,) * 13)


def monolingual_values(text: str, language: str) -> tuple:
    return ("monolingualtext", None, text, language, *(None,) * 12)


def quantity_values(amount: str, unit: str | None, lower: str | None, upper: str | None) -> tuple:
    number = float(amount)
    unit = _uri_id(unit)
    low, high = _float(lower), _float(upper)
    return ("quantity", None, None, None, number, amount, unit, low, high, *(None,) * 7)


def time_values(time: str, precision: int | None, calendar: str | None) -> tuple:
    year = _year(time)
    return ("time", *(None,) * 8, time, year, precision, _uri_id(calendar), None, None, None)


def globe_values(latitude: float, longitude: float, globe: str | None) -> tuple:
    return ("globecoordinate", *(None,) * 12, latitude, longitude, _uri_id(globe))


def _language_value(mapping: dict[str, Any] | list | None, language: str) -> str | None:
    """The value in ``language``, falling back to the language-neutral 'mul' labels."""
    if not mapping or isinstance(mapping, list):  # the API writes an empty map as []
        return None
    entry = mapping.get(language) or mapping.get("mul")
    return entry["value"] if entry else None


def entity_row(entity: dict[str, Any], language: str) -> dict[str, Any]:
    """The ``Entity`` row of one parsed entity."""
    entity_id = entity.get("id")
    if not isinstance(entity_id, str):
        raise EntityError("entity has no string 'id'")
    kind = entity.get("type")
    aliases = entity.get("aliases") or {}
    alias_list = aliases.get(language, []) if isinstance(aliases, dict) else []
    sitelinks = entity.get("sitelinks") or {}
    enwiki = sitelinks.get("enwiki") if isinstance(sitelinks, dict) else None
    claims = entity.get("claims") or {}
    instance_of = []
    if isinstance(claims, dict):
        for claim in claims.get(INSTANCE_OF, ()):
            value = claim["mainsnak"].get("datavalue", {}).get("value")
            if isinstance(value, dict) and "id" in value:
                instance_of.append(value["id"])
    return {
        "id": entity_id,
        "kind": kind if kind in KINDS else "other",
        "label": _language_value(entity.get("labels"), language),
        "description": _language_value(entity.get("descriptions"), language),
        "aliases": [a["value"] for a in alias_list],
        "enwiki_title": enwiki["title"] if enwiki else None,
        "sitelink_count": len(sitelinks) if isinstance(sitelinks, dict) else 0,
        "instance_of": instance_of,
        "datatype": entity.get("datatype"),
    }


def statement_rows(entity: dict[str, Any]) -> list[tuple]:
    """One ``Statement`` row (a tuple of ``STATEMENT_FIELDS``) per claim of the entity, qualifiers nested."""
    subject = entity["id"]
    claims = entity.get("claims") or {}
    if isinstance(claims, list):  # the API writes an empty map as []
        return []
    rows: list[tuple] = []
    for claim_list in claims.values():
        for claim in claim_list:
            main = snak_row(claim["mainsnak"])
            qualifiers, order = claim.get("qualifiers"), claim.get("qualifiers-order")
            if qualifiers or order:
                qualifiers = qualifiers or {}
                nested = [snak_row(q) for prop in order or list(qualifiers) for q in qualifiers.get(prop, ())]
            else:  # most claims have none
                nested = []
            statement_id = claim.get("id") or f"{subject}${main[0]}${len(rows)}"
            rank = claim.get("rank", "normal")
            rows.append((*main, statement_id, subject, rank, nested, len(claim.get("references") or ())))
    return rows


def referenced_items(rows: list[tuple]) -> set[str]:
    """Entity ids that statements point to (main values and qualifier values)."""
    found = {row[_ITEM] for row in rows if row[_ITEM]}
    found.update(q[_ITEM] for row in rows for q in row[_QUALIFIERS] if q[_ITEM])
    return found
