"""Ingest a Wikipedia pages-articles XML dump into pages / passages / infobox_fields / table_rows / links.

Pages are cut from the decompressed stream in the main process and their wikitext is parsed in
a pool of worker processes (parsing is the slow part: ~1.6 MB/s a core), in order, so output
files are identical from run to run. Only the main namespace is parsed; redirects are recorded
as pages with a target instead of being parsed. Broken pages and broken parts of pages go to
the quarantine with the page title and byte offset; the rest of the page is still written.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

from pydantic import BaseModel, Field

from ingest.progress import progress
from ingest.shard_output import ShardOutput
from ingest.sources import ChunkStream, file_sha256
from ingest.wikipedia.xml_pages import DumpPage, RawPage, iter_raw_pages, parse_page
from ingest.wikitext.article import ParsedArticle, parse_article
from ingest.wikitext.titles import normalize_title
from ingest.workers import worker_pool
from schemas.ingest import IngestSummary
from schemas.wikipedia import InfoboxField, Link, Page, Passage, TableRow

log = logging.getLogger(__name__)

READER = "wikipedia"
TABLES: dict[str, type[BaseModel]] = {
    "pages": Page,
    "passages": Passage,
    "infobox_fields": InfoboxField,
    "table_rows": TableRow,
    "links": Link,
}


class WikipediaIngestOptions(BaseModel):
    namespaces: frozenset[int] = Field(frozenset({0}), description="namespaces to keep (0 = articles)")
    workers: int = Field(1, ge=1, description="parser processes, sized by the caller; 1 = in-process")
    max_page_bytes: int = Field(16 << 20, description="pages larger than this are quarantined unparsed")
    max_error_rate: float | None = Field(0.05, description="fail the run above this quarantined share")


@dataclass
class _Parsed:
    """What a worker sends back: the parsed article, or the error that stopped it."""

    article: ParsedArticle | None
    error: str | None


def _parse_worker(job: tuple[int, str, str]) -> _Parsed:
    page_id, title, text = job
    try:
        return _Parsed(parse_article(page_id, title, text), None)
    except Exception as exc:  # a parser bug must cost one page, not the run
        return _Parsed(None, f"{type(exc).__name__}: {exc}")


def _page_row(page: DumpPage, source: Path, categories: list[str]) -> dict:
    redirect = normalize_title(page.redirect) if page.redirect else None
    return {
        "page_id": page.page_id,
        "title": page.title,
        "namespace": page.namespace,
        "revision_id": page.revision_id,
        "revision_timestamp": page.timestamp,
        "redirect_target": redirect[0] if redirect else (page.redirect or None),
        "length": len(page.text),
        "categories": categories,
        "source": source.name,
    }


class _Counts:
    def __init__(self) -> None:
        self.read = self.written = self.skipped = self.redirects = self.problems = 0


@dataclass
class _Item:
    """One page in stream order: an article to parse, a redirect to record, or a page to reject."""

    raw: RawPage
    page: DumpPage | None = None
    reject: tuple[str, str] | None = None  # (error type, message)


BATCH_PAGES = 64


def ingest_wikipedia(
    source: Path, out_dir: Path, options: WikipediaIngestOptions | None = None
) -> IngestSummary:
    """Ingest one XML dump file into ``out_dir``; re-running replaces this file's earlier output."""
    options = options or WikipediaIngestOptions()
    source = Path(source)
    if not source.is_file():
        raise FileNotFoundError(f"Wikipedia dump not found: {source}")
    output = ShardOutput(out_dir, READER, source, "all", TABLES, options=options)
    counts = _Counts()
    pool = worker_pool(options.workers)
    stream = ChunkStream(source)
    bar = progress(f"wikipedia {source.name}", unit=" pages")
    try:
        previous = None
        for batch in _batches(stream, options, counts):
            jobs = [(i.page.page_id, i.page.title, i.page.text) for i in batch if _is_article(i)]
            # Parse this batch in the workers while the previous one is written here.
            parsed = (
                pool.map_async(_parse_worker, jobs, chunksize=2) if pool else list(map(_parse_worker, jobs))
            )
            if previous is not None:
                _write_batch(output, *previous, counts)
                bar.update(len(previous[0]))
            previous = (batch, parsed)
        if previous is not None:
            _write_batch(output, *previous, counts)
            bar.update(len(previous[0]))
        if stream.truncated is not None:
            output.reject(
                error=f"archive ends early: {stream.truncated.error}; pages before the cut were kept",
                error_type="TruncatedArchive",
                byte_offset=stream.truncated.byte_offset,
            )
    except BaseException:
        output.abort()
        raise
    finally:
        bar.close()
        if pool:
            pool.terminate()
    log.info(
        "%s: %d pages read, %d written (%d redirects), %d quarantined",
        source.name,
        counts.read,
        counts.written,
        counts.redirects,
        output.quarantine.rows,
    )
    return output.finish(
        source_sha256=stream.sha256 or file_sha256(source),
        records_read=counts.read,
        records_written=counts.written,
        records_skipped=counts.skipped,
        bytes_read=stream.bytes_read,
        notes={"redirects": counts.redirects, "wikitext_problems": counts.problems},
        max_error_rate=options.max_error_rate,
    )


