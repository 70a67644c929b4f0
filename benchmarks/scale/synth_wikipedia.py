"""Renamed copies of the sample Wikipedia pages, whole or cut to their lead and first sections.

Each sample page is compiled once into ``str.format`` templates of its raw XML (still escaped as the
dump has it): the title, page and revision ids, the redirect target, every article link's target
and the text's SHA-1 become fields. Page ``j`` of the corpus is template ``j % P`` in copy ``j // P``;
its title and every ``[[target]]`` that names an article get the copy's word, so links, infobox
values and table cells point into the same copy (``[[X]]`` becomes ``[[X Word|X]]``: the reader
still sees ``X``). Category, file, interwiki and language links are kept as they are.

An article is its lead (the infobox is there) plus the first ``k`` top-level (``==``) sections; the
categories of the sections cut off are kept at the end, as MediaWiki would still list them.
"""

from __future__ import annotations

import bz2
import hashlib
import itertools
import random
import re
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from xml.sax.saxutils import unescape

from synth_names import copy_word, page_id, revision_ids
from synth_spread import SizeSpread

from ingest.wikitext.titles import classify_target

_PAGE = re.compile(r"  <page>\n.*?</page>\n", re.S)
# a target, then an optional shown text that may hold brackets (``<nowiki>[</nowiki>``) but no ``[[``:
# a link inside a file's caption is matched on its own, the file link around it is not
_LINK = re.compile(r"\[\[([^\[\]|\n]+)(\|(?:(?!\[\[)[^\n])*?)?\]\]")
_SECTION = re.compile(r"^==[^=\n].*==[ \t]*$", re.M)
_CATEGORY = re.compile(r"\[\[\s*category\s*:[^\[\]\n]*\]\]", re.I)
_TEXT = re.compile(r"(<text[^>]*>)(.*?)(</text>)", re.S)
_UNESCAPE = {"&quot;": '"'}


@dataclass(frozen=True)
class PageTemplate:
    number: int
    title: str
    redirect: bool
    head: str  # up to and including the <text> tag: fields title, pid, rid, parent
    lead: str  # wikitext fields: {s}
    sections: tuple[str, ...]
    categories: tuple[str, ...]  # per section: its category links, kept when the section is cut
    tail: str  # from </text>: field sha1


@dataclass(frozen=True)
class Dump:
    header: str  # <mediawiki …> and <siteinfo>
    pages: tuple[PageTemplate, ...]
    footer: str


def _escape(text: str) -> str:
    return text.replace("{", "{{").replace("}", "}}")


def compile_wikitext(raw: str) -> str:
    """Wikitext as a format string whose article links point at ``<target> {s}``, shown as before."""
    out, pos = [], 0
    for match in _LINK.finditer(raw):
        out.append(_escape(raw[pos : match.start()]))
        target, pipe = match.group(1), match.group(2)
        if classify_target(target).kind == "article":
            name, hash_mark, fragment = target.partition("#")
            shown = pipe[1:] if pipe is not None else target
            out.append(f"[[{_escape(name.strip())} {{s}}{_escape(hash_mark + fragment)}|{_escape(shown)}]]")
        else:
            out.append(_escape(match.group(0)))
        pos = match.end()
    out.append(_escape(raw[pos:]))
    return "".join(out)


def _fields(xml: str, title: str) -> str:
    """The page's XML before its text, as a format string with the renamed title and new ids."""
    xml = _escape(xml)
    xml = xml.replace(f"<title>{_escape(title)}</title>", "<title>{title}</title>", 1)
    xml, pages = re.subn(r"(</ns>\s*<id>)\d+(</id>)", r"\1{pid}\2", xml, count=1)
    xml, revisions = re.subn(r"(<revision>\s*<id>)\d+(</id>)", r"\1{rid}\2", xml, count=1)
    xml = re.sub(r"<parentid>\d+</parentid>", "<parentid>{parent}</parentid>", xml, count=1)
    xml = re.sub(r'(<redirect title=")([^"]*)(" />)', r"\1\2 {s}\3", xml, count=1)
    if not (pages and revisions and "{title}" in xml):
        raise ValueError(f"page {title!r}: no title, page id or revision id where the 0.10 layout has them")
    return xml


