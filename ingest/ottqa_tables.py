"""OTT-QA tables and passages as Arrow columns: rows of ``table_rows``, ``links``, ``pages``, ``passages``.

A release holds ~140k table rows with ~620k cells and ~380k cell links. Built as a dict per cell and per
link, then read back key by key into Arrow, they cost several times the JSON decoding of the release;
here each table is checked whole (a bad one is quarantined before any of it is kept), then appended to
flat columns, and the nested cells are assembled from offsets when a batch is written.
"""

from __future__ import annotations

import hashlib
import re
from dataclasses import dataclass, field
from functools import lru_cache
from itertools import chain
from typing import Any

import numpy as np
import pyarrow as pa

from ingest.wikitext.titles import normalize_title, wiki_url_titles, wiki_url_to_title
from schemas import arrow_schema
from schemas.wikipedia import Link, Page, Passage, TableRow

_TABLE_INDEX = re.compile(r"_(\d+)$")
_SURROGATE = re.compile("[\ud800-\udfff]")
_INT32_MAX = 2**31 - 1


@lru_cache(maxsize=1 << 20)
def url_title(url: str) -> str | None:
    """Cell links repeat across rows and tables: normalize each distinct URL once."""
    return wiki_url_to_title(url)


class UrlTitles(dict[str, str | None]):
    """Titles of URLs resolved in bulk (``wiki_url_titles``); a URL not among them is resolved on lookup."""

    def __missing__(self, url: str) -> str | None:
        title = self[url] = url_title(url)
        return title


def cell_link_titles(document: dict | None) -> UrlTitles:
    """The titles of every cell link of a decoded tables file, resolved in one pass (malformed tables are
    skipped here: they are checked, and quarantined, one by one later)."""
    urls: set = set()
    for table in (document or {}).values():
        try:
            urls.update(chain.from_iterable(links for row in table["data"] for _, links in row))
        except (TypeError, ValueError, KeyError, IndexError, AttributeError):
            continue  # what was added before the bad value stays: every URL is resolved on lookup anyway
    return UrlTitles(wiki_url_titles(url for url in urls if type(url) is str))


def _page_id(title: str) -> int:
    return int.from_bytes(hashlib.blake2b(title.encode(), digest_size=8).digest(), "big") >> 1


page_id_for = lru_cache(maxsize=1 << 20)(_page_id)
"""Stable id for a title that has no page id in the source (cached: table pages repeat)."""


def page_ids_for(titles: list[str]) -> list[int]:
    """``page_id_for`` of many distinct titles (the lead passages): uncached, as a miss of the cache costs
    more than the hash (0.5 s against 0.2 s for the release's 190k titles)."""
    return list(map(_page_id, titles))


def text_value(value: object, what: str) -> str:
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


def is_text(value: object) -> bool:
    """``text_value`` without building its message."""
    return isinstance(value, str) and (value.isascii() or _SURROGATE.search(value) is None)


def str_array(values: list) -> pa.Array | None:
    """The values as an Arrow string array, or None when one is not a string a UTF-8 file can hold: the
    check of ``all_text`` made by the conversion the values need anyway, not by a join and an encode of
    their own (the passages file is 120 MB of text)."""
    if not set(map(type, values)) <= {str}:
        return None
    try:
        return pa.array(values, pa.string())
    except UnicodeEncodeError:
        return None


def all_text(values: list) -> bool:
    """Every value a string a UTF-8 file can hold, checked by C loops rather than per value: a lone
    surrogate anywhere makes encoding the joined values fail."""
    if not set(map(type, values)) <= {str}:
        return False
    try:
        "".join(values).encode("utf-8")
    except UnicodeEncodeError:
        return False
    return True


@dataclass(slots=True)
class OttqaTable:
    """One table of the release, checked: its page, section and the flat columns of its rows."""

    table_id: str
    page_title: str
    page_id: int
    section_path: list[str]
    table_index: int
    cells_per_row: list[int]
    header: list[str]
    text: list[str]
    links_per_cell: list[int]
    link_target: list[str]

    @property
    def rows(self) -> int:
        return len(self.cells_per_row)


def read_table(table_id: str, table: dict[str, Any], titles: UrlTitles | None = None) -> OttqaTable:
    """One OTT-QA table; a ``ValueError`` (or ``KeyError``, ``TypeError``, ``IndexError``) when it is not of
    the release's shape."""
    title = normalize_title(text_value(table["title"], "title"))
    section_title = text_value(table.get("section_title") or "", "section_title")
    for name in ("intro", "section_text"):  # written as passages by the caller
        text_value(table.get(name) or "", name)
    match = _TABLE_INDEX.search(text_value(table_id, "table id"))
    table_index = int(match.group(1)) if match else 0
    if table_index > _INT32_MAX:
        raise ValueError(f"table index {table_index} of {table_id!r} does not fit 32 bits")
    headers = [text_value(h[0], f"header {column + 1}") for column, h in enumerate(table["header"])]
    page_title = title[0] if title else table["title"]
    cells = _cells_fast(table["data"], headers, titles or UrlTitles()) or _cells_checked(
        table["data"], headers
    )
    return OttqaTable(
        table_id,
        page_title,
        page_id_for(page_title),
        [s.strip() for s in section_title.split(" -- ") if s.strip()],
        table_index,
        *cells,
    )


