"""Table rows as 'Page / Section / Caption: Season: 2000-01, Team: Dallas, Games played: 5'.

Each cell is named by its column header (stacked headers already joined by the ingest), so a row
read alone still says which number is which. Empty cells are left out; a row with no text is skipped.
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from index.lexicon import Lexicon
from index.verbalize.common import context, page_evidence


def row_evidence(row: Mapping[str, Any], lexicon: Lexicon, source: str) -> dict | None:
    cells = []
    targets = []
    for cell in row["cells"]:
        text = cell["text"].strip()
        if not text:
            continue
        header = cell["header"].strip().rstrip(":").strip()
        cells.append(f"{header}: {text}" if header and header != text else text)
        targets.extend(link["target"] for link in cell["links"] or [])
    if not cells:
        return None
    title = row["page_title"]
    prefix = context(title, *row["section_path"], row["caption"])
    return page_evidence(
        "table",
        f"{prefix}: {', '.join(cells)}",
        title,
        targets,
        lexicon,
        source,
        page_id=row["page_id"],
        section_path=row["section_path"],
        table_id=row["table_id"],
        table_index=row["table_index"],
        row_index=row["row_index"],
    )
