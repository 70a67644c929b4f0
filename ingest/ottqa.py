"""Adapter for the OTT-QA release: its tables and passages become pages / passages / table_rows / links.

OTT-QA ships Wikipedia tables (``tables.json.gz``: header and rows of ``[text, ["/wiki/Page", …]]``
cells, plus the page intro and section) and the lead passages of linked pages
(``passages.json.gz``: ``{"/wiki/Page": text}``). Writing them into the same tables as the XML
ingest lets every downstream stage treat the benchmark corpus as one more Wikipedia source.

OTT-QA has no page ids; a page id here is a stable 63-bit hash of the normalized title, so the
same page gets the same id in every run and in both files. Rows are built as Arrow columns
(``ingest.ottqa_tables``), not a dict per cell and link: the adapter then runs at over half the speed of
decoding the release's JSON.
"""

from __future__ import annotations

import bz2
import gzip
import io
import json
import logging
from collections.abc import Iterator
from pathlib import Path

from pydantic import BaseModel, Field

from ingest.json_stream import JsonStreamError, Member, ObjectMembers
from ingest.ottqa_tables import (
    OttqaTable,
    PageColumns,
    TableColumns,
    all_text,
    is_text,
    page_id_for,
    read_table,
    text_value,
    url_title,
)
from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.sources import detect_compression, file_sha256, open_decompressed
from schemas.ingest import IngestSummary
from schemas.wikipedia import Link, Page, Passage, TableRow

log = logging.getLogger(__name__)

READER = "ottqa"
TABLE_FILE = "tables.json.gz"
PASSAGE_FILE = "passages.json.gz"
FLUSH_ROWS = 50_000  # table rows (or passages) collected before they are handed to the Parquet sinks
__all__ = ["PASSAGE_FILE", "TABLE_FILE", "OttqaIngestOptions", "ingest_ottqa", "page_id_for"]


class OttqaIngestOptions(BaseModel):
    max_error_rate: float | None = Field(0.01, description="fail the run above this quarantined share")
    max_in_memory_bytes: int = Field(256 << 20, description="files up to this size are decoded whole")
    limit: int | None = Field(None, description="read at most this many members of each file (for samples)")


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
    pages = PageColumns()
    tables = TableColumns()
    seen_pages: set[str] = set()
    seen_intros: set[tuple[str, tuple[str, ...]]] = set()
    read = written = 0

    def add_page(title: str) -> None:
        if title not in seen_pages:
            seen_pages.add(title)
            pages.page_titles.append(title)

    try:
        for member in _members(tables_path, output, options, "tables", _whole_document(tables_path, options)):
            read += 1
            try:
                table = read_table(member.key, member.value)
            except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                output.reject(
                    error=exc,
                    record_id=member.key,
                    char_offset=member.offset,
                    excerpt=str(member.value)[:1000],
                    error_type=f"BadTable:{type(exc).__name__}",
                )
                continue
            page_title = table.page_title if table.rows else member.value["title"]
            add_page(page_title)
            _table_context_passages(pages, member.value, page_title, table, seen_intros)
            tables.add(table)
            written += 1
            if tables.rows >= FLUSH_ROWS:
                _write(output, pages, tables)
        document = _whole_document(passages_path, options)
        if document is not None and (bulk := _bulk_passages(document, options)) is not None:
            titles, texts = bulk
            for title in titles:
                add_page(title)
            pages.add_passages(titles, texts)
            read, written = read + len(titles), written + len(titles)
            document = {}  # every member is read
        for member in _members(passages_path, output, options, "passages", document):
            read += 1
            title, problem = _passage_title(member)
            if title is None:
                output.reject(
                    error=problem,
                    error_type="BadPassage",
                    record_id=member.key,
                    char_offset=member.offset,
                    excerpt=str(member.value)[:1000],
                )
                continue
            add_page(title)
            pages.add_passage(title, [], member.value)
            written += 1
            if len(pages.passage_titles) >= FLUSH_ROWS:
                _write(output, pages, tables)
        _write(output, pages, tables)
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


def _write(output: ShardOutput, pages: PageColumns, tables: TableColumns) -> None:
    """Hand what is collected to the sinks, as Arrow tables."""
    output["pages"].write_table(pages.take_pages())
    output["passages"].write_table(pages.take_passages())
    rows, links = tables.take()
    output["table_rows"].write_table(rows)
    output["links"].write_table(links)


def _passage_title(member: Member) -> tuple[str | None, str]:
    """The page title of a member of the passages file, or None and why it cannot be a passage."""
    if not (is_text(member.key) and is_text(member.value)):
        try:
            text_value(member.key, "passage key")
            text_value(member.value, "passage text")
        except ValueError as exc:
            return None, str(exc)
    title = url_title(member.key)  # the same URLs as the cell links: mostly normalized already
    return (title, "") if title else (None, "passage key is not a /wiki/ URL naming an article")


def _table_context_passages(
    pages: PageColumns,
    table: dict,
    page_title: str,
    read: OttqaTable,
    seen: set[tuple[str, tuple[str, ...]]],
) -> None:
    """The page intro and the section text around a table, once per page and section."""
    section_path = read.section_path if read.rows else []
    for path, text in (([], table.get("intro")), (section_path, table.get("section_text"))):
        key = (page_title, tuple(path))
        if text and key not in seen:
            seen.add(key)
            pages.add_passage(page_title, list(path), text)


def _members(
    path: Path, output: ShardOutput, options: OttqaIngestOptions, what: str, document: dict | None
) -> Iterator[Member]:
    """Members of one OTT-QA JSON file, in file order: of ``document`` when the file was decoded whole, else
    streamed member by member, so a break in it is quarantined with its offset and the members before it
    are kept."""
    bar = progress(f"ottqa {what}", unit=f" {what}")
    try:
        if document is not None:
            members: Iterator[Member] = (Member(key, value, None) for key, value in document.items())
        else:
            members = _streamed_members(path, output)
        for count, member in enumerate(members):
            if options.limit is not None and count >= options.limit:
                break
            bar.update()
            yield member
    finally:
        bar.close()


def _whole_document(path: Path, options: OttqaIngestOptions) -> dict | None:
    """The file decoded whole by the C parser when it is under ``max_in_memory_bytes`` (the fast path: the
    release is ~50 MB compressed); None when it is larger or does not decode (it is then streamed)."""
    if path.stat().st_size > options.max_in_memory_bytes:
        return None
    try:
        document = json.loads(_decompressed(path))
    except (ValueError, EOFError, OSError, RecursionError):
        return None  # the streaming reader will say exactly where and why
    return document if isinstance(document, dict) else None


def _bulk_passages(document: dict, options: OttqaIngestOptions) -> tuple[list[str], list[str]] | None:
    """(titles, texts) of every passage at once when all keys and texts are good strings and every key
    names an article; None when any member needs the one-by-one path (and its quarantine)."""
    keys, texts = list(document), list(document.values())
    if options.limit is not None:
        keys, texts = keys[: options.limit], texts[: options.limit]
    if not (all_text(keys) and all_text(texts)):
        return None
    titles = list(map(url_title, keys))
    return (titles, texts) if all(titles) else None


def _decompressed(path: Path) -> bytes:
    """The whole file decompressed in one call (several times faster than reading a ``GzipFile``)."""
    data = path.read_bytes()
    kind = detect_compression(path)
    if kind == "gzip":
        return gzip.decompress(data)
    return bz2.decompress(data) if kind == "bz2" else data


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
