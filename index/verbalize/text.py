"""Passages as windows that fit the encoder: 'Albert Einstein / Life and career / Early life: <text>'.

MiniLM reads 256 word pieces; a window of at most ``max_words`` words (default 100, about 130 word
pieces) plus its context prefix fits with room, so nothing is cut off silently when it is embedded.
Windows end at sentence ends where possible; a window keeps the links whose anchor text it contains.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from typing import Any

from index.lexicon import Lexicon
from index.verbalize.common import context, page_evidence

SENTENCE_END = re.compile(r"(?<=[.!?])\s+(?=[\"'(\[]?[A-Z0-9])")


def windows(text: str, max_words: int) -> list[str]:
    """Split text into windows of at most ``max_words`` words, at sentence ends where possible."""
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


def passage_evidence(
    passage: Mapping[str, Any], lexicon: Lexicon, source: str, max_words: int
) -> Iterator[dict]:
    title = passage["page_title"]
    prefix = context(title, *passage["section_path"])
    links = passage["links"] or []
    chunks = windows(passage["text"], max_words)
    for index, chunk in enumerate(chunks):
        if len(chunks) == 1:
            targets = [link["target"] for link in links]
        else:  # a link belongs to the windows its anchor appears in (to the first when it appears in none)
            targets = [
                link["target"]
                for link in links
                if link["anchor"] in chunk or (index == 0 and all(link["anchor"] not in c for c in chunks))
            ]
        yield page_evidence(
            "text",
            f"{prefix}: {chunk}",
            title,
            targets,
            lexicon,
            source,
            page_id=passage["page_id"],
            section_path=passage["section_path"],
            passage_order=passage["order"],
            window=index,
        )
