"""Render a parsed mwparserfromhell tree to reader-visible text, in one pass over its nodes.

Infoboxes and wikitables are handed to callbacks (they become rows of their own, not text),
categories are collected, and wikilinks are remembered with their position in the output so the
caller can attach them to the paragraph, infobox value or cell that holds them.
"""

from __future__ import annotations

import html
import re
from collections.abc import Callable, Sequence
from functools import lru_cache

import mwparserfromhell
from mwparserfromhell.nodes import (
    Argument,
    Comment,
    ExternalLink,
    Heading,
    HTMLEntity,
    Node,
    Tag,
    Template,
    Text,
    Wikilink,
)
from mwparserfromhell.wikicode import Wikicode

from ingest.wikitext.context import PageContext
from ingest.wikitext.sink import PendingLink, Sink
from ingest.wikitext.templates import inline_handler, normalize_template_name, template_args
from ingest.wikitext.titles import LinkTarget, category_name, classify_target

InfoboxHook = Callable[[Template, str], None]
TableHook = Callable[[str], None]

# Infobox-like templates that do not start with "Infobox" but carry the same key = value facts.
INFOBOX_LIKE = frozenset({"taxobox", "automatic taxobox", "speciesbox", "subspeciesbox"})

# Tags whose content is not prose: references, media, math markup, code, hidden sections.
_SKIP_TAGS = frozenset(
    {
        "ref",
        "references",
        "gallery",
        "timeline",
        "imagemap",
        "math",
        "chem",
        "ce",
        "score",
        "graph",
        "hiero",
        "templatedata",
        "mapframe",
        "maplink",
        "inputbox",
        "categorytree",
        "syntaxhighlight",
        "source",
        "includeonly",
        "noinclude",
        "style",
        "script",
        "section",
        "indicator",
    }
)
_BREAK_TAGS = frozenset({"br", "hr", "p"})
_LIST_TAGS = frozenset({"li", "dt", "dd"})
_LINK_TRAIL = re.compile(r"[a-z]+")
_PARENTHETICAL = re.compile(r"\s*\([^()]*\)\s*$")
_LINE_TABLE_START = re.compile(r"(?:^|\n)[ \t:]*\{\|")
_TABLE_LINE = re.compile(r"^[ \t:]*(\{\||\|\})", re.MULTILINE)
_SURROGATES = re.compile("[\ud800-\udfff]")


def find_table_end(wikitext: str, start: int) -> int | None:
    """End offset of the table opening at ``start`` (after its ``|}``), nested tables counted.

    Tables are line-based in MediaWiki, so a line scan finds the end even where the tokenizer
    failed; None means the table is never closed.
    """
    depth = 0
    for match in _TABLE_LINE.finditer(wikitext, wikitext.rfind("\n", 0, start) + 1):
        if match.group(1) == "{|":
            depth += 1
        else:
            depth -= 1
            if depth == 0:
                return match.end()
    return None


@lru_cache(maxsize=65536)
def _target(raw: str) -> LinkTarget:
    return classify_target(raw)


def _display_title(raw: str) -> str:
    """What ``[[target]]`` shows: the target as written, minus a leading colon."""
    text = raw.strip()
    if text.startswith(":"):
        text = text[1:]
    return html.unescape(text) if "&" in text else text


def _pipe_trick(target: LinkTarget) -> str:
    """``[[Foo (bar)|]]`` shows ``Foo``: namespace and trailing parenthetical removed."""
    title = target.title
    if target.kind != "article" and ":" in title:
        title = title.split(":", 1)[1]
    return _PARENTHETICAL.sub("", title.split(",", 1)[0]) or title


