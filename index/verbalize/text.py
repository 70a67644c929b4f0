"""Passages as windows that fit the encoder: 'Albert Einstein / Life and career / Early life: <text>'.

MiniLM reads 256 word pieces; a window of at most ``max_words`` words (default 100, about 130 word
pieces) plus its context prefix fits with room, so nothing is cut off silently when it is embedded.
Windows end at sentence ends where possible; a window keeps the links whose anchor text it contains.
"""

from __future__ import annotations

import re

import polars as pl
import pyarrow as pa

from index.lexicon import Lexicon
from index.verbalize.buffer import EvidenceBuffer
from index.verbalize.columns import nested, rows
from index.verbalize.common import PageFacts, add_page_row, context, page_facts

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")
PROVENANCE = ("page_id", "revision_id", "section_path", "passage_order", "window")
COLUMNS = ["page_id", "page_title", "section_path", "order", "text", "links"]


def windows(text: str, max_words: int) -> list[str]:
    """Split text into windows of at most ``max_words`` words, at sentence ends where possible."""
    words = text.split()
    if len(words) <= max_words:  # one window: the sentence split below would join every word anyway
        return [" ".join(words)] if words else []
    out: list[str] = []
    current: list[str] = []
    for sentence in SENTENCE_END.split(text.strip()):
        words = sentence.split()
        while len(words) > max_words:  # a sentence longer than a window is cut at word boundaries
            if current:
                out.append(" ".join(current))
                current = []
            out.append(" ".join(words[:max_words]))
            words = words[max_words:]
        if current and len(current) + len(words) > max_words:
            out.append(" ".join(current))
            current = []
        current.extend(words)
    if current:
        out.append(" ".join(current))
    return out


def window_targets(chunks: list[str], index: int, anchors: list[str], targets: list[str]) -> list[str]:
    """The links of one window: those whose anchor it contains (a link whose anchor is in no window
    belongs to the first)."""
    if len(chunks) == 1:
        return targets
    chunk = chunks[index]
    return [
        target
        for anchor, target in zip(anchors, targets, strict=True)
        if anchor in chunk or (index == 0 and all(anchor not in c for c in chunks))
    ]


def passage_batch(
    batch: pa.RecordBatch, lexicon: Lexicon, source: str, max_words: int, out: EvidenceBuffer
) -> None:
    """Every window of every passage of ``batch`` into ``out``."""
    starts, (anchors, targets) = nested(batch.column("links"), "anchor", "target")
    columns = rows(batch, "page_id", "page_title", "section_path", "order", "text")
    from index.verbalize.windows import batch_windows

    all_chunks = batch_windows(pl.from_arrow(batch.column("text")), max_words).to_list()
    pages: dict[str, PageFacts] = {}
    prov = out.provenance
    for i, (page_id, title, section_path, order, _) in enumerate(columns):
        facts = pages.get(title)
        if facts is None:
            facts = pages[title] = page_facts(lexicon, title, source)
        prefix = context(title, *section_path)
        link_anchors, link_targets = anchors[starts[i] : starts[i + 1]], targets[starts[i] : starts[i + 1]]
        chunks = all_chunks[i]
        for index, chunk in enumerate(chunks):
            chosen = window_targets(chunks, index, link_anchors, link_targets)
            add_page_row(out, lexicon, f"{prefix}: {chunk}", title, chosen, facts)
            prov["page_id"].append(page_id)
            prov["section_path"].append(section_path)
            prov["passage_order"].append(order)
            prov["window"].append(index)
