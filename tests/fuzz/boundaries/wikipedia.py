"""Boundaries 2 and 3: one article's wikitext through ``parse_article``, and one XML ``<page>`` among good
ones through ``ingest_wikipedia``."""

from __future__ import annotations

import bz2
import random
import re
import tempfile
import xml.etree.ElementTree as ET
from dataclasses import dataclass
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

from tests.conftest import ENWIKI_SAMPLE, ENWIKI_TABLES
from tests.fuzz.harness import (
    INPUT_SECONDS,
    Boundary,
    BoundaryReport,
    CallTimeout,
    Finding,
    FuzzInput,
    RecordBoundary,
    interleave,
    last_line,
    read_tables,
    time_limit,
)
from tests.fuzz.mutators import WIKITEXT_DIALECT, XML_DIALECT, mutate_bytes

ENWIKI_DUMPS = (ENWIKI_SAMPLE, ENWIKI_TABLES)


def raw_pages(path: Path) -> tuple[bytes, list[bytes]]:
    """The export's header (up to the first page) and each ``<page>…</page>`` as bytes, cut independently."""
    data = bz2.decompress(path.read_bytes())
    pages, pos = [], data.find(b"<page>")
    header = data[:pos]
    while pos >= 0:
        end = data.index(b"</page>", pos) + len(b"</page>")
        pages.append(data[pos:end])
        pos = data.find(b"<page>", end)
    return header, pages


@dataclass
class SamplePage:
    raw: bytes
    page_id: int
    title: str
    namespace: int
    redirect: bool
    text: str


def sample_pages() -> list[SamplePage]:
    out = []
    for dump in ENWIKI_DUMPS:
        for raw in raw_pages(dump)[1]:
            root = ET.fromstring(raw)
            out.append(
                SamplePage(
                    raw=raw,
                    page_id=int(root.findtext("id") or 0),
                    title=root.findtext("title") or "",
                    namespace=int(root.findtext("ns") or 0),
                    redirect=root.find("redirect") is not None,
                    text=root.findtext("revision/text") or "",
                )
            )
    return out


def text_window(rng: random.Random, text: str) -> str:
    """A stretch of real wikitext, starting at a line: whole small pages, else 0.5-6 kB of a long one."""
    if len(text) <= 3_000 or (rng.random() < 0.05 and len(text) < 40_000):
        return text
    start = rng.randrange(len(text))
    start = 0 if rng.random() < 0.2 else text.rfind("\n", 0, start) + 1
    return text[start : start + rng.choice((500, 2_000, 6_000))]


PROBLEM_KINDS = {
    "too_long",
    "too_deep",
    "unclosed_template",
    "unclosed_table",
    "table_parse_error",
    "parse_error",
}


