"""Where a page's markup nests deeper than any wiki renders, found in one linear pass before parsing.

mwparserfromhell's tokenizer retries an unclosed ``{{`` or ``{|`` as plain text after scanning on to the end
of the page, so its time grows with the number of open constructs times the page length: 60,000 unclosed
``{{`` or 100,000 nested tables in a 1 MB page took minutes, stalling an ingest worker on one bad page
(found by ``benchmarks/fuzz.py``; 100,000 nested ``<div>`` likewise). MediaWiki itself stops expanding
templates at depth 100 (``$wgMaxPPExpandDepth``'s default; Wikimedia sites use 40), and no page of the
samples nests any construct deeper than 20; a page is parsed up to where it first nests deeper than 100, as
an over-long page is parsed up to ``max_chars``.
"""

from __future__ import annotations

import re

MAX_DEPTH = 100

# One alternative per construct: templates and parameters, links, tables, tags. Table markers count anywhere,
# not only where they open a line as MediaWiki wants: the tokenizer tries ``{|`` after a cell's ``|`` too.
# HTML-like tags count too (100,000 nested <div> were as slow), except those HTML lets stand unclosed.
_UNCLOSED_TAGS = "br|hr|wbr|img|col|p|li|dt|dd|tr|td|th|source|meta|link|input|area|base|param|track|embed"
_MARKERS = re.compile(
    r"(\{\{)|(\}\})|(\[\[)|(\]\])|(\{\|)|(\|\})"
    rf"|(<(?!(?:{_UNCLOSED_TAGS})\b)[A-Za-z][^<>]*(?<!/)>)|(</[A-Za-z][^<>]*>)",
    re.IGNORECASE,
)
_PAIRS = (("{{", "template"), ("[[", "link"), ("{|", "table"), ("<", "tag"))


def too_deep(wikitext: str, max_depth: int = MAX_DEPTH) -> tuple[int, str] | None:
    """``(offset, construct)`` of the first opener that nests deeper than ``max_depth``, or None.

    An unclosed opener counts as open to the end of the page, so thousands of stray ``{{`` trip it too; a
    closer without an opener is ignored, as the parser reads it as text.
    """
    depth = [0, 0, 0, 0]
    for match in _MARKERS.finditer(wikitext):
        group = match.lastindex
        if group is None:
            continue
        kind, closes = (group - 1) // 2, (group - 1) % 2 == 1
        if closes:
            depth[kind] = max(0, depth[kind] - 1)
            continue
        depth[kind] += 1
        if depth[kind] > max_depth:
            return match.start(group), _PAIRS[kind][1]
    return None
