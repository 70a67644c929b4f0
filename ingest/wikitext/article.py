"""One article's wikitext → passage, infobox, table and link rows, plus its categories and problems.

The page is parsed once with mwparserfromhell and walked once: top-level headings cut it into
sections, each section is rendered to text (infoboxes and tables are emitted as rows on the way)
and then split into paragraphs. Only table substrings go through wikitextparser. Bad markup is
reported in ``problems`` with its offset; the rest of the page still comes out.
"""

from __future__ import annotations

import re

import mwparserfromhell
from mwparserfromhell.nodes import Heading, Node

from ingest.wikitext.context import PageContext, ParsedArticle, WikitextProblem
from ingest.wikitext.infobox import extract_infobox
from ingest.wikitext.nesting import MAX_DEPTH, too_deep
from ingest.wikitext.render import Renderer
from ingest.wikitext.sink import Sink
from ingest.wikitext.tables import extract_table
from ingest.wikitext.text import clean_block, clean_inline

DEFAULT_MAX_CHARS = 2_000_000

# Paragraphs shorter than this are headings-in-disguise, stray list labels or leftovers of removed
# templates ("Notes:"); a real one-sentence paragraph is longer.
MIN_PASSAGE_CHARS = 20

# Sections of citations and pointers elsewhere: no passages from them (their tables, infoboxes and
# categories are still read).
SKIPPED_SECTIONS = frozenset(
    {
        "references",
        "external links",
        "external link",
        "notes",
        "further reading",
        "see also",
        "footnotes",
        "citations",
        "sources",
        "notes and references",
        "references and notes",
        "works cited",
        "bibliography and notes",
    }
)

_PARAGRAPH_BREAK = re.compile(r"\n[^\S\n]*\n\s*")


def parse_article(
    page_id: int, title: str, wikitext: str, *, max_chars: int = DEFAULT_MAX_CHARS
) -> ParsedArticle:
    """Parse one article; never raises on odd wikitext (problems are reported instead)."""
    context = PageContext(page_id, title, wikitext)
    if len(wikitext) > max_chars:
        context.report(
            "too_long",
            max_chars,
            f"page has {len(wikitext)} characters; only the first {max_chars} were parsed",
        )
        wikitext = wikitext[:max_chars]
        context.wikitext = wikitext
    if (deep := too_deep(wikitext)) is not None:
        cut, construct = deep
        context.report(
            "too_deep",
            cut,
            f"{construct} markup nests deeper than {MAX_DEPTH} here; only the text before it was parsed",
        )
        wikitext = wikitext[:cut]
        context.wikitext = wikitext
    renderer = Renderer(
        context,
        on_infobox=lambda node, name: extract_infobox(renderer, context, node, name),
        on_table=lambda raw: extract_table(renderer, context, raw),
    )
    try:
        code = mwparserfromhell.parse(wikitext, skip_style_tags=True)
    except Exception as error:  # the tokenizer's own limits; nothing of the page can be read then
        context.report("parse_error", 0, f"mwparserfromhell failed: {type(error).__name__}: {error}")
    else:
        _walk_sections(renderer, context, code.nodes)
    return context.article


def _walk_sections(renderer: Renderer, context: PageContext, nodes: list[Node]) -> None:
    """Cut the page at top-level headings and emit each section's passages."""
    trail: list[tuple[int, str]] = []
    run: list[Node] = []
    for node in nodes:
        if type(node) is not Heading:
            run.append(node)
            continue
        _emit_section(renderer, context, run)
        run = []
        heading_sink = Sink()
        renderer.render(node.title, heading_sink)
        while trail and trail[-1][0] >= node.level:
            trail.pop()
        trail.append((node.level, clean_inline(heading_sink.text())))
        context.section_path = [heading for _, heading in trail]
    _emit_section(renderer, context, run)


def _emit_section(renderer: Renderer, context: PageContext, nodes: list[Node]) -> None:
    if not nodes:
        return
    sink = Sink()
    try:
        renderer.render_nodes(nodes, sink)
    except RecursionError:
        offset = context.locate(str(nodes[0])[:200])
        context.report("parse_error", offset, "markup nested too deeply to render; section skipped")
        return
    if any(heading.lower() in SKIPPED_SECTIONS for heading in context.section_path):
        return
    _emit_passages(context, sink)


def _emit_passages(context: PageContext, sink: Sink) -> None:
    """Split a rendered section at blank lines; each long enough paragraph is one passage."""
    text = sink.text()
    links = sink.links
    link_index = 0
    start = 0
    boundaries = [(m.start(), m.end()) for m in _PARAGRAPH_BREAK.finditer(text)]
    boundaries.append((len(text), len(text)))
    for end, next_start in boundaries:
        first_link = link_index
        while link_index < len(links) and links[link_index].position < next_start:
            link_index += 1
        paragraph = clean_block(text[start:end], drop_markup=context.markup_leaked)
        start = next_start
        if len(paragraph) < MIN_PASSAGE_CHARS:
            continue
        order = len(context.article.passages)
        refs = context.emit_links(links[first_link:link_index], "passage", order)
        context.article.passages.append(
            {
                "page_id": context.page_id,
                "page_title": context.title,
                "section_path": context.section_path,
                "order": order,
                "text": paragraph,
                "links": refs,
            }
        )


__all__ = ["DEFAULT_MAX_CHARS", "ParsedArticle", "WikitextProblem", "parse_article"]
