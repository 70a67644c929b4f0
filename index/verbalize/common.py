"""Pieces every verbalizer shares: the evidence id, the context prefix, the link-to-entity step."""

from __future__ import annotations

import hashlib
from collections.abc import Iterable
from typing import TYPE_CHECKING, NamedTuple

from index.lexicon import Lexicon

if TYPE_CHECKING:
    from index.verbalize.buffer import EvidenceBuffer

CONTEXT_SEPARATOR = " / "


def evidence_id(source_type: str, text: str) -> str:
    """Content hash of the evidence: the same text keeps its id (and cached embedding) across builds."""
    return hashlib.blake2b(f"{source_type}\x1f{text}".encode(), digest_size=16).hexdigest()


def context(*parts: str | None) -> str:
    """'Page / Section / Caption' from the non-empty parts, in order."""
    return CONTEXT_SEPARATOR.join(p.strip() for p in parts if p and p.strip())


def humanize_key(key: str) -> str:
    """'doctoral_advisor' -> 'Doctoral advisor': infobox keys read as their labels."""
    words = key.replace("_", " ").strip()
    return words[:1].upper() + words[1:] if words else key


def linked_entities(
    lexicon: Lexicon, page_title: str | None, targets: Iterable[str]
) -> tuple[list[str], list[str]]:
    """(entity ids, resolved target titles) of a record: the page's own entity first, then link targets.

    Both lists keep first-seen order without repeats, so the graph can tell the page entity from the
    linked ones.
    """
    entities: dict[str, None] = {}
    titles: dict[str, None] = {}
    if page_title:
        entities[lexicon.entity_for_title(page_title)] = None
    for target in targets:
        resolved = lexicon.resolve_title(target)
        titles[resolved] = None
        entities[lexicon.entity_for_title(resolved)] = None
    return list(entities), list(titles)


PROVENANCE_FIELDS = (
    "page_id", "revision_id", "section_path", "passage_order", "window", "table_id", "table_index",
    "row_index", "infobox_template", "infobox_key", "statement_id", "property",
)  # fmt: skip


def provenance(source: str, **fields: object) -> dict:
    """A provenance dict (``schemas.evidence.Provenance``) with every field not given set empty."""
    unknown = set(fields) - set(PROVENANCE_FIELDS)
    if unknown:
        raise TypeError(f"unknown provenance fields: {sorted(unknown)}")
    row: dict = {"source": source, **dict.fromkeys(PROVENANCE_FIELDS), "section_path": []}
    row.update(fields)
    return row


def page_provenance(lexicon: Lexicon, page_title: str, fallback_source: str, **fields: object) -> dict:
    """Provenance of a record on a page; the dump file and revision come from the page table."""
    page_id, revision, source = lexicon.articles.get(page_title, (None, None, fallback_source))
    fields.setdefault("page_id", page_id)
    fields.setdefault("revision_id", revision)
    return provenance(source, **fields)


def page_evidence(
    source_type: str,
    text: str,
    page_title: str,
    targets: Iterable[str],
    lexicon: Lexicon,
    fallback_source: str,
    **prov: object,
) -> dict:
    """An evidence row for a record that sits on a Wikipedia page (passage, table row, infobox field)."""
    entities, titles = linked_entities(lexicon, page_title, targets)
    return {
        "evidence_id": evidence_id(source_type, text),
        "source_type": source_type,
        "text": text,
        "title": page_title,
        "page_title": page_title,
        "entity_ids": entities,
        "link_targets": titles,
        "provenance": page_provenance(lexicon, page_title, fallback_source, **prov),
    }


class PageFacts(NamedTuple):
    """What every record on one page shares: its entity (None for an empty title), revision and dump."""

    entity: str | None
    revision_id: int | None
    source: str


def page_facts(lexicon: Lexicon, page_title: str, fallback_source: str) -> PageFacts:
    _, revision, source = lexicon.articles.get(page_title, (None, None, fallback_source))
    return PageFacts(lexicon.entity_for_title(page_title) if page_title else None, revision, source)


def add_page_row(
    out: EvidenceBuffer,
    lexicon: Lexicon,
    text: str,
    page_title: str,
    targets: Iterable[str],
    facts: PageFacts,
) -> None:
    """Append the columns every page record shares (what ``page_evidence`` returns, minus provenance
    beyond source and revision): the caller appends its own provenance fields."""
    entities: dict[str, None] = {} if facts.entity is None else {facts.entity: None}
    titles: dict[str, None] = {}
    for target in targets:
        resolved = lexicon.resolve_title(target)
        titles[resolved] = None
        entities[lexicon.entity_for_title(resolved)] = None
    out.ids.append(evidence_id(out.source_type, text))
    out.texts.append(text)
    out.titles.append(page_title)
    out.page_titles.append(page_title)
    out.entity_ids.append(list(entities))
    out.link_targets.append(list(titles))
    out.provenance["source"].append(facts.source)
    out.provenance["revision_id"].append(facts.revision_id)
