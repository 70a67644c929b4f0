"""Turn one Wikidata entity (parsed JSON) into an entity row and its statement rows.

Plain dicts keyed like ``schemas.wikidata`` models are built here, because this loop runs once
per statement of a 100 GB dump. Values are normalized on the way: entity URIs become ids
(units, calendars, globes), amounts keep their exact text beside a float, and times keep their
precision and calendar and get a signed year for filtering.
"""

from __future__ import annotations

from typing import Any

import orjson

ENTITY_URI = "http://www.wikidata.org/entity/"
INSTANCE_OF = "P31"
_ID_PREFIX = {"item": "Q", "property": "P", "lexeme": "L"}
_KINDS = {"item", "property", "lexeme"}
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


def snak_value(snak: dict[str, Any]) -> dict[str, Any]:
    """The typed value columns of one snak (all None for somevalue/novalue)."""
    out = dict(_EMPTY_VALUE)
    datavalue = snak.get("datavalue")
    if snak.get("snaktype", "value") != "value" or datavalue is None:
        out["value_kind"] = "none"
        return out
    kind = datavalue["type"]
    value = datavalue["value"]
    if kind == "wikibase-entityid":
        out["value_kind"] = "item"
        entity_id = value.get("id")
        if entity_id is None:  # old dumps: numeric-id only
            entity_id = f"{_ID_PREFIX.get(value['entity-type'], 'Q')}{value['numeric-id']}"
        out["value_item"] = entity_id
    elif kind == "string":
        out["value_kind"] = "string"
        out["value_string"] = value
    elif kind == "monolingualtext":
        out["value_kind"] = "monolingualtext"
        out["value_string"] = value["text"]
        out["value_language"] = value["language"]
    elif kind == "quantity":
        out["value_kind"] = "quantity"
        amount = value["amount"]
        out["value_amount_text"] = amount
        out["value_amount"] = float(amount)
        out["value_unit"] = _uri_id(value.get("unit"))
        out["value_lower"] = _float(value.get("lowerBound"))
        out["value_upper"] = _float(value.get("upperBound"))
    elif kind == "time":
        out["value_kind"] = "time"
        time = value["time"]
        out["value_time"] = time
        out["value_year"] = _year(time)
        out["value_precision"] = value.get("precision")
        out["value_calendar"] = _uri_id(value.get("calendarmodel"))
    elif kind == "globecoordinate":
        out["value_kind"] = "globecoordinate"
        out["value_latitude"] = value["latitude"]
        out["value_longitude"] = value["longitude"]
        out["value_globe"] = _uri_id(value.get("globe"))
    else:  # a value type newer than this code: keep it verbatim rather than lose it
        out["value_kind"] = "other"
        out["value_string"] = orjson.dumps(datavalue).decode()
    return out


def _snak_row(snak: dict[str, Any]) -> dict[str, Any]:
    row = snak_value(snak)
    row["property"] = snak["property"]
    row["snak_type"] = snak.get("snaktype", "value")
    row["datatype"] = snak.get("datatype")
    return row


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
        "kind": kind if kind in _KINDS else "other",
        "label": _language_value(entity.get("labels"), language),
        "description": _language_value(entity.get("descriptions"), language),
        "aliases": [a["value"] for a in alias_list],
        "enwiki_title": enwiki["title"] if enwiki else None,
        "sitelink_count": len(sitelinks) if isinstance(sitelinks, dict) else 0,
        "instance_of": instance_of,
        "datatype": entity.get("datatype"),
    }


def statement_rows(entity: dict[str, Any]) -> list[dict[str, Any]]:
    """One ``Statement`` row per claim of the entity, qualifiers nested in their statement."""
    subject = entity["id"]
    claims = entity.get("claims") or {}
    if isinstance(claims, list):  # the API writes an empty map as []
        return []
    rows = []
    for claim_list in claims.values():
        for claim in claim_list:
            row = _snak_row(claim["mainsnak"])
            qualifiers = claim.get("qualifiers") or {}
            order = claim.get("qualifiers-order") or list(qualifiers)
            row["qualifiers"] = [_snak_row(q) for prop in order for q in qualifiers.get(prop, ())]
            row["statement_id"] = claim.get("id") or f"{subject}${row['property']}${len(rows)}"
            row["subject"] = subject
            row["rank"] = claim.get("rank", "normal")
            row["reference_count"] = len(claim.get("references") or ())
            rows.append(row)
    return rows


def referenced_items(rows: list[dict[str, Any]]) -> set[str]:
    """Entity ids that statements point to (main values and qualifier values)."""
    found = set()
    for row in rows:
        if row["value_item"]:
            found.add(row["value_item"])
        for qualifier in row["qualifiers"]:
            if qualifier["value_item"]:
                found.add(qualifier["value_item"])
    return found
