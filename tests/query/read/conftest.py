"""Helpers of the reader tests: evidence rows written by hand, as the index verbalizes them."""

from __future__ import annotations

from query.retrieve.evidence_store import EvidenceRow


def row(source_type: str, text: str, title: str = "Page", entity_ids: list[str] | None = None) -> EvidenceRow:
    return EvidenceRow(f"id-{abs(hash(text))}", source_type, text, title, title, entity_ids or [], {})


def texts(drafts) -> set[str]:
    return {d.text for d in drafts}
