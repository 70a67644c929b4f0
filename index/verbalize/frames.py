"""Passages and table rows verbalized a batch at a time in polars, the evidence hash aside.

``passage_batch``/``row_batch`` said one record at a time in Python; on OTT-QA that cost four times
what reading the rows into Python does. Here the string work (windows, context prefixes, cell
texts), the name lookups (a join with the batch's title table, ``BatchNames.titles``) and the
dedup of linked entities run in polars; Python computes only each row's content hash. The output is
exactly theirs — the same rows, in the same order, with the same ids, links and provenance
(``tests/index/test_evidence.py`` checks it against them).

Whitespace is Python's: ``str.strip()`` strips what ``str.isspace()`` calls space, which is Rust's
``\\s`` plus four control characters, so every strip here names its characters.
"""

from __future__ import annotations

import hashlib
import sys
from itertools import pairwise

import numpy as np
import polars as pl
import pyarrow as pa

from index.verbalize.buffer import EVIDENCE_SCHEMA, PROVENANCE_SCHEMA
from index.verbalize.common import CONTEXT_SEPARATOR
from index.verbalize.windows import batch_windows

PY_WHITESPACE = "".join(c for c in map(chr, range(sys.maxunicode + 1)) if c.isspace())
STRINGS = pl.List(pl.String)


def strip(column: pl.Expr) -> pl.Expr:
    return column.str.strip_chars(PY_WHITESPACE)


def context(parts: pl.Expr) -> pl.Expr:
    """``common.context`` over a list column: the non-blank parts, stripped, joined with ' / '."""
    return parts.list.eval(strip(pl.element()).filter(strip(pl.element()).str.len_bytes() > 0)).list.join(
        CONTEXT_SEPARATOR
    )


def evidence_ids(source_type: str, texts: pa.Array) -> list[str]:
    """``common.evidence_id`` of every text (the one step left in Python: polars has no BLAKE2), hashed
    straight from the Arrow buffer: the prefix once, then each text's UTF-8 bytes in place."""
    array = texts.cast(pa.large_string())
    if isinstance(array, pa.ChunkedArray):
        array = array.combine_chunks()
    offsets = np.frombuffer(array.buffers()[1], dtype=np.int64)[array.offset : array.offset + len(array) + 1]
    data = memoryview(array.buffers()[2] or b"")
    copy = hashlib.blake2b(f"{source_type}\x1f".encode(), digest_size=16).copy
    ids = []
    bounds = offsets.tolist()
    for start, end in pairwise(bounds):
        digest = copy()
        digest.update(data[start:end])
        ids.append(digest.hexdigest())
    return ids


def page_facts(pages: pl.DataFrame, titles: pl.DataFrame, source: str) -> pl.DataFrame:
    """Per row: its page's entity (none for an empty title), revision and dump file (``page_facts``)."""
    return pages.join(
        titles, left_on="page_title", right_on="title", how="left", maintain_order="left"
    ).select(
        pl.when(pl.col("page_title").str.len_bytes() > 0)
        .then(pl.coalesce("entity", "page_title"))
        .alias("page_entity"),
        pl.when(pl.col("is_article")).then(pl.col("revision_id")).alias("revision_id"),
        pl.when(pl.col("is_article")).then(pl.col("source")).otherwise(pl.lit(source)).alias("source"),
    )


def linked(targets: pl.DataFrame, titles: pl.DataFrame, keys: list[str]) -> pl.DataFrame:
    """(keys…, resolved targets, their entities) per row, in link order: ``linked_entities``' loop.

    ``targets`` holds one row per (row keys, link order, target)."""
    joined = targets.join(titles, left_on="target", right_on="title", how="left", maintain_order="left")
    resolved = pl.coalesce("resolved", "target")
    return (
        joined.with_columns(resolved=resolved, linked=pl.coalesce("resolved_entity", resolved))
        .sort([*keys, "order"], maintain_order=True)
        .group_by(keys, maintain_order=True)
        .agg(pl.col("resolved").alias("link_targets"), pl.col("linked"))
    )


def assemble(rows: pl.DataFrame, source_type: str) -> pa.Table:
    """Evidence rows from a frame of text, page_title, page_entity, link_targets, linked and provenance
    fields (named as in ``Provenance``; the ones a source never sets are left empty)."""
    frame = rows.with_columns(
        entity_ids=pl.concat_list(
            pl.when(pl.col("page_entity").is_not_null())
            .then(pl.concat_list("page_entity"))
            .otherwise(pl.lit([], STRINGS)),
            pl.col("linked").fill_null(pl.lit([], STRINGS)),
        ).list.unique(maintain_order=True),
        link_targets=pl.col("link_targets").fill_null(pl.lit([], STRINGS)).list.unique(maintain_order=True),
    )
    n = frame.height
    children = []
    for field in PROVENANCE_SCHEMA:
        if field.name in frame.columns:
            children.append(frame[field.name].to_arrow().cast(field.type))
        elif field.name == "section_path":
            children.append(pa.array([[]] * n, field.type))
        else:
            children.append(pa.nulls(n, field.type))
    columns = {
        "evidence_id": pa.array(evidence_ids(source_type, frame["text"].to_arrow()), pa.string()),
        "source_type": pa.array([source_type] * n, pa.string()),
        "text": frame["text"].to_arrow(),
        "title": frame["page_title"].to_arrow(),
        "page_title": frame["page_title"].to_arrow(),
        "entity_ids": frame["entity_ids"].to_arrow(),
        "link_targets": frame["link_targets"].to_arrow(),
        "provenance": pa.StructArray.from_arrays(children, fields=list(PROVENANCE_SCHEMA)),
    }
    return pa.Table.from_arrays(
        [columns[f.name].cast(f.type) for f in EVIDENCE_SCHEMA], schema=EVIDENCE_SCHEMA
    )


