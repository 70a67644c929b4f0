"""Fixtures: real pages from the sample dumps in data/ (read with a tiny test-only XML helper)."""

from __future__ import annotations

import bz2
import xml.etree.ElementTree as ET
from pathlib import Path

import pytest

from ingest.wikitext import ParsedArticle, parse_article

SAMPLES = Path(__file__).resolve().parents[3] / "data" / "samples" / "wikipedia"
ARTICLES_DUMP = SAMPLES / "enwiki-2016-sample-pages-articles.xml.bz2"
TABLES_DUMP = SAMPLES / "enwiki-table-markup.xml.bz2"
_NS = "{http://www.mediawiki.org/xml/export-0.10/}"


def read_pages(path: Path) -> dict[str, tuple[int, str]]:
    """title → (page id, wikitext) for the main-namespace, non-redirect pages of a dump."""
    pages: dict[str, tuple[int, str]] = {}
    with bz2.open(path) as stream:
        for _, element in ET.iterparse(stream):
            if element.tag != _NS + "page":
                continue
            is_redirect = element.find(_NS + "redirect") is not None
            if element.findtext(_NS + "ns") == "0" and not is_redirect:
                text = element.findtext(f"{_NS}revision/{_NS}text") or ""
                pages[element.findtext(_NS + "title") or ""] = (int(element.findtext(_NS + "id") or 0), text)
            element.clear()
    return pages


@pytest.fixture(scope="session")
def sample_pages() -> dict[str, tuple[int, str]]:
    return read_pages(ARTICLES_DUMP)


@pytest.fixture(scope="session")
def table_pages() -> dict[str, tuple[int, str]]:
    return read_pages(TABLES_DUMP)


def _parse(pages: dict[str, tuple[int, str]], title: str) -> ParsedArticle:
    page_id, text = pages[title]
    return parse_article(page_id, title, text)


@pytest.fixture(scope="session")
def einstein(sample_pages: dict[str, tuple[int, str]]) -> ParsedArticle:
    return _parse(sample_pages, "Albert Einstein")


@pytest.fixture(scope="session")
def production_design(table_pages: dict[str, tuple[int, str]]) -> ParsedArticle:
    return _parse(table_pages, "Academy Award for Best Production Design")


@pytest.fixture(scope="session")
def prison_break(table_pages: dict[str, tuple[int, str]]) -> ParsedArticle:
    return _parse(table_pages, "List of Prison Break characters")
