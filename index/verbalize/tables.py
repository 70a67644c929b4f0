"""Table rows as 'Page / Section / Caption: Season: 2000-01, Team: Dallas, Games played: 5'.

Each cell is named by its column header (stacked headers already joined by the ingest), so a row
read alone still says which number is which. Empty cells are left out; a row with no text is skipped.
"""

from __future__ import annotations

from collections import Counter

import pyarrow as pa

from index.lexicon import Lexicon
from index.verbalize.buffer import EvidenceBuffer
from index.verbalize.columns import nested, nested_array, rows
from index.verbalize.common import PageFacts, add_page_row, context, page_facts

PROVENANCE = ("page_id", "revision_id", "section_path", "table_id", "table_index", "row_index")
COLUMNS = [
    "table_id",
    "page_id",
    "page_title",
    "section_path",
    "table_index",
    "caption",
    "row_index",
    "cells",
]


def row_text(headers: list[str], texts: list[str]) -> str | None:
    """'Header: text, …' of the non-empty cells; None when every cell is empty."""
    cells = []
    for raw_header, raw_text in zip(headers, texts, strict=True):
        text = raw_text.strip()
        if not text:
            continue
        header = raw_header.strip().rstrip(":").strip()
        cells.append(f"{header}: {text}" if header and header != text else text)
    return ", ".join(cells) if cells else None


def row_batch(
    batch: pa.RecordBatch, lexicon: Lexicon, source: str, out: EvidenceBuffer, skipped: Counter
) -> None:
    """Every table row of ``batch`` with text into ``out``; rows without text are counted."""
    cell_starts, (headers, texts) = nested(batch.column("cells"), "header", "text")
    _, links = nested_array(batch.column("cells"), "links")
    link_starts, (targets,) = nested(links, "target")
    columns = rows(
        batch, "table_id", "page_id", "page_title", "section_path", "table_index", "caption", "row_index"
    )
    pages: dict[str, PageFacts] = {}
    prov = out.provenance
    for i, (table_id, page_id, title, section_path, table_index, caption, row_index) in enumerate(columns):
        first, last = cell_starts[i], cell_starts[i + 1]
        said = row_text(headers[first:last], texts[first:last])
        if said is None:
            skipped["row without text"] += 1
            continue
        row_targets = [
            target
            for cell in range(first, last)
            if texts[cell].strip()  # the links of empty cells are left out with them
            for target in targets[link_starts[cell] : link_starts[cell + 1]]
        ]
        facts = pages.get(title)
        if facts is None:
            facts = pages[title] = page_facts(lexicon, title, source)
        prefix = context(title, *section_path, caption)
        add_page_row(out, lexicon, f"{prefix}: {said}", title, row_targets, facts)
        prov["page_id"].append(page_id)
        prov["section_path"].append(section_path)
        prov["table_id"].append(table_id)
        prov["table_index"].append(table_index)
        prov["row_index"].append(row_index)