class WikitextBoundary(Boundary):
    name = "wikitext"
    batch = 50

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.parquet_sink import rows_to_table
        from ingest.wikitext import parse_article
        from schemas.wikipedia import InfoboxField, Link, Passage, TableRow

        self._parse = parse_article
        self._rows_to_table = rows_to_table
        self._models = {
            "passages": Passage,
            "infobox_fields": InfoboxField,
            "table_rows": TableRow,
            "links": Link,
        }
        articles = [p for p in sample_pages() if p.namespace == 0 and not p.redirect and p.text]
        self.seeds = articles
        self.good = [(p.page_id, p.title, p.text[:8_000]) for p in articles[:: max(1, len(articles) // 6)]]
        self.baseline = [parse_article(*page) for page in self.good]
        self.batches = 0

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        page = rng.choice(self.seeds)
        names: list[str] = []
        data = mutate_bytes(rng, text_window(rng, page.text).encode(), WIKITEXT_DIALECT, names)
        return FuzzInput(index, f"page {page.title!r}", names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        for item in items:
            report.calls += 1
            text = item.data.decode("utf-8", errors="replace")  # the XML reader hands over str
            try:
                with time_limit(INPUT_SECONDS):
                    article = self._parse(item.index + 1, f"Fuzz {item.index}", text)
            except CallTimeout as exc:
                report.add(Finding.of("slow", item, last_line(exc)))
                continue
            except Exception as exc:
                report.add(Finding.of("crash", item, last_line(exc)))
                continue
            for table, model in self._models.items():
                try:
                    self._rows_to_table(getattr(article, table), model)
                except ValueError as exc:  # the ingest would fail writing this page's rows
                    report.add(Finding.of("violation", item, f"{table}: {str(exc)[:300]}"))
            if not all(isinstance(c, str) for c in article.categories):
                report.add(Finding.of("violation", item, f"categories {article.categories[:5]}"))
            for problem in article.problems:
                if problem.kind not in PROBLEM_KINDS or not problem.message:
                    report.add(Finding.of("violation", item, f"unknown problem {problem}"))
                elif not -1 <= problem.char_offset <= len(text):
                    report.add(Finding.of("violation", item, f"problem outside the page {problem}"))
            report.count("rejected" if article.problems else "parsed")
        # A good page parsed after the mutated ones comes out as it did alone: no state leaks between pages.
        which = self.batches % len(self.good)
        self.batches += 1
        report.good_records_checked += 1
        if self._parse(*self.good[which]) != self.baseline[which]:  # parse_article never raises on good pages
            report.add(Finding.of("violation", None, f"good page {self.good[which][1]!r} changed"))


# ---------------------------------------------------------------------------------------------------------
# 3. An XML <page>, through ingest_wikipedia.

_TEXT_ELEMENT = re.compile(rb"(<text\b[^>]*>)(.*?)(</text>)", re.DOTALL)
_FIRST_ID = re.compile(r"<id>\s*(\d+)\s*</id>")  # \d: the reader takes any Unicode digits, as int() does
_FIRST_NS = re.compile(rb"<ns>(.*?)</ns>", re.DOTALL)


def with_text(page: SamplePage, text: str) -> bytes:
    """The page's real XML with its wikitext replaced by ``text`` (escaped as the dumps escape it)."""
    match = _TEXT_ELEMENT.search(page.raw)
    if match is None:
        return page.raw
    body = escape(text, {'"': "&quot;"}).encode("utf-8", errors="replace")
    return page.raw[: match.start(2)] + body + page.raw[match.end(2) :]


class XmlBoundary(RecordBoundary):
    name = "xml"
    batch = 100
    first_good_id = 900_000_000

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia

        self._ingest = ingest_wikipedia
        self._options = WikipediaIngestOptions(workers=1, max_error_rate=None, max_page_bytes=1 << 20)
        self.header = raw_pages(ENWIKI_DUMPS[0])[0]
        pages = sample_pages()
        articles = [p for p in pages if p.namespace == 0 and not p.redirect]
        chosen = (
            articles[3::25][:7] + [p for p in pages if p.redirect][:1] + [p for p in pages if p.namespace][:1]
        )
        self.good = []
        for k, page in enumerate(chosen):
            raw = with_text(page, page.text[:5_000])
            good_id = f"<id>{self.first_good_id + k}</id>"
            self.good.append(_FIRST_ID.sub(good_id, raw.decode(), count=1).encode())
        self.good_ids = {self.first_good_id + k for k in range(len(chosen))}
        good_titles = {p.title for p in chosen}
        self.seeds = [p for p in pages if p.title not in good_titles]
        baseline = self.call([])
        self.baseline = {
            table: self._good_rows(table, rows) for table, rows in baseline.items() if table != "meta"
        }
        self.baseline_problems = {self._problem(row) for row in baseline["quarantine"]}
        assert len(self.baseline["pages"]) == len(chosen) - 1  # the page outside namespace 0 is skipped

    def _good_rows(self, table: str, rows: list[dict]) -> list[dict]:
        key = "source_page_id" if table == "links" else "page_id"
        return [row for row in rows if row.get(key) in self.good_ids]

    @staticmethod
    def _problem(row: dict) -> tuple:
        return row["record_id"], row["error_type"], row["char_offset"], row["error"], row["excerpt"]

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        page = rng.choice(self.seeds)
        names: list[str] = []
        text = text_window(rng, page.text)
        roll = rng.random()
        if roll < 0.5:  # the wikitext is broken, the XML around it is sound
            text = mutate_bytes(rng, text.encode(), WIKITEXT_DIALECT, names).decode("utf-8", errors="replace")
        data = with_text(page, text)
        if roll >= 0.35:  # the XML itself is broken: cut tags, entities, CDATA, namespaces, bytes
            data = mutate_bytes(rng, data, XML_DIALECT, names)
        return FuzzInput(index, f"page {page.title!r}", names, data)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        order = interleave(rng, items, self.good)
        body = bytearray(self.header)
        spans: list[tuple[tuple[str, int], int, int]] = []
        for kind, i in order:
            body += b"  "
            record = self.good[i] if kind == "good" else items[i].data
            spans.append(((kind, i), len(body), len(body) + len(record)))
            body += record + b"\n"
        body += b"</mediawiki>\n"
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            dump = Path(tmp) / "fuzz-enwiki.xml.bz2"
            dump.write_bytes(bz2.compress(bytes(body), 1))
            summary = self._ingest(dump, Path(tmp) / "out", self._options)
            tables = read_tables({o.table: o.path for o in summary.outputs})
        tables["meta"] = {"spans": spans, "summary": summary}
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        spans, summary = result["meta"]["spans"], result["meta"]["summary"]
        rejected: set[int] = set()
        page_rejects = 0
        for row in result["quarantine"]:
            offset = row["byte_offset"]
            if offset is None or not row["error"]:
                report.add(Finding.of("violation", None, f"quarantined without its position: {row}"))
                continue
            slot = next((s for s, a, b in spans if a <= offset < b), None)
            wikitext = row["error_type"].startswith("Wikitext:")
            page_rejects += not wikitext
            if slot is None or slot[0] == "good":
                if not (wikitext and slot is not None and self._problem(row) in self.baseline_problems):
                    report.add(Finding.of("violation", None, f"quarantined outside a mutated page: {row}"))
            elif not wikitext:
                rejected.add(slot[1])
        for table, rows in self.baseline.items():
            got = self._good_rows(table, result[table])
            report.good_records_checked += len(rows)
            if table != "quarantine" and got != rows:
                missing = [r for r in rows if r not in got][:1]
                report.add(Finding.of("violation", None, f"good {table} rows changed: {missing}"))
        if summary.records_read != summary.records_written + summary.records_skipped + page_rejects:
            report.add(Finding.of("violation", None, f"pages unaccounted for: {summary}"))
        page_ids = {row["page_id"] for row in result["pages"]} - self.good_ids
        order = [slot for slot, _, _ in spans]
        before = dict(zip(order[1:], order[:-1], strict=True))
        for k, item in enumerate(items):
            if k in rejected:
                report.count("rejected")
                continue
            found_id = _FIRST_ID.search(item.data.decode("utf-8", errors="replace"))
            if found_id and int(found_id.group(1)) in page_ids:
                report.count("parsed")
                continue
            found_ns = _FIRST_NS.search(item.data)
            if found_ns and found_ns.group(1).strip() != b"0":
                report.skip("a page outside the kept namespaces")
                continue
            previous = before.get(("mut", k))
            if (
                previous
                and previous[0] == "mut"
                and previous[1] in rejected
                and self._unclosed(items[previous[1]])
                and b"<page>" not in item.data
            ):
                # It lost its <page>, the page before it its </page>: one page to the reader, quarantined.
                report.count("rejected")
                report.reasons["quarantined: merged into the page before it, which lost its </page>"] += 1
                continue
            if b"<page>" not in item.data and b"</page>" not in item.data:
                # Both tags gone: nothing marks these bytes as a page (a known gap, see the report).
                report.skip("no <page> nor </page> left: read as bytes between pages")
                continue
            report.add(Finding.of("violation", item, "page vanished: no row, no quarantine entry"))

    @staticmethod
    def _unclosed(item: FuzzInput) -> bool:
        """Whether the record's last <page> has no </page> after it (or it holds none at all)."""
        return item.data.rfind(b"</page>") < item.data.rfind(b"<page>") or b"</page>" not in item.data
