"""Evidence rows collected column by column, then turned into one Arrow table per batch.

Building a dict per row and converting a list of dicts (nested provenance included) cost the
verbalizer more than saying the records; here each verbalizer appends straight to the columns it
fills, the provenance fields a source never sets are one null array per batch, and nothing is kept
between batches.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

import pyarrow as pa

from index.verbalize.common import PROVENANCE_FIELDS
from schemas import arrow_schema
from schemas.evidence import Evidence, Provenance

EVIDENCE_SCHEMA = arrow_schema(Evidence)
PROVENANCE_SCHEMA = arrow_schema(Provenance)


class EvidenceBuffer:
    """The evidence rows of one batch: ``ids``, ``texts``, … are plain lists verbalizers append to."""

    def __init__(self, source_type: str, provenance_fields: tuple[str, ...]):
        unknown = set(provenance_fields) - {"source", *PROVENANCE_FIELDS}
        if unknown:
            raise TypeError(f"unknown provenance fields: {sorted(unknown)}")
        self.source_type = source_type
        self.ids: list[str] = []
        self.texts: list[str] = []
        self.titles: list[str] = []
        self.page_titles: list[str | None] = []
        self.entity_ids: list[list[str]] = []
        self.link_targets: list[list[str]] = []
        self.provenance: dict[str, list[Any]] = {name: [] for name in ("source", *provenance_fields)}

    def __len__(self) -> int:
        return len(self.ids)

    def add_row(self, row: Mapping[str, Any]) -> None:
        """One evidence dict (``schemas.evidence.Evidence`` fields) as the row verbalizers return it."""
        self.ids.append(row["evidence_id"])
        self.texts.append(row["text"])
        self.titles.append(row["title"])
        self.page_titles.append(row["page_title"])
        self.entity_ids.append(row["entity_ids"])
        self.link_targets.append(row["link_targets"])
        provenance = row["provenance"]
        for name, values in self.provenance.items():
            values.append(provenance[name])

    def table(self) -> pa.Table:
        n = len(self.ids)
        children = []
        for field in PROVENANCE_SCHEMA:
            values = self.provenance.get(field.name)
            if values is not None:
                children.append(pa.array(values, field.type))
            elif field.name == "section_path":  # never null: an empty path
                children.append(pa.array([[]] * n, field.type))
            else:
                children.append(pa.nulls(n, field.type))
        provenance = pa.StructArray.from_arrays(children, fields=list(PROVENANCE_SCHEMA))
        values = (
            self.ids,
            [self.source_type] * n,
            self.texts,
            self.titles,
            self.page_titles,
            self.entity_ids,
            self.link_targets,
        )
        columns = [pa.array(v, field.type) for v, field in zip(values, EVIDENCE_SCHEMA, strict=False)]
        return pa.Table.from_arrays([*columns, provenance], schema=EVIDENCE_SCHEMA)
