"""Split a MediaWiki XML export into pages without building the whole document tree.

A pages-articles dump is one XML document of tens of gigabytes, but every ``<page>`` element
stands on lines of its own and wikitext inside ``<text>`` is entity-escaped, so the byte
strings ``<page>`` and ``</page>`` mark page boundaries exactly. Cutting there and parsing each
page as its own small XML document gives every page an exact byte offset, confines a malformed
page to itself (it is quarantined, its neighbours are not), and makes a dump that breaks off
mid-page lose only that page.
"""

from __future__ import annotations

import xml.etree.ElementTree as ET
from collections.abc import Callable, Iterator
from dataclasses import dataclass

from ingest.sources import ChunkStream

PAGE_OPEN = b"<page>"
PAGE_CLOSE = b"</page>"


@dataclass
class RawPage:
    """One ``<page>`` element's bytes and where it starts in the decompressed stream."""

    offset: int
    xml: bytes
    complete: bool = True
    oversized: bool = False
    problem: str | None = None  # why an incomplete page could not be cut whole; None: the input ends in it


@dataclass
class DumpPage:
    """The fields of one page that the ingest uses."""

    page_id: int
    title: str
    namespace: int
    redirect: str | None
    revision_id: int | None
    timestamp: str | None
    text: str


UNCLOSED = "page has no </page> before the next <page>; the pages after it were read on"
STRAY_CLOSE = "a </page> with no <page> before it (a damaged opening tag); the bytes before it were not read"


def iter_raw_pages(chunks: ChunkStream, max_page_bytes: int) -> Iterator[RawPage]:
    """Raw ``<page>…</page>`` byte strings in stream order.

    A page cut off by the end of the stream comes last, marked incomplete. A page that grows
    past ``max_page_bytes`` is yielded at once, incomplete, with its first bytes; the rest of it
    is skipped up to its ``</page>`` without being held in memory. A page whose ``</page>`` is
    missing ends, incomplete, where the next ``<page>`` starts, so it cannot swallow that page; a
    ``</page>`` without its ``<page>`` is yielded (incomplete, with up to 4 kB before it), so a page
    whose opening tag is damaged is quarantined rather than silently skipped.
    """
    buffer = bytearray()
    base = 0  # stream offset of buffer[0]
    skipping = False
    for chunk in chunks:
        buffer += chunk
        next_open, next_close = _finder(buffer, PAGE_OPEN), _finder(buffer, PAGE_CLOSE)
        pos = 0
        while True:
            if skipping:
                end = next_close(pos)
                following = _before(next_open(pos), end)
                if following >= 0:  # the oversized page never closed: resume at the next page
                    pos, skipping = following, False
                elif end < 0:
                    pos = max(pos, len(buffer) - len(PAGE_CLOSE))
                    break
                else:
                    pos, skipping = end + len(PAGE_CLOSE), False
            start = next_open(pos)
            stray = _before(next_close(pos), start)
            if stray >= 0:
                head = max(pos, stray - 4096)
                yield RawPage(
                    base + stray, bytes(buffer[head : stray + len(PAGE_CLOSE)]), False, problem=STRAY_CLOSE
                )
                pos = stray + len(PAGE_CLOSE)
                continue
            if start < 0:
                pos = max(pos, len(buffer) - len(PAGE_CLOSE))
                break
            end = next_close(start)
            following = _before(next_open(start + len(PAGE_OPEN)), end)
            if following >= 0:
                yield RawPage(base + start, bytes(buffer[start:following]), complete=False, problem=UNCLOSED)
                pos = following
                continue
            if end < 0:
                pos = start
                if len(buffer) - start > max_page_bytes:
                    yield RawPage(
                        base + start, bytes(buffer[start : start + 4096]), complete=False, oversized=True
                    )
                    pos, skipping = start + len(PAGE_OPEN), True
                    continue
                break
            end += len(PAGE_CLOSE)
            yield RawPage(base + start, bytes(buffer[start:end]))
            pos = end
        del buffer[:pos]
        base += pos
    start = -1 if skipping else buffer.find(PAGE_OPEN)
    if start >= 0:
        yield RawPage(base + start, bytes(buffer[start:]), complete=False)


def _finder(buffer: bytearray, tag: bytes) -> Callable[[int], int]:
    """``buffer.find(tag, at)`` that reuses its last answer while it still holds, so that thousands of stray
    tags in a row do not each rescan the buffer up to the next tag (that was quadratic)."""
    searched_from, found = 0, -2  # -2: nothing searched yet

    def find(at: int) -> int:
        nonlocal searched_from, found
        if found == -2 or at < searched_from or at > found >= 0:
            searched_from, found = at, buffer.find(tag, at)
        return found

    return find


def _before(found: int, limit: int) -> int:
    """``found`` if it lies before ``limit`` (-1: no limit), else -1."""
    return found if found >= 0 and (limit < 0 or found < limit) else -1


def _text(element: ET.Element | None) -> str | None:
    """The element's text; elements inside it are malformed (``<id>4<a/>36</id>`` would be read as id 4)."""
    if element is None:
        return None
    if len(element):
        raise ValueError(f"<{element.tag}> holds elements where text belongs")
    return element.text or ""


def parse_page(raw: RawPage) -> DumpPage:
    """Parse one page's XML; raises ``ValueError`` with the reason when it is not a valid page."""
    try:
        root = ET.fromstring(raw.xml)
    except ET.ParseError as exc:
        raise ValueError(f"malformed page XML: {exc}") from exc
    title = _text(root.find("title"))
    page_id = _text(root.find("id"))
    if not title or not page_id or not page_id.isdigit():
        raise ValueError("page lacks a <title> or a numeric <id>")
    redirect = root.find("redirect")
    revision = root.find("revision")
    revision_id = timestamp = None
    text = ""
    if revision is not None:
        rev_id = _text(revision.find("id"))
        revision_id = int(rev_id) if rev_id and rev_id.isdigit() else None
        timestamp = _text(revision.find("timestamp"))
        text = _text(revision.find("text")) or ""
    return DumpPage(
        page_id=int(page_id),
        title=title,
        namespace=int(_text(root.find("ns")) or 0),
        redirect=redirect.get("title") if redirect is not None else None,
        revision_id=revision_id,
        timestamp=timestamp,
        text=text,
    )
