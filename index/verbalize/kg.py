"""KG statements as entity-centric sentences: 'Belgium, population, 11,150,516, point in time: 2015'.

Labels replace ids, quantities carry their unit, dates their precision, and qualifiers follow the
value, so a statement read alone says what it says in Wikidata. Deprecated statements and datatypes
that carry no answerable content (external identifiers, media files, shapes) are skipped and counted.
Each entity also gets its description and aliases as evidence ("Belgium, description, …").
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Iterator, Mapping
from typing import Any

import pyarrow as pa

from index.lexicon import Lexicon
from index.verbalize.buffer import EvidenceBuffer
from index.verbalize.common import evidence_id, provenance
from index.verbalize.values import format_qualifiers, format_value

SKIPPED_DATATYPES = frozenset({"external-id", "commonsMedia", "geo-shape", "tabular-data", "math"})


def _row(text: str, subject: str, entity_ids: list[str], lexicon: Lexicon, source: str, **prov: Any) -> dict:
    page = lexicon.page_title_for(subject)
    return {
        "evidence_id": evidence_id("kg", text),
        "source_type": "kg",
        "text": text,
        "title": lexicon.name(subject),
        "page_title": page,
        "entity_ids": entity_ids,
        "link_targets": [page] if page else [],
        "provenance": provenance(source, **prov),
    }


def statement_evidence(
    statement: Mapping[str, Any], lexicon: Lexicon, source: str, skipped: Counter
) -> dict | None:
    """One statement row as evidence, or None (with the reason counted) when it is not worth saying."""
    if statement["rank"] == "deprecated":
        skipped["deprecated"] += 1
        return None
    if statement["datatype"] in SKIPPED_DATATYPES:
        skipped[f"datatype {statement['datatype']}"] += 1
        return None
    value = format_value(statement, lexicon)
    if not value:
        skipped["empty value"] += 1
        return None
    subject = statement["subject"]
    parts = [lexicon.name(subject), lexicon.property_name(statement["property"]), value]
    qualifiers = format_qualifiers(statement["qualifiers"], lexicon)
    if qualifiers:
        parts.append(qualifiers)
    entities = dict.fromkeys([subject])
    if statement["value_kind"] == "item" and statement["value_item"]:
        entities[statement["value_item"]] = None
    for q in statement["qualifiers"] or []:
        if q["value_kind"] == "item" and q["value_item"]:
            entities[q["value_item"]] = None
    return _row(
        ", ".join(parts),
        subject,
        list(entities),
        lexicon,
        source,
        statement_id=statement["statement_id"],
        property=statement["property"],
    )


def entity_evidence(lexicon: Lexicon, entity_ids: list[str], source: str) -> Iterator[dict]:
    """Description and aliases of each entity: what a reader of the item page sees first."""
    for qid in entity_ids:
        name = lexicon.name(qid)
        if qid in lexicon.descriptions:
            yield _row(
                f"{name}, description, {lexicon.descriptions[qid]}",
                qid,
                [qid],
                lexicon,
                source,
                property="description",
            )
        aliases = [a for a in lexicon.aliases.get(qid, []) if a != name]
        if aliases:
            yield _row(
                f"{name}, also known as, {'; '.join(aliases)}",
                qid,
                [qid],
                lexicon,
                source,
                property="aliases",
            )


STATEMENT_PROVENANCE = ("statement_id", "property")
ENTITY_PROVENANCE = ("property",)


def statement_batch(
    batch: pa.RecordBatch, lexicon: Lexicon, source: str, out: EvidenceBuffer, skipped: Counter
) -> None:
    """Every statement of ``batch`` worth saying into ``out``; the others are counted by reason."""
    for record in batch.to_pylist():
        row = statement_evidence(record, lexicon, source, skipped)
        if row is not None:
            out.add_row(row)


def entity_batch(entity_ids: list[str], lexicon: Lexicon, source: str, out: EvidenceBuffer) -> None:
    """The description and aliases rows of these entities into ``out``."""
    for row in entity_evidence(lexicon, entity_ids, source):
        out.add_row(row)
