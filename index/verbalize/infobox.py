"""Infobox fields as 'Albert Einstein / Infobox scientist: Doctoral advisor: Alfred Kleiner'.

Layout parameters (images, captions, map coordinates' parts, sizes) say nothing a question asks
about; they are skipped and counted, as are fields whose value is empty after parsing.
"""

from __future__ import annotations

import re
from collections import Counter

import pyarrow as pa

from index.lexicon import Lexicon
from index.verbalize.buffer import EvidenceBuffer
from index.verbalize.columns import nested, rows
from index.verbalize.common import PageFacts, add_page_row, context, humanize_key, page_facts

LAYOUT_KEY = re.compile(
    r"^(image|img|logo|flag|coat_of_arms|seal|map|signature|alt|caption|imagesize|image_size|"
    r"upright|width|pushpin|module|embed|footnotes|lat|long|coord|symbol)",
    re.IGNORECASE,
)
PROVENANCE = ("page_id", "revision_id", "infobox_template", "infobox_key")
COLUMNS = ["page_id", "page_title", "template", "key", "value_text", "value_links"]


def field_batch(
    batch: pa.RecordBatch, lexicon: Lexicon, source: str, out: EvidenceBuffer, skipped: Counter
) -> None:
    """Every infobox field of ``batch`` that says something into ``out``; the others are counted."""
    starts, (targets,) = nested(batch.column("value_links"), "target")
    columns = rows(batch, "page_id", "page_title", "template", "key", "value_text")
    pages: dict[str, PageFacts] = {}
    prov = out.provenance
    for i, (page_id, title, template, key, value_text) in enumerate(columns):
        if LAYOUT_KEY.match(key):
            skipped["layout parameter"] += 1
            continue
        value = value_text.strip()
        if not value:
            skipped["empty value"] += 1
            continue
        facts = pages.get(title)
        if facts is None:
            facts = pages[title] = page_facts(lexicon, title, source)
        text = f"{context(title, template)}: {humanize_key(key)}: {value}"
        add_page_row(out, lexicon, text, title, targets[starts[i] : starts[i + 1]], facts)
        prov["page_id"].append(page_id)
        prov["infobox_template"].append(template)
        prov["infobox_key"].append(key)
