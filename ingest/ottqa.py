"""Adapter for the OTT-QA release: its tables and passages become pages / passages / table_rows / links.

OTT-QA ships Wikipedia tables (``tables.json.gz``: header and rows of ``[text, ["/wiki/Page", …]]``
cells, plus the page intro and section) and the lead passages of linked pages
(``passages.json.gz``: ``{"/wiki/Page": text}``). Writing them into the same tables as the XML
ingest lets every downstream stage treat the benchmark corpus as one more Wikipedia source.

OTT-QA has no page ids; a page id here is a stable 63-bit hash of the normalized title, so the
same page gets the same id in every run and in both files.
"""

from __future__ import annotations

import gzip
import hashlib
import io
import json
import logging
import re
from collections.abc import Iterator
from functools import lru_cache
from pathlib import Path
from typing import Any

from pydantic import BaseModel, Field

from ingest.json_stream import JsonStreamError, Member, ObjectMembers
from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.sources import file_sha256, open_decompressed
from ingest.wikitext.titles import normalize_title, wiki_url_to_title
from schemas.ingest import IngestSummary
from schemas.wikipedia import Link, Page, Passage, TableRow

log = logging.getLogger(__name__)

READER = "ottqa"
TABLE_FILE = "tables.json.gz"
PASSAGE_FILE = "passages.json.gz"
_TABLE_INDEX = re.compile(r"_(\d+)$")
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT32_MAX = 2**31 - 1


class OttqaIngestOptions(BaseModel):
    max_error_rate: float | None = Field(0.01, description="fail the run above this quarantined share")
    max_in_memory_bytes: int = Field(256 << 20, description="files up to this size are decoded whole")
    limit: int | None = Field(None, description="read at most this many members of each file (for samples)")


@lru_cache(maxsize=1 << 18)
def _url_title(url: str) -> str | None:
    """Cell links repeat across rows and tables (~550k links, far fewer targets): normalize each once."""
    return wiki_url_to_title(url)


@lru_cache(maxsize=1 << 18)
def page_id_for(title: str) -> int:
    """Stable id for a title that has no page id in the source."""
    return int.from_bytes(hashlib.blake2b(title.encode(), digest_size=8).digest(), "big") >> 1


def _page_row(title: str) -> dict[str, Any]:
    return {
        "page_id": page_id_for(title),
        "title": title,
        "namespace": 0,
        "revision_id": None,
        "revision_timestamp": None,
        "redirect_target": None,
        "length": 0,
        "categories": [],
        "source": "ottqa",
    }


def _text(value: object, what: str) -> str:
    """``value`` when it is a string a UTF-8 file can hold, else a ``ValueError`` naming ``what``.

    A value is JSON: a cell may hold a number, a list or null, and a ``\\ud800`` escape or bytes that are not
    UTF-8 (read with surrogateescape) leave a lone surrogate. Either used to fail the Parquet write of the
    whole release, long after the member was read; checked here, it costs the member only.
    """
    if not isinstance(value, str):
        raise ValueError(f"{what} is {type(value).__name__}, not a string")
    if not value.isascii() and _SURROGATE.search(value):
        raise ValueError(f"{what} holds a lone surrogate (a bad \\u escape, or bytes that are not UTF-8)")
    return value


def _link_refs(urls: object, anchor: str) -> list[dict[str, str]]:
    if not isinstance(urls, list):
        raise ValueError(f"cell links are {type(urls).__name__}, not a list")
    refs = []
    for url in urls:
        target = _url_title(_text(url, "cell link"))
        if target:
            refs.append({"target": target, "anchor": anchor})
    return refs


def table_rows(table_id: str, table: dict[str, Any]) -> tuple[list[dict], list[dict]]:
    """``TableRow`` and ``Link`` rows of one OTT-QA table; a ``ValueError`` (or ``KeyError``, ``TypeError``,
    ``IndexError``) when the table is not of the release's shape."""
    title = normalize_title(_text(table["title"], "title"))
    page_title = title[0] if title else table["title"]
    page_id = page_id_for(page_title)
    section_title = _text(table.get("section_title") or "", "section_title")
    section_path = [s.strip() for s in section_title.split(" -- ") if s.strip()]
    for field in ("intro", "section_text"):  # written as passages by the caller
        _text(table.get(field) or "", field)
    match = _TABLE_INDEX.search(_text(table_id, "table id"))
    table_index = int(match.group(1)) if match else 0
    if table_index > _INT32_MAX:
        raise ValueError(f"table index {table_index} of {table_id!r} does not fit 32 bits")
    headers = [_text(h[0], f"header {column + 1}") for column, h in enumerate(table["header"])]
    rows, links = [], []
    for row_index, row in enumerate(table["data"]):
        cells = []
        for column, (text, urls) in enumerate(row):
            _text(text, f"cell {column + 1} of row {row_index + 1}")
            header = headers[column] if column < len(headers) and headers[column] else f"Column {column + 1}"
            refs = _link_refs(urls, text)
            cells.append({"column": column, "header": header, "text": text, "links": refs})
            links.extend(
                {
                    "source_page_id": page_id,
                    "source_title": page_title,
                    "source_kind": "table",
                    "source_index": table_index,
                    "row_index": row_index,
                    "relation": header,
                    "target_title": ref["target"],
                    "target_fragment": None,
                    "anchor_text": text,
                }
                for ref in refs
            )
        rows.append(
            {
                "table_id": table_id,
                "page_id": page_id,
                "page_title": page_title,
                "section_path": section_path,
                "table_index": table_index,
                "caption": None,
                "row_index": row_index,
                "cells": cells,
            }
        )
    return rows, links