_Cells = tuple[list[int], list[str], list[str], list[int], list[str]]


def _headers(headers: list[str], cells_per_row: list[int]) -> list[str]:
    names = [
        headers[c] if c < len(headers) and headers[c] else f"Column {c + 1}"
        for c in range(max(cells_per_row, default=0))
    ]
    return [h for n in cells_per_row for h in names[:n]]


def _cells_fast(data: object, headers: list[str], titles: UrlTitles) -> _Cells | None:
    """The table's cells by whole-column passes, or None when anything is off: then ``_cells_checked``
    walks them one by one and says what is wrong and where."""
    try:
        cells_per_row = list(map(len, data))  # type: ignore[arg-type]
        cells = [cell for row in data for cell in row]  # type: ignore[attr-defined]
        if not set(map(len, cells)) <= {2} or not set(map(type, cells)) <= {list}:
            return None
        texts = [cell[0] for cell in cells]
        urls = [cell[1] for cell in cells]
        if not all_text(texts) or not set(map(type, urls)) <= {list}:
            return None
        flat = [url for links in urls for url in links]
        if not all_text(flat):
            return None
        targets = list(map(titles.__getitem__, flat))
    except (TypeError, ValueError, KeyError, IndexError):
        return None
    links_per_cell = list(map(len, urls))
    if not all(targets):  # some links name no article: drop them, and count each cell's kept links
        kept = iter([bool(t) for t in targets])
        links_per_cell = [sum(next(kept) for _ in range(n)) for n in links_per_cell]
        targets = [t for t in targets if t]
    return cells_per_row, _headers(headers, cells_per_row), texts, links_per_cell, targets


def _cells_checked(data: list, headers: list[str]) -> _Cells:
    """Cell by cell, raising at the first value that is not of the release's shape."""
    cells_per_row, texts, links_per_cell, targets = [], [], [], []
    for row_index, row in enumerate(data):
        cells = 0
        for column, (text, urls) in enumerate(row):
            text_value(text, f"cell {column + 1} of row {row_index + 1}")
            if not isinstance(urls, list):
                raise ValueError(f"cell links are {type(urls).__name__}, not a list")
            found = [t for url in urls if (t := url_title(text_value(url, "cell link")))]
            texts.append(text)
            links_per_cell.append(len(found))
            targets += found
            cells += 1
        cells_per_row.append(cells)
    return cells_per_row, _headers(headers, cells_per_row), texts, links_per_cell, targets


def _offsets(counts: np.ndarray) -> pa.Array:
    """List offsets from element counts: [2, 0, 3] → [0, 2, 2, 5]."""
    return pa.array(np.concatenate([[0], np.cumsum(counts)]), pa.int32())


def _counts(values: list[int]) -> np.ndarray:
    return np.asarray(values, dtype=np.int64)


@dataclass
class TableColumns:
    """Checked tables, kept until a batch is written; then every column is built by whole-array steps."""

    tables: list[OttqaTable] = field(default_factory=list)
    rows: int = 0

    def add(self, table: OttqaTable) -> None:
        self.tables.append(table)
        self.rows += table.rows

    def take(self) -> tuple[pa.Table, pa.Table]:
        """(table_rows, links) of the tables added since the last take, in the schemas of the models."""
        tables, self.tables, self.rows = self.tables, [], 0
        batch = _Batch(tables)
        return batch.table_rows(), batch.links()


def _flat(tables: list[OttqaTable], name: str) -> list:
    out: list = []
    for table in tables:
        out += getattr(table, name)
    return out