def compile_page(xml: str, number: int) -> PageTemplate:
    title_match = re.search(r"<title>(.*?)</title>", xml)
    text_match = _TEXT.search(xml)
    if title_match is None or text_match is None:
        raise ValueError(f"page {number} of the sample has no <title> or <text>")
    title = title_match.group(1)
    raw = text_match.group(2)
    cuts = [m.start() for m in _SECTION.finditer(raw)]
    bounds = [0, *cuts, len(raw)]
    parts = [raw[a:b] for a, b in itertools.pairwise(bounds)]
    tail = _escape(xml[text_match.start(3) :])
    tail, found = re.subn(r"<sha1>[^<]*</sha1>", "<sha1>{sha1}</sha1>", tail, count=1)
    if not found:
        raise ValueError(f"page {title!r} has no <sha1>")
    return PageTemplate(
        number=number,
        title=title,
        redirect="<redirect" in xml[: text_match.start()],
        head=_fields(xml[: text_match.end(1)], title),
        lead=compile_wikitext(parts[0]),
        sections=tuple(compile_wikitext(p) for p in parts[1:]),
        categories=tuple("".join(f"\n{c}" for c in _CATEGORY.findall(p)) for p in parts[1:]),
        tail=tail,
    )


@lru_cache(maxsize=2)
def load_page_templates(path: Path) -> Dump:
    """The compiled pages of a sample dump (kept: a process making several corpora compiles once)."""
    with open(path, "rb") as f:
        compressed = f.read(3) == b"BZh"
    text = (bz2.open if compressed else open)(path, "rt", encoding="utf-8").read()
    pages = list(_PAGE.finditer(text))
    if not pages:
        raise ValueError(f"{path}: no <page> elements")
    if "{s}" in text or "{title}" in text:
        raise ValueError(f"{path} holds a field name of the copier")
    templates = tuple(compile_page(m.group(0), n) for n, m in enumerate(pages))
    return Dump(text[: pages[0].start()], templates, text[pages[-1].end() :])


def mediawiki_sha1(text: str) -> str:
    """The revision SHA-1 a dump carries: of the unescaped text, in base 36, 31 digits."""
    number = int(hashlib.sha1(text.encode("utf-8")).hexdigest(), 16)
    digits = []
    while number:
        number, digit = divmod(number, 36)
        digits.append("0123456789abcdefghijklmnopqrstuvwxyz"[digit])
    return "".join(reversed(digits)).rjust(31, "0")


@lru_cache(maxsize=4096)
def _word(copy: int) -> str:
    return copy_word(copy)


@dataclass
class PageCounts:
    pages: int = 0
    redirects: int = 0
    articles: int = 0
    whole: int = 0
    sections: int = 0
    text_chars: int = 0

    def add(self, other: PageCounts) -> None:
        for name in ("pages", "redirects", "articles", "whole", "sections", "text_chars"):
            setattr(self, name, getattr(self, name) + getattr(other, name))


def render_page(
    template: PageTemplate, index: int, copy: int, spread: SizeSpread, rng: random.Random
) -> tuple[str, int, int]:
    """The XML of corpus page ``index``, the sections it kept and its wikitext's length."""
    word = _word(copy)
    fields = {"s": word}
    keep = len(template.sections)
    if not template.redirect:
        keep = spread.article_sections(rng, len(template.sections))
    text = template.lead.format_map(fields) + "".join(s.format_map(fields) for s in template.sections[:keep])
    text += "".join(template.categories[keep:])
    rid, parent = revision_ids(index)
    head = template.head.format_map(
        {"title": f"{template.title} {word}", "pid": page_id(index), "rid": rid, "parent": parent, "s": word}
    )
    sha1 = mediawiki_sha1(unescape(text, _UNESCAPE))
    return head + text + template.tail.format_map({"sha1": sha1}), keep, len(text)


def render_pages(
    dump: Dump, start: int, count: int, spread: SizeSpread, seed: int
) -> tuple[bytes, PageCounts]:
    rng = random.Random(f"{seed}/pages/{start}")
    per_copy = len(dump.pages)
    out, counts = [], PageCounts()
    for index in range(start, start + count):
        copy, number = divmod(index, per_copy)
        template = dump.pages[number]
        xml, kept, chars = render_page(template, index, copy, spread, rng)
        out.append(xml)
        counts.pages += 1
        counts.redirects += template.redirect
        if not template.redirect:
            counts.articles += 1
            counts.whole += kept == len(template.sections)
            counts.sections += kept
        counts.text_chars += chars
    return "".join(out).encode("utf-8"), counts
