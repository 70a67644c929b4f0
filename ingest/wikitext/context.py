"""The state one article's parse accumulates: output rows, counters, categories and problems.

The renderer, the infobox and the table extractors all write here, so each of them stays a small
function of (node, context) and the page is walked exactly once.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any

from ingest.wikitext.sink import PendingLink
from ingest.wikitext.text import clean_inline

EXCERPT_CHARS = 300

Row = dict[str, Any]


@dataclass(slots=True)
class WikitextProblem:
    """Something wrong with the input wikitext, kept so bad pages can be found and fixed upstream.

    ``kind`` is one of ``too_long``, ``too_deep``, ``unclosed_template``, ``unclosed_table``,
    ``table_parse_error``, ``parse_error``; ``char_offset`` indexes the page's wikitext.
    """

    kind: str
    char_offset: int
    message: str
    excerpt: str


@dataclass(slots=True)
class ParsedArticle:
    """Rows of one article as plain dicts shaped like the ``schemas.wikipedia`` models."""

    passages: list[Row] = field(default_factory=list)
    infobox_fields: list[Row] = field(default_factory=list)
    table_rows: list[Row] = field(default_factory=list)
    links: list[Row] = field(default_factory=list)
    categories: list[str] = field(default_factory=list)
    problems: list[WikitextProblem] = field(default_factory=list)


@dataclass(slots=True)
class PageContext:
    """Everything gathered while walking one page: the output rows in ``article``, plus walk state."""

    page_id: int
    title: str
    wikitext: str
    section_path: list[str] = field(default_factory=list)
    article: ParsedArticle = field(default_factory=ParsedArticle)
    infobox_count: int = 0
    table_count: int = 0
    markup_leaked: bool = False
    _reported: set[tuple[str, int]] = field(default_factory=set)

    def report(self, kind: str, char_offset: int, message: str) -> None:
        """Record a problem once per (kind, offset), with an excerpt of the wikitext around it."""
        key = (kind, char_offset)
        if key in self._reported:
            return
        self._reported.add(key)
        start = max(0, char_offset)
        excerpt = self.wikitext[start : start + EXCERPT_CHARS]
        self.article.problems.append(WikitextProblem(kind, char_offset, message, excerpt))

    def locate(self, fragment: str, marker: str = "") -> int:
        """Best-effort offset of ``marker`` inside ``fragment`` inside the page (first occurrence).

        mwparserfromhell keeps no source positions, and problems are rare, so a string search
        at report time is cheaper than tracking offsets for every node.
        """
        base = self.wikitext.find(fragment) if fragment else -1
        if base < 0:
            return self.wikitext.find(marker) if marker else -1
        inner = fragment.find(marker) if marker else 0
        return base + max(inner, 0)

    def add_category(self, name: str) -> None:
        if name and name not in self.article.categories:
            self.article.categories.append(name)

    def emit_links(
        self,
        pending: list[PendingLink],
        source_kind: str,
        source_index: int,
        *,
        row_index: int | None = None,
        relation: str | None = None,
        add_rows: bool = True,
    ) -> list[Row]:
        """LinkRef dicts for ``pending``; also one Link row each unless ``add_rows`` is False."""
        refs: list[Row] = []
        for link in pending:
            anchor = clean_inline(link.anchor)
            refs.append({"target": link.target, "anchor": anchor})
            if add_rows:
                self.article.links.append(
                    {
                        "source_page_id": self.page_id,
                        "source_title": self.title,
                        "source_kind": source_kind,
                        "source_index": source_index,
                        "row_index": row_index,
                        "relation": relation,
                        "target_title": link.target,
                        "target_fragment": link.fragment,
                        "anchor_text": anchor,
                    }
                )
        return refs