class _Batch:
    """Index arithmetic over a batch of tables: which table each row is of, which row each cell, which cell
    each link; per-row and per-link columns are then ``take``s of per-table and per-cell arrays."""

    def __init__(self, tables: list[OttqaTable]):
        self.tables = tables
        self.rows_per_table = _counts([t.rows for t in tables])
        self.cells_per_row = _counts(_flat(tables, "cells_per_row"))
        self.links_per_cell = _counts(_flat(tables, "links_per_cell"))
        self.table_of_row = np.repeat(np.arange(len(tables)), self.rows_per_table)
        self.row_of_cell = np.repeat(np.arange(len(self.cells_per_row)), self.cells_per_row)
        self.cell_of_link = np.repeat(np.arange(len(self.links_per_cell)), self.links_per_cell)
        first_row = np.concatenate([[0], np.cumsum(self.rows_per_table)[:-1]]).astype(np.int64)
        self.row_index = np.arange(len(self.cells_per_row)) - first_row[self.table_of_row]
        self.text = pa.array(_flat(tables, "text"), pa.string())
        self.header = pa.array(_flat(tables, "header"), pa.string())
        self.target = pa.array(_flat(tables, "link_target"), pa.string())

    def _per_table(self, name: str, type_: pa.DataType, rows: np.ndarray) -> pa.Array:
        return pa.array([getattr(t, name) for t in self.tables], type_).take(pa.array(rows))

    def table_rows(self) -> pa.Table:
        schema = arrow_schema(TableRow)
        cells_type = schema.field("cells").type
        cell_type = cells_type.value_type
        links_type = cell_type.field("links").type
        anchors = self.text.take(pa.array(self.cell_of_link))
        refs = pa.StructArray.from_arrays([self.target, anchors], fields=list(links_type.value_type))
        first_cell = np.concatenate([[0], np.cumsum(self.cells_per_row)[:-1]]).astype(np.int64)
        column = np.arange(len(self.links_per_cell)) - first_cell[self.row_of_cell]
        cells = pa.StructArray.from_arrays(
            [
                pa.array(column, pa.int32()),
                self.header,
                self.text,
                pa.ListArray.from_arrays(_offsets(self.links_per_cell), refs, type=links_type),
            ],
            fields=list(cell_type),
        )
        rows = self.table_of_row
        columns = [
            self._per_table("table_id", pa.string(), rows),
            self._per_table("page_id", pa.int64(), rows),
            self._per_table("page_title", pa.string(), rows),
            self._per_table("section_path", schema.field("section_path").type, rows),
            self._per_table("table_index", pa.int32(), rows),
            pa.nulls(len(rows), pa.string()),
            pa.array(self.row_index, pa.int32()),
            pa.ListArray.from_arrays(_offsets(self.cells_per_row), cells, type=cells_type),
        ]
        return pa.Table.from_arrays(columns, schema=schema)

    def links(self) -> pa.Table:
        link_rows = self.row_of_cell[self.cell_of_link]
        tables = self.table_of_row[link_rows]
        count = len(self.cell_of_link)
        links = pa.array(self.cell_of_link)
        columns = [
            self._per_table("page_id", pa.int64(), tables),
            self._per_table("page_title", pa.string(), tables),
            pa.array(np.full(count, "table", dtype=object), pa.string()),
            self._per_table("table_index", pa.int32(), tables),
            pa.array(self.row_index[link_rows], pa.int32()),
            self.header.take(links),
            self.target,
            pa.nulls(count, pa.string()),
            self.text.take(links),
        ]
        return pa.Table.from_arrays(columns, schema=arrow_schema(Link))


@dataclass
class PageColumns:
    """Pages (title only: OTT-QA has no ids, revisions or categories) and lead/context passages. A page's
    id (``page_id_for`` its title) comes with it, computed once where the title was read."""

    page_titles: list[str] = field(default_factory=list)
    page_ids: list[int] = field(default_factory=list)
    passage_titles: list[str] = field(default_factory=list)
    passage_ids: list[int] = field(default_factory=list)
    passage_sections: list[list[str]] = field(default_factory=list)
    passage_texts: list[str] = field(default_factory=list)

    def add_pages(self, titles: list[str], page_ids: list[int]) -> None:
        self.page_titles += titles
        self.page_ids += page_ids

    def add_passage(self, title: str, page_id: int, section_path: list[str], text: str) -> None:
        self.passage_titles.append(title)
        self.passage_ids.append(page_id)
        self.passage_sections.append(section_path)
        self.passage_texts.append(text)

    def take_pages(self) -> pa.Table:
        titles, ids, self.page_titles, self.page_ids = self.page_titles, self.page_ids, [], []
        count = len(titles)
        schema = arrow_schema(Page)
        columns = [
            pa.array(ids, pa.int64()),
            pa.array(titles, pa.string()),
            pa.array([0] * count, pa.int32()),
            pa.nulls(count, pa.int64()),
            pa.nulls(count, pa.string()),
            pa.nulls(count, pa.string()),
            pa.array([0] * count, pa.int64()),
            pa.array([[]] * count, schema.field("categories").type),
            pa.array(["ottqa"] * count, pa.string()),
        ]
        return pa.Table.from_arrays(columns, schema=schema)

    def take_passages(self) -> pa.Table:
        titles, ids, sections, texts = (
            self.passage_titles,
            self.passage_ids,
            self.passage_sections,
            self.passage_texts,
        )
        self.passage_titles, self.passage_ids, self.passage_sections, self.passage_texts = [], [], [], []
        return passage_table(titles, ids, sections, pa.array(texts, pa.string()))


def passage_table(
    titles: list[str], page_ids: list[int], sections: list[list[str]], texts: pa.Array
) -> pa.Table:
    """``passages`` rows without links: the context passages of tables and the lead passages of pages."""
    schema = arrow_schema(Passage)
    columns = [
        pa.array(page_ids, pa.int64()),
        pa.array(titles, pa.string()),
        pa.array(sections, schema.field("section_path").type),
        pa.array([len(s) for s in sections], pa.int32()),  # the lead is 0, a table's section 1 and on
        texts,
        pa.array([[]] * len(titles), schema.field("links").type),
    ]
    return pa.Table.from_arrays(columns, schema=schema)
