"""Infobox templates → one InfoboxField row per filled-in parameter.

Infobox values are the page's structured facts (``doctoral_advisor = [[Alfred Kleiner]]``), so each
keeps its cleaned text and the links inside it; the link's relation is the parameter name.
"""

from __future__ import annotations

import re

from mwparserfromhell.nodes import Template

from ingest.wikitext.context import PageContext
from ingest.wikitext.render import Renderer
from ingest.wikitext.sink import Sink
from ingest.wikitext.text import clean_items

_COMMENTS = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)


def _field_key(raw: str) -> str:
    """Parameter name as written, minus comments and surrounding or repeated whitespace."""
    if "<!--" in raw:
        raw = _COMMENTS.sub("", raw)
    return " ".join(raw.split())


def extract_infobox(renderer: Renderer, context: PageContext, node: Template, name: str) -> None:
    """Emit the fields of one infobox; infoboxes nested in its values get the next indexes."""
    index = context.infobox_count
    context.infobox_count += 1
    for param in node.params:
        if not param.showkey:
            continue  # positional arguments of an infobox carry no field name
        key = _field_key(str(param.name))
        if not key:
            continue
        sink = Sink()
        renderer.render(param.value, sink)
        value_text = clean_items(sink.text())
        if not value_text and not sink.links:
            continue
        refs = context.emit_links(sink.links, "infobox", index, relation=key)
        context.article.infobox_fields.append(
            {
                "page_id": context.page_id,
                "page_title": context.title,
                "template": name,
                "infobox_index": index,
                "key": key,
                "value_text": value_text,
                "value_links": refs,
            }
        )