def passage_frame(batch: pa.RecordBatch, titles: pl.DataFrame, source: str, max_words: int) -> pa.Table:
    """Every window of every passage of ``batch`` (``text.passage_batch``)."""
    records = pl.from_arrow(batch).with_row_index("rec")
    records = records.with_columns(
        windows=batch_windows(records["text"], max_words),
        prefix=context(pl.concat_list(pl.col("page_title"), pl.col("section_path"))),
    ).with_columns(page_facts(records.select("page_title"), titles, source))
    rows = (
        records.with_columns(window=pl.int_ranges(pl.col("windows").list.len()))
        .explode(["windows", "window"])
        .filter(pl.col("windows").is_not_null())
        .with_columns(text=pl.col("prefix") + ": " + pl.col("windows"), chunks=pl.col("windows"))
    )
    links = _window_links(records, rows)
    if links is not None:
        rows = rows.join(
            linked(links, titles, ["rec", "window"]), on=["rec", "window"], how="left", maintain_order="left"
        )
    else:
        rows = rows.with_columns(link_targets=pl.lit(None, STRINGS), linked=pl.lit(None, STRINGS))
    rows = rows.rename({"order": "passage_order"}).with_columns(pl.col("window").cast(pl.Int32))
    return assemble(rows, "text")


def _window_links(records: pl.DataFrame, rows: pl.DataFrame) -> pl.DataFrame | None:
    """(rec, window, link_targets, linked) for passages with links: a window keeps the links whose anchor
    it contains, the first window also those whose anchor is in none; a single window keeps all."""
    links = (
        records.select("rec", "links", count=pl.col("windows").list.len())
        .with_columns(order=pl.int_ranges(pl.col("links").list.len()))
        .explode(["links", "order"])
        .filter(pl.col("links").is_not_null())
        .unnest("links")
    )
    if not links.height:
        return None
    pairs = links.join(rows.select("rec", "window", "chunks"), on="rec", maintain_order="left").with_columns(
        inside=pl.col("chunks").str.contains(pl.col("anchor"), literal=True)
    )
    pairs = pairs.with_columns(nowhere=~pl.col("inside").any().over(["rec", "order"])).filter(
        (pl.col("count") == 1) | pl.col("inside") | ((pl.col("window") == 0) & pl.col("nowhere"))
    )
    return pairs.select("rec", "window", "order", "target")


def row_frame(batch: pa.RecordBatch, titles: pl.DataFrame, source: str) -> tuple[pa.Table, int]:
    """Every table row of ``batch`` with text (``tables.row_batch``), and how many had none."""
    records = pl.from_arrow(batch).with_row_index("rec")
    cells = (
        records.select("rec", pl.col("cells"))
        .with_columns(cell=pl.int_ranges(pl.col("cells").list.len()))
        .explode(["cells", "cell"])
        .filter(pl.col("cells").is_not_null())
        .unnest("cells")
        .with_columns(said=strip(pl.col("text")))
        .filter(pl.col("said").str.len_bytes() > 0)
        .with_columns(head=strip(strip(pl.col("header")).str.strip_chars_end(":")))
        .with_columns(
            said=pl.when((pl.col("head").str.len_bytes() > 0) & (pl.col("head") != pl.col("said")))
            .then(pl.col("head") + ": " + pl.col("said"))
            .otherwise(pl.col("said"))
        )
    )
    texts = cells.group_by("rec", maintain_order=True).agg(pl.col("said").str.join(", "))
    rows = records.join(texts, on="rec", how="inner", maintain_order="left")
    rows = rows.with_columns(
        page_facts(rows.select("page_title"), titles, source),
        text=context(pl.concat_list(pl.col("page_title"), pl.col("section_path"), pl.col("caption")))
        + ": "
        + pl.col("said"),
    )
    targets = (
        cells.select("rec", "cell", "links")
        .with_columns(link=pl.int_ranges(pl.col("links").list.len()))
        .explode(["links", "link"])
        .filter(pl.col("links").is_not_null())
        .select(
            "rec", pl.col("links").struct.field("target"), order=pl.col("cell") * 1_000_000 + pl.col("link")
        )
    )
    if targets.height:
        rows = rows.join(linked(targets, titles, ["rec"]), on="rec", how="left", maintain_order="left")
    else:
        rows = rows.with_columns(link_targets=pl.lit(None, STRINGS), linked=pl.lit(None, STRINGS))
    return assemble(rows, "table"), records.height - rows.height