def _is_article(item: _Item) -> bool:
    return item.page is not None and item.page.redirect is None


def _batches(stream: ChunkStream, options: WikipediaIngestOptions, counts: _Counts) -> Iterator[list[_Item]]:
    """Pages in stream order, in batches; other namespaces are counted as skipped and left out."""
    batch: list[_Item] = []
    for raw in iter_raw_pages(stream, options.max_page_bytes):
        counts.read += 1
        if raw.oversized or len(raw.xml) > options.max_page_bytes:
            reason = f"page exceeds max_page_bytes={options.max_page_bytes}; it was not parsed"
            batch.append(_Item(raw, reject=("PageTooLarge", reason)))
        elif not raw.complete:
            reason = raw.problem or "page breaks off at the end of the input"
            batch.append(_Item(raw, reject=("IncompletePage", reason)))
        else:
            try:
                page = parse_page(raw)
            except ValueError as exc:
                batch.append(_Item(raw, reject=("MalformedPage", str(exc))))
            else:
                if page.namespace not in options.namespaces:
                    counts.skipped += 1
                    continue
                batch.append(_Item(raw, page))
        if len(batch) >= BATCH_PAGES:
            yield batch
            batch = []
    if batch:
        yield batch


def _write_batch(output: ShardOutput, batch: list[_Item], parsed: object, counts: _Counts) -> None:
    results = iter(parsed.get() if hasattr(parsed, "get") else parsed)  # type: ignore[union-attr]
    for item in batch:
        if item.reject is not None:
            output.reject(
                error=item.reject[1],
                error_type=item.reject[0],
                byte_offset=item.raw.offset,
                record_id=_title_hint(item.raw.xml),
                excerpt=item.raw.xml[:1000],
            )
        elif item.page is not None and item.page.redirect is not None:
            output["pages"].append(_page_row(item.page, output.source, []))
            counts.written += 1
            counts.redirects += 1
        elif item.page is not None:
            _write_article(output, item.raw, item.page, next(results), counts)


def _write_article(
    output: ShardOutput, raw: RawPage, page: DumpPage, parsed: _Parsed, counts: _Counts
) -> None:
    if parsed.article is None:
        output.reject(
            error=parsed.error or "parser failed",
            error_type="ParserError",
            byte_offset=raw.offset,
            record_id=page.title,
            excerpt=page.text,
        )
        return
    article = parsed.article
    output["pages"].append(_page_row(page, output.source, article.categories))
    output["passages"].extend(article.passages)
    output["infobox_fields"].extend(article.infobox_fields)
    output["table_rows"].extend(article.table_rows)
    output["links"].extend(article.links)
    counts.written += 1
    for problem in article.problems:
        counts.problems += 1
        output.reject(
            error=problem.message,
            error_type=f"Wikitext:{problem.kind}",
            byte_offset=raw.offset,
            char_offset=problem.char_offset,
            record_id=page.title,
            excerpt=problem.excerpt,
        )


def _title_hint(xml: bytes) -> str | None:
    start = xml.find(b"<title>")
    end = xml.find(b"</title>", start)
    if start < 0 or end < 0:
        return None
    return xml[start + 7 : end].decode("utf-8", errors="replace")
