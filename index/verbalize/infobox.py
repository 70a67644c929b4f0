"""Infobox fields as 'Albert Einstein / Infobox scientist: Doctoral advisor: Alfred Kleiner'.

Layout parameters (images, captions, map coordinates' parts, sizes) say nothing a question asks
about; they are skipped and counted, as are fields whose value is empty after parsing.
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Mapping
from typing import Any

from index.lexicon import Lexicon
from index.verbalize.common import context, humanize_key, page_evidence

LAYOUT_KEY = re.compile(
    r"^(image|img|logo|flag|coat_of_arms|seal|map|signature|alt|caption|imagesize|image_size|"
    r"upright|width|pushpin|module|embed|footnotes|lat|long|coord|symbol)",
    re.IGNORECASE,
)


def field_evidence(field: Mapping[str, Any], lexicon: Lexicon, source: str, skipped: Counter) -> dict | None:
    key = field["key"]
    if LAYOUT_KEY.match(key):
        skipped["layout parameter"] += 1
        return None
    value = field["value_text"].strip()
    if not value:
        skipped["empty value"] += 1
        return None
    title = field["page_title"]
    return page_evidence(
        "infobox",
        f"{context(title, field['template'])}: {humanize_key(key)}: {value}",
        title,
        [link["target"] for link in field["value_links"] or []],
        lexicon,
        source,
        page_id=field["page_id"],
        infobox_template=field["template"],
        infobox_key=key,
    )
