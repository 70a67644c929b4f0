"""Wikitables → TableRow rows: header rows stacked, rowspan/colspan expanded, one cell per column.

wikitextparser splits the table into cells (it knows header cells, inline ``||`` cells and
attributes); the grid is laid out here so cells whose attributes come from a template
(``| colspan="5" {{CMain}}``, common in TV and sports tables) still span the right columns.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

import wikitextparser

from ingest.wikitext.context import PageContext, Row
from ingest.wikitext.render import Renderer
from ingest.wikitext.sink import PendingLink
from ingest.wikitext.text import clean_cell, clean_inline

# Spans beyond these are markup errors; capping them keeps a bad attribute from allocating a huge grid.
MAX_COLSPAN = 100
MAX_COLUMNS = 200

_ATTRS_BEFORE_TEMPLATE = re.compile(
    r"""^\s*((?:[A-Za-z][\w-]*\s*=\s*(?:"[^"\n]*"|'[^'\n]*'|[^\s"'|{}]+)\s*)+)(\{\{.*)$""", re.DOTALL
)
_ATTR = re.compile(r"""([A-Za-z][\w-]*)\s*=\s*(?:"([^"\n]*)"|'([^'\n]*)'|([^\s"'|{}]+))""")
# Nine digits at most: a span is clipped to the table anyway, and int() refuses strings of over 4300 digits.
_LEADING_DIGITS = re.compile(r"\s*(\d{1,9})")


@dataclass(slots=True)
class _Cell:
    """One source cell, before spans are expanded; spanned slots share the same object."""

    header: bool
    text: str
    links: list[PendingLink]
    colspan: int
    rowspan: int
    grows_to_end: bool = False


def _span(value: str | None) -> int:
    if not value:
        return 1
    match = _LEADING_DIGITS.match(value)
    return int(match.group(1)) if match else 1


def _read_cell(renderer: Renderer, header: bool, raw: str, attrs: dict[str, str]) -> _Cell:
    if not attrs and (match := _ATTRS_BEFORE_TEMPLATE.match(raw)):
        # The template supplies the "attrs |" part when expanded; its own text follows.
        attrs = {m.group(1).lower(): m.group(2) or m.group(3) or m.group(4) for m in _ATTR.finditer(match[1])}
        raw = match.group(2)
    sink = renderer.render_markup(raw)
    rowspan_raw = attrs.get("rowspan")
    rowspan = _span(rowspan_raw)
    return _Cell(
        header=header,
        text=clean_cell(sink.text()),
        links=sink.links,
        colspan=min(max(_span(attrs.get("colspan")), 1), MAX_COLSPAN),
        rowspan=max(rowspan, 1),
        grows_to_end=rowspan == 0 and rowspan_raw is not None,
    )


def _layout(rows: list[list[_Cell]]) -> list[list[_Cell | None]]:
    """The HTML table algorithm, clipped to the table: each slot holds the cell covering it."""
    grid: list[list[_Cell | None]] = [[] for _ in rows]
    height = len(rows)
    for y, cells in enumerate(rows):
        line = grid[y]
        x = 0
        for cell in cells:
            while x < len(line) and line[x] is not None:
                x += 1
            if x >= MAX_COLUMNS:
                break
            last_row = height if cell.grows_to_end else min(height, y + cell.rowspan)
            for yy in range(y, last_row):
                target = grid[yy]
                end = min(x + cell.colspan, MAX_COLUMNS)
                if len(target) < end:
                    target.extend([None] * (end - len(target)))
                for xx in range(x, end):
                    target[xx] = cell
            x += cell.colspan
    return grid


def _headers(grid: list[list[_Cell | None]], header_rows: int, width: int) -> list[str]:
    """Stack header rows per column, skipping a cell met again through its rowspan or colspan."""
    headers = []
    for x in range(width):
        parts: list[str] = []
        previous: _Cell | None = None
        for line in grid[:header_rows]:
            cell = line[x] if x < len(line) else None
            if cell is None or cell is previous:
                continue
            previous = cell
            if cell.text and (not parts or parts[-1] != cell.text):
                parts.append(cell.text)
        headers.append(" / ".join(parts) or f"Column {x + 1}")
    return headers


def _texts(cells: list[_Cell]) -> list[str]:
    return [cell.text for cell in cells]


def _is_spacer(grid: list[list[_Cell | None]], y: int, width: int) -> bool:
    """A row holding only cells that continue below it and otherwise empty slots.

    ``| rowspan=5 | 1927/28`` on a row of its own, followed by the winners' rows, renders as one
    block; keeping the lone row would add a row with the year and nothing else.
    """
    line = grid[y]
    if y + 1 >= len(grid) or (len(line) == width and None not in line):
        return False
    below = grid[y + 1]
    return all(cell is None or (x < len(below) and below[x] is cell) for x, cell in enumerate(line))


def table_id_for(page_title: str, table_index: int) -> str:
    """``'List of Prison Break characters', 0`` → ``'List_of_Prison_Break_characters_0'`` (OTT-QA ids)."""
    return f"{page_title.replace(' ', '_')}_{table_index}"


def extract_table(renderer: Renderer, context: PageContext, raw: str) -> None:
    """Emit the rows of one wikitable; a table wikitextparser cannot read is reported and skipped."""
    index = context.table_count
    context.table_count += 1
    section_path = list(context.section_path)
    table_id = table_id_for(context.title, index)
    try:
        table = wikitextparser.parse(raw).get_tables()[0]
        caption_raw = table.caption
        source_rows = [
            [(cell.is_header, cell.value, cell.attrs) for cell in line] for line in table.cells(span=False)
        ]
    except Exception as error:  # wikitextparser raises assorted errors on malformed tables
        offset = context.locate(raw)
        context.report("table_parse_error", offset, f"wikitextparser failed: {type(error).__name__}: {error}")
        return
    caption = clean_inline(renderer.render_markup(caption_raw).text()) if caption_raw else ""
    rows = [[_read_cell(renderer, *cell) for cell in line] for line in source_rows if line]
    grid = _layout(rows)
    width = max((len(line) for line in grid), default=0)
    header_rows = 0
    while header_rows < len(rows) and all(cell.header for cell in rows[header_rows]):
        header_rows += 1
    headers = _headers(grid, header_rows, width)
    row_index = 0
    for y in range(header_rows, len(grid)):
        line = grid[y]
        if _is_spacer(grid, y, width):
            continue
        if header_rows and all(cell.header for cell in rows[y]) and _texts(rows[y]) == _texts(rows[0]):
            continue  # the header repeated further down a long table
        cells = _emit_cells(context, line, headers, index, row_index)
        if not any(cell["text"] or cell["links"] for cell in cells):
            continue
        context.article.table_rows.append(
            {
                "table_id": table_id,
                "page_id": context.page_id,
                "page_title": context.title,
                "section_path": section_path,
                "table_index": index,
                "caption": caption or None,
                "row_index": row_index,
                "cells": cells,
            }
        )
        row_index += 1


def _emit_cells(
    context: PageContext, line: list[_Cell | None], headers: list[str], table_index: int, row_index: int
) -> list[Row]:
    cells: list[Row] = []
    previous: _Cell | None = None
    for x, header in enumerate(headers):
        cell = line[x] if x < len(line) else None
        if cell is None:
            cells.append({"column": x, "header": header, "text": "", "links": []})
            continue
        # A cell spread over several columns yields its Link rows once per table row.
        refs = context.emit_links(
            cell.links,
            "table",
            table_index,
            row_index=row_index,
            relation=header,
            add_rows=cell is not previous,
        )
        previous = cell
        cells.append({"column": x, "header": header, "text": cell.text, "links": refs})
    return cells