def _passage(title: str, section_path: list[str], order: int, text: str) -> dict[str, Any]:
    return {
        "page_id": page_id_for(title),
        "page_title": title,
        "section_path": section_path,
        "order": order,
        "text": text,
        "links": [],
    }


def ingest_ottqa(
    release_dir: Path,
    out_dir: Path,
    options: OttqaIngestOptions | None = None,
    *,
    source_sha256: str | None = None,
) -> IngestSummary:
    """Ingest ``tables.json.gz`` and ``passages.json.gz`` from ``release_dir`` into ``out_dir``;
    ``source_sha256`` is both files' checksum when the caller has it (then they are not hashed again)."""
    options = options or OttqaIngestOptions()
    release_dir = Path(release_dir)
    tables_path, passages_path = release_dir / TABLE_FILE, release_dir / PASSAGE_FILE
    for path in (tables_path, passages_path):
        if not path.is_file():
            raise FileNotFoundError(f"OTT-QA file not found: {path} (pass the folder holding {path.name})")
    output = ShardOutput(
        out_dir,
        READER,
        tables_path,
        "all",
        {"pages": Page, "passages": Passage, "table_rows": TableRow, "links": Link},
        stem="ottqa",
        options=options,
    )
    seen_pages: set[str] = set()
    seen_intros: set[tuple[str, tuple[str, ...]]] = set()
    read = written = 0

    def add_page(title: str) -> None:
        if title not in seen_pages:
            seen_pages.add(title)
            output["pages"].append(_page_row(title))

    try:
        for member in _members(tables_path, output, options, "tables"):
            read += 1
            try:
                rows, links = table_rows(member.key, member.value)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                output.reject(
                    error=exc,
                    record_id=member.key,
                    char_offset=member.offset,
                    excerpt=str(member.value)[:1000],
                    error_type=f"BadTable:{type(exc).__name__}",
                )
                continue
            page_title = rows[0]["page_title"] if rows else member.value["title"]
            add_page(page_title)
            _table_context_passages(output, member.value, page_title, rows, seen_intros)
            output["table_rows"].extend(rows)
            output["links"].extend(links)
            written += 1
        for member in _members(passages_path, output, options, "passages"):
            read += 1
            problem = _passage_problem(member)
            if problem is not None:
                output.reject(
                    error=problem,
                    error_type="BadPassage",
                    record_id=member.key,
                    char_offset=member.offset,
                    excerpt=str(member.value)[:1000],
                )
                continue
            title = wiki_url_to_title(member.key)
            add_page(title)
            output["passages"].append(_passage(title, [], 0, member.value))
            written += 1
    except BaseException:
        output.abort()
        raise
    return output.finish(
        source_sha256=source_sha256 or file_sha256(tables_path) + ":" + file_sha256(passages_path),
        records_read=read,
        records_written=written,
        records_skipped=0,
        bytes_read=tables_path.stat().st_size + passages_path.stat().st_size,
        notes={"pages": len(seen_pages)},
        max_error_rate=options.max_error_rate,
    )


def _passage_problem(member: Member) -> str | None:
    """Why a member of the passages file cannot be a passage, or None when it can."""
    try:
        _text(member.key, "passage key")
        _text(member.value, "passage text")
    except ValueError as exc:
        return str(exc)
    return None if wiki_url_to_title(member.key) else "passage key is not a /wiki/ URL naming an article"


def _table_context_passages(
    output: ShardOutput,
    table: dict,
    page_title: str,
    rows: list[dict],
    seen: set[tuple[str, tuple[str, ...]]],
) -> None:
    """The page intro and the section text around a table, once per page and section."""
    section_path = rows[0]["section_path"] if rows else []
    for path, text in (([], table.get("intro")), (section_path, table.get("section_text"))):
        key = (page_title, tuple(path))
        if text and key not in seen:
            seen.add(key)
            output["passages"].append(_passage(page_title, list(path), len(path), text))


def _members(path: Path, output: ShardOutput, options: OttqaIngestOptions, what: str) -> Iterator[Member]:
    """Members of one OTT-QA JSON file, in file order.

    A file under ``max_in_memory_bytes`` is decoded whole by the C parser (the fast path: the
    release is ~50 MB compressed); a larger one, or one that fails to decode, is streamed member by
    member, so a break in it is quarantined with its offset and the members before it are kept.
    """
    bar = progress(f"ottqa {what}", unit=f" {what}")
    try:
        members = _whole_document(path) if path.stat().st_size <= options.max_in_memory_bytes else None
        if members is None:
            members = _streamed_members(path, output)
        for count, member in enumerate(members):
            if options.limit is not None and count >= options.limit:
                break
            bar.update()
            yield member
    finally:
        bar.close()


def _whole_document(path: Path) -> Iterator[Member] | None:
    try:
        with open_decompressed(path) as raw:
            document = json.loads(raw.read())
    except (ValueError, EOFError, OSError, RecursionError):
        return None  # the streaming reader will say exactly where and why
    if not isinstance(document, dict):
        return None
    return (Member(key, value, None) for key, value in document.items())


def _streamed_members(path: Path, output: ShardOutput) -> Iterator[Member]:
    try:
        # Bytes that are not UTF-8 become lone surrogates instead of failing the read (and with it every
        # member of the read-ahead chunk): the member holding them is quarantined, its neighbours kept.
        with (
            open_decompressed(path) as raw,
            io.TextIOWrapper(raw, encoding="utf-8", errors="surrogateescape") as text,
        ):
            yield from ObjectMembers(text)
    except (JsonStreamError, EOFError, OSError, gzip.BadGzipFile, UnicodeDecodeError) as exc:
        output.reject(
            error=f"{exc}; members before it were kept",
            error_type=type(exc).__name__,
            char_offset=getattr(exc, "offset", None),
            record_id=path.name,
        )
