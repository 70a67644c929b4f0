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
from collections.abc import Iterator
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


def iter_raw_pages(chunks: ChunkStream, max_page_bytes: int) -> Iterator[RawPage]:
    """Raw ``<page>…</page>`` byte strings in stream order.

    A page cut off by the end of the stream comes last, marked incomplete. A page that grows
    past ``max_page_bytes`` is yielded at once, incomplete, with its first bytes; the rest of it
    is skipped up to its ``</page>`` without being held in memory.
    """
    buffer = bytearray()
    base = 0  # stream offset of buffer[0]
    skipping = False
    for chunk in chunks:
        buffer += chunk
        pos = 0
        while True:
            if skipping:
                end = buffer.find(PAGE_CLOSE, pos)
                if end < 0:
                    pos = max(pos, len(buffer) - len(PAGE_CLOSE))
                    break
                pos, skipping = end + len(PAGE_CLOSE), False
            start = buffer.find(PAGE_OPEN, pos)
            if start < 0:
                pos = max(pos, len(buffer) - len(PAGE_OPEN))
                break
            end = buffer.find(PAGE_CLOSE, start)
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


def _text(element: ET.Element | None) -> str | None:
    return None if element is None else (element.text or "")


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
