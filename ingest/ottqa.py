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
import os
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

import orjson
import pyarrow as pa
import rapidgzip
from pydantic import BaseModel, Field

from ingest.gc_pause import gc_paused
from ingest.json_stream import JsonStreamError, Member, ObjectMembers
from ingest.ottqa_tables import (
    OttqaTable,
    PageColumns,
    TableColumns,
    all_text,
    cell_link_titles,
    is_text,
    page_id_for,
    page_ids_for,
    passage_table,
    read_table,
    str_array,
    text_value,
    url_title,
)
from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.sources import detect_compression, file_sha256, open_decompressed
from ingest.wikitext.titles import wiki_url_titles
from ingest.workers import worker_pool
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
    workers: int = Field(
        1,
        ge=1,
        description="processes, sized by the caller: 2 or more decode the passages file beside the tables",
    )


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
            pages.add_pages([title], [page_id_for(title)])

    # The passages file (three quarters of the release) is decoded in a second process meanwhile.
    pool = worker_pool(min(2, options.workers))
    spill = output["passages"].path.with_name(f".{READER}.lead.{os.getpid()}.arrow")
    passages_job = pool.apply_async(_lead_passages_to_file, (passages_path, options, spill)) if pool else None
    try:
        with gc_paused():  # the decoded release is millions of lists: see ingest.gc_pause
            document = _whole_document(tables_path, options)
            titles = cell_link_titles(document)
            for member in _members(tables_path, output, options, "tables", document):
                read += 1
                try:
                    table = read_table(member.key, member.value, titles)
                except (KeyError, TypeError, ValueError, IndexError, AttributeError) as exc:
                    output.reject(
                        error=exc,
                        record_id=member.key,
                        char_offset=member.offset,
                        excerpt=_excerpt(member.value),
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
            lead = passages_job.get() if passages_job is not None else _lead_passages(passages_path, options)
            document = None if lead is not None else _whole_document(passages_path, options)
            if lead is not None:
                for key, excerpt in lead.rejected:
                    output.reject(
                        error="passage key is not a /wiki/ URL naming an article",
                        error_type="BadPassage",
                        record_id=key,
                        excerpt=excerpt,
                    )
                new_pages = [t for t in dict.fromkeys(lead.titles) if t not in seen_pages]
                seen_pages.update(new_pages)
                lead_ids = dict(zip(lead.titles, lead.page_ids, strict=True))
                pages.add_pages(new_pages, [lead_ids[t] for t in new_pages])
                _write(output, pages, tables)  # the context passages before the lead ones, as read
                output["passages"].write_table(lead.table())
                read, written = read + lead.read, written + len(lead.titles)
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
                        excerpt=_excerpt(member.value),
                    )
                    continue
                add_page(title)
                pages.add_passage(title, page_id_for(title), [], member.value)
                written += 1
                if len(pages.passage_titles) >= FLUSH_ROWS:
                    _write(output, pages, tables)
            _write(output, pages, tables)
    except BaseException:
        output.abort()
        raise
    finally:
        if pool is not None:
            pool.terminate()
            spill.unlink(missing_ok=True)  # its rows stay readable while mapped
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
            pages.add_passage(page_title, page_id_for(page_title), list(path), text)


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


def _excerpt(value: object, limit: int = 1000) -> str:
    """The start of a bad member as the quarantine shows it. A member nested deeper than Python's
    recursion limit (the C parser decodes what ``str`` cannot print) is named, not printed."""
    try:
        return str(value)[:limit]
    except RecursionError:
        return f"<a {type(value).__name__} nested too deeply to print>"


def _whole_document(path: Path, options: OttqaIngestOptions) -> dict | None:
    """The file decoded whole by the C parser when it is under ``max_in_memory_bytes`` (the fast path: the
    release is ~50 MB compressed); None when it is larger or does not decode (it is then streamed)."""
    if path.stat().st_size > options.max_in_memory_bytes:
        return None
    try:
        data = _decompressed(path)
        try:
            document = orjson.loads(data)  # faster; refuses what json takes (lone surrogates, NaN, huge ints)
        except orjson.JSONDecodeError:
            document = json.loads(data)
    except (ValueError, EOFError, OSError, RecursionError, RuntimeError):
        return None  # the streaming reader will say exactly where and why
    return document if isinstance(document, dict) else None


@dataclass
class _LeadPassages:
    """The passages file read whole: its rows as Arrow (cheap to hand between processes), the page titles in
    file order with their ids and the members whose key names no article."""

    passages: pa.Table | Path
    titles: list[str]
    page_ids: list[int]
    rejected: list[tuple[str, str]]
    read: int

    def table(self) -> pa.Table:
        """The rows, mapped from the file a worker process wrote them to."""
        if isinstance(self.passages, Path):
            return pa.ipc.open_file(pa.memory_map(str(self.passages))).read_all()
        return self.passages


def _lead_passages_to_file(path: Path, options: OttqaIngestOptions, spill: Path) -> _LeadPassages | None:
    """``_lead_passages`` in a worker process, its rows handed back in an Arrow file at ``spill``.

    The rows are the release's 120 MB of text: pickled through the pool's pipe, they took ~1 s to send and
    ~2 s to receive, holding the reading process's interpreter part of that time; written to a file (the
    page cache) and mapped by the reader, they cost a tenth of it.
    """
    lead = _lead_passages(path, options)
    if lead is not None and isinstance(lead.passages, pa.Table):
        with pa.OSFile(str(spill), "wb") as sink, pa.ipc.new_file(sink, lead.passages.schema) as writer:
            writer.write_table(lead.passages)
        lead.passages = spill
    return lead


def _lead_passages(path: Path, options: OttqaIngestOptions) -> _LeadPassages | None:
    """Every passage of the file at once when all keys and texts are good strings; None when the file must
    be read member by member (too large, broken, or a member needs its own checks and quarantine)."""
    document = _whole_document(path, options)
    if document is None:
        return None
    keys, texts = list(document), list(document.values())
    del document
    if options.limit is not None:
        keys, texts = keys[: options.limit], texts[: options.limit]
    text_array = str_array(texts)
    if text_array is None or not all_text(keys):
        return None
    found = list(map(wiki_url_titles(keys).__getitem__, keys))
    titles = [title for title in found if title]
    rejected = [(key, text[:1000]) for key, text, title in zip(keys, texts, found, strict=True) if not title]
    if rejected:
        text_array = text_array.filter(pa.array([bool(title) for title in found]))
    ids = page_ids_for(titles)
    return _LeadPassages(
        passage_table(titles, ids, [[]] * len(titles), text_array), titles, ids, rejected, len(keys)
    )


def _decompressed(path: Path) -> bytes:
    """The whole file decompressed in one call (several times faster than reading a ``GzipFile``)."""
    kind = detect_compression(path)
    if kind == "gzip":  # rapidgzip (ISA-L) inflates faster than zlib, even on one thread
        with rapidgzip.RapidgzipFile(str(path), parallelization=1) as f:
            data = f.read()
            if f.tell_compressed() != path.stat().st_size * 8:  # it stops at a cut without an error
                raise EOFError(f"{path} ends before its last gzip member does")
        return data
    data = path.read_bytes()
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
