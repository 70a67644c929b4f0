"""Whitespace and punctuation clean-up of rendered wikitext, in the three shapes the rows need.

Rendering drops templates and refs but leaves their surroundings: ``Einstein ({{IPA}}; 14 March``
becomes ``Einstein (; 14 March``. These passes repair what that leaves behind so passages read
like the article does.
"""

from __future__ import annotations

import html
import re

_MAGIC_WORDS = re.compile(r"__[A-Z]+__")
_QUOTE_RUNS = re.compile(r"'{2,}")
_HORIZONTAL_SPACE = re.compile(r"[^\S\n]+")
_ANY_SPACE = re.compile(r"\s+")
_SPACE_BEFORE_PUNCT = re.compile(r" +(?=[,.;:!?)\]])")
_SPACE_AFTER_OPEN = re.compile(r"(?<=[(\[]) +")
_EMPTY_OPENING = re.compile(r"\((?:\s*[;,:])+\s*")
_EMPTY_CLOSING = re.compile(r"(?:\s*[;,])+\s*\)")
_EMPTY_PARENS = re.compile(r" ?\(\s*\)")
_DOUBLE_PUNCT = re.compile(r"([,;])(?:\s*[,;])+")
_COMMENTS = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_STRAY_TAGS = re.compile(r"</?[A-Za-z][^<>\n]*>")
_LIST_MARKERS = re.compile(r"^[*#:;]+\s*")
# Lines of raw table or template markup only reach the text when the page is broken.
_MARKUP_LINE = re.compile(r"^\s*(?:\{\||\|\}|\||!|\{\{|\}\})")


def _repair(text: str) -> str:
    if "<" in text:
        # Markup the tokenizer could not pair (a stray </tr>, a comment inside a failed template)
        # is left as text in the tree.
        text = _STRAY_TAGS.sub("", _COMMENTS.sub("", text))
    if "&" in text:
        text = html.unescape(text)
    if "__" in text:
        text = _MAGIC_WORDS.sub("", text)
    if "''" in text:
        text = _QUOTE_RUNS.sub("", text)
    if "(" in text:
        text = _EMPTY_OPENING.sub("(", text)
        text = _EMPTY_CLOSING.sub(")", text)
        text = _EMPTY_PARENS.sub("", text)
        text = _SPACE_AFTER_OPEN.sub("", text)
    text = _SPACE_BEFORE_PUNCT.sub("", text)
    return _DOUBLE_PUNCT.sub(r"\1", text)


def clean_inline(text: str) -> str:
    """One line of text: table cells, captions, headings, link anchors."""
    return _repair(_ANY_SPACE.sub(" ", text)).strip()


def clean_lines(text: str, *, drop_markup: bool = False) -> list[str]:
    """Non-empty stripped lines; ``drop_markup`` removes raw table/template lines of broken pages."""
    lines = []
    for line in _HORIZONTAL_SPACE.sub(" ", text).split("\n"):
        if drop_markup and _MARKUP_LINE.match(line):
            continue
        cleaned = _repair(line).strip()
        if cleaned:
            lines.append(cleaned)
    return lines


def clean_block(text: str, *, drop_markup: bool = False) -> str:
    """A passage: lines kept (lists stay one item per line), spacing and punctuation repaired."""
    return "\n".join(clean_lines(text, drop_markup=drop_markup))


def clean_items(text: str) -> str:
    """An infobox value or table cell: each line or list item is one item; items joined with ", "."""
    items = []
    for line in clean_lines(text):
        item = _LIST_MARKERS.sub("", line).strip(" ,")
        if item:
            items.append(item)
    return ", ".join(items)


def clean_cell(text: str) -> str:
    """A table cell: like ``clean_items`` ("Richard Day, Paul Groesse" for two <br>-separated names),
    but a parenthesized item stays attached to the one before it ("1927/28 (1st)")."""
    items = clean_items(text)
    return items.replace(", (", " (") if ", (" in items else items