class Renderer:
    """Turns wikicode into text in a :class:`Sink`; one instance serves one page."""

    def __init__(self, context: PageContext, on_infobox: InfoboxHook, on_table: TableHook) -> None:
        self.context = context
        self.on_infobox = on_infobox
        self.on_table = on_table
        self._handlers: dict[type[Node], Callable[[Node, Sink], PendingLink | None]] = {
            Wikilink: self._wikilink,  # type: ignore[dict-item]
            Template: self._template,  # type: ignore[dict-item]
            Tag: self._tag,  # type: ignore[dict-item]
            HTMLEntity: self._entity,  # type: ignore[dict-item]
            ExternalLink: self._external_link,  # type: ignore[dict-item]
            Argument: self._argument,  # type: ignore[dict-item]
            Heading: self._heading,  # type: ignore[dict-item]
            Comment: self._ignore,
        }

    def render(self, code: Wikicode, sink: Sink) -> None:
        self.render_nodes(code.nodes, sink)

    def render_nodes(self, nodes: Sequence[Node], sink: Sink) -> None:
        handlers = self._handlers
        last_link: PendingLink | None = None
        skip = 0  # characters of a recovered table still to pass over (see _recover_markup)
        for node in nodes:
            if type(node) is Text:
                value = node.value
                if skip:
                    if len(value) <= skip:
                        skip -= len(value)
                        continue
                    value, skip = value[skip:], 0
                elif last_link is not None and (trail := _LINK_TRAIL.match(value)):
                    last_link.anchor += trail.group()
                if "{" in value:
                    value, skip = self._recover_markup(value, sink)
                sink.write(value)
                last_link = None
            elif skip:
                skip = max(0, skip - len(str(node)))
            else:
                handler = handlers.get(type(node), self._ignore)
                last_link = handler(node, sink)

    def render_markup(self, wikitext: str) -> Sink:
        """Render a wikitext fragment (a table cell, a caption); plain text skips the parser."""
        sink = Sink()
        if not wikitext:
            return sink
        if not any(char in wikitext for char in "[{<'&_"):
            sink.write(wikitext)
            return sink
        self.render(mwparserfromhell.parse(wikitext, skip_style_tags=True), sink)
        return sink

    def _recover_markup(self, value: str, sink: Sink) -> tuple[str, int]:
        """Deal with ``{{`` or ``{|`` that mwparserfromhell left as plain text.

        An unclosed ``{{`` is reported. A ``{|`` is either unclosed (reported) or a table the
        tokenizer gave up on although it is closed: then the table is read from the page text and
        its characters are skipped here. Returns the text still to write and the characters to skip.
        """
        context = self.context
        if "{{" in value:
            context.markup_leaked = True
            offset = context.locate(value, "{{")
            context.report("unclosed_template", offset, "'{{' without a matching '}}'")
        match = _LINE_TABLE_START.search(value) if "{|" in value else None
        if match is None:
            return value, 0
        start_in_value = match.end() - 2
        base = context.locate(value)
        start = base + start_in_value
        end = find_table_end(context.wikitext, start) if base >= 0 else None
        if end is None:
            context.markup_leaked = True
            context.report("unclosed_table", start, "table start '{|' without a matching '|}'")
            return value, 0
        sink.write(value[:start_in_value])
        self.on_table(context.wikitext[start:end])
        rest_in_value = len(value) - start_in_value
        length = end - start
        if length > rest_in_value:
            return "", length - rest_in_value
        return self._recover_markup(value[start_in_value + length :], sink)

    @staticmethod
    def _ignore(node: Node, sink: Sink) -> None:
        return None

    def _wikilink(self, node: Wikilink, sink: Sink) -> PendingLink | None:
        raw = str(node.title)
        target = _target(raw)
        if not target.leading_colon:
            if target.kind == "category":
                self.context.add_category(category_name(target.title))
                return None
            if target.kind in ("media", "language"):
                return None  # embedded media, or a link shown in the sidebar, not in the text
        start_part, start = len(sink.parts), sink.size
        text = node.text
        if text is None:
            sink.write(_display_title(raw))
        elif text.nodes:
            self.render(text, sink)
        else:
            sink.write(_pipe_trick(target))
        if target.kind != "article":
            return None
        link = PendingLink(start, target.title, target.fragment, sink.since(start_part))
        sink.links.append(link)
        return link

    def _template(self, node: Template, sink: Sink) -> None:
        name = normalize_template_name(str(node.name))
        lower = name.lower()
        if lower.startswith("infobox") or lower in INFOBOX_LIKE:
            self.on_infobox(node, name)
            return
        handler = inline_handler(lower)
        if handler is not None:
            handler(template_args(node), self.render, sink)

    def _tag(self, node: Tag, sink: Sink) -> None:
        tag = str(node.tag).strip().lower()
        if tag == "table":
            if node.wiki_markup == "{|":
                self.on_table(str(node))
            return  # HTML tables are left out: no row structure is extracted from them.
        if tag in _SKIP_TAGS:
            return
        if tag in _BREAK_TAGS:
            sink.write("\n")
        contents = node.contents
        if contents is None:
            return
        if tag in _LIST_TAGS and node.wiki_markup is None:
            sink.write("\n")
        if tag == "nowiki":
            sink.write(html.unescape(str(contents)))
            return
        self.render(contents, sink)

    @staticmethod
    def _entity(node: HTMLEntity, sink: Sink) -> None:
        """``&#xD800;`` normalizes to a lone surrogate, which no UTF-8 file (nor Parquet) can hold: it is
        written as U+FFFD, as browsers show it."""
        sink.write(_SURROGATES.sub("\ufffd", node.normalize()))

    def _external_link(self, node: ExternalLink, sink: Sink) -> None:
        if node.brackets and node.title is not None:
            self.render(node.title, sink)

    def _argument(self, node: Argument, sink: Sink) -> None:
        if node.default is not None:
            self.render(node.default, sink)

    def _heading(self, node: Heading, sink: Sink) -> None:
        """Headings nested in tags or templates: kept as a line of text."""
        sink.write("\n")
        self.render(node.title, sink)
        sink.write("\n")
