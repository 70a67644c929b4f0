"""A larger ingest made from a real one: ``copies`` renamed copies of every ingest file.

Copy ``c`` (0 keeps the original names) renames every Wikidata item id (``Q31`` -> ``Q31c2``), every
page title (``Belgium`` -> ``Belgium (c2)``), table id and statement id, and keeps everything else —
texts, links, qualifiers, redirects — so the copies have the shapes of the original and name each
other's entities exactly as it does, while their evidence texts (which carry labels and titles) differ.
Property ids and the bundled property table are shared, as in a real dump. ``add_names`` adds items
that only have a name (and their articles and redirects): what makes the name tables large. Used to
show that a build's memory does not grow with its input (``tests/index/test_memory_cap.py``) and by
hand to measure that.

    python -m tests.index.grown_ingest INGEST_DIR OUT_DIR COPIES [NAMES]
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq

TABLES = ("entities", "statements", "pages", "passages", "table_rows", "infobox_fields", "links")


def _item(column: pl.Expr, copy: int) -> pl.Expr:
    """Wikidata item ids renamed; anything else (property ids, nulls) unchanged."""
    if not copy:
        return column
    return pl.when(column.str.starts_with("Q")).then(column + f"c{copy}").otherwise(column)


def _title(column: pl.Expr, copy: int) -> pl.Expr:
    return column if not copy else column + f" (c{copy})"


def _links(column: str, copy: int) -> pl.Expr:
    return pl.col(column).list.eval(pl.element().struct.with_fields(_title(pl.field("target"), copy)))


def _renamed(table: str, frame: pl.DataFrame, copy: int) -> pl.DataFrame:
    page_id = pl.col("page_id") + copy * 100_000_000
    if table == "entities":
        return frame.with_columns(
            _item(pl.col("id"), copy), _title(pl.col("enwiki_title"), copy), _title(pl.col("label"), copy)
        )
    if table == "statements":
        qualifiers = pl.col("qualifiers").list.eval(
            pl.element().struct.with_fields(_item(pl.field("value_item"), copy))
        )
        return frame.with_columns(
            _item(pl.col("subject"), copy),
            _item(pl.col("value_item"), copy),
            pl.col("statement_id") + (f"-c{copy}" if copy else ""),
            qualifiers,
        )
    if table == "pages":
        return frame.with_columns(
            _title(pl.col("title"), copy), _title(pl.col("redirect_target"), copy), page_id
        )
    if table == "passages":
        return frame.with_columns(_title(pl.col("page_title"), copy), _links("links", copy), page_id)
    if table == "infobox_fields":
        return frame.with_columns(_title(pl.col("page_title"), copy), _links("value_links", copy), page_id)
    if table == "table_rows":
        cells = pl.col("cells").list.eval(
            pl.element().struct.with_fields(
                pl.field("links").list.eval(pl.element().struct.with_fields(_title(pl.field("target"), copy)))
            )
        )
        return frame.with_columns(
            pl.col("table_id") + (f"~c{copy}" if copy else ""),
            _title(pl.col("page_title"), copy),
            cells,
            page_id,
        )
    return frame.with_columns(  # links
        _title(pl.col("source_title"), copy),
        _title(pl.col("target_title"), copy),
        pl.col("source_page_id") + copy * 100_000_000,
    )


def grow(ingest: Path, out: Path, copies: int) -> Path:
    """Write ``copies`` renamed copies of the ingest under ``out``; returns ``out``."""
    out.mkdir(parents=True, exist_ok=True)
    for shared in ("properties", "_runs"):
        if (ingest / shared).is_dir():
            shutil.copytree(ingest / shared, out / shared, dirs_exist_ok=True)
    for table in TABLES:
        for path in sorted((ingest / table).glob("*.parquet")):
            frame = pl.read_parquet(path)
            stem, shard = path.name.rsplit(".", 2)[:2]
            (out / table).mkdir(exist_ok=True)
            for copy in range(copies):
                _renamed(table, frame, copy).write_parquet(out / table / f"{stem}.{shard}c{copy}.parquet")
    return out


def _write_like(frame: pl.DataFrame, sibling: Path, out: Path) -> None:
    """``frame`` written with the Arrow schema (and its model metadata) of an ingest file beside it."""
    schema = pq.read_schema(next(iter(sorted(sibling.glob("*.parquet")))))
    pq.write_table(frame.to_arrow().select(schema.names).cast(schema), out)


def add_names(ingest: Path, entities: int) -> Path:
    """Add ``entities`` Wikidata items that only have a name (a label and an English Wikipedia
    article), their article pages and a redirect to each, to an ingest folder: what makes a corpus's
    name tables large (the old ``Lexicon`` held every one in a dict) while adding no evidence (an
    item with no description, alias or statement, and a page with no text, say nothing)."""
    index = pl.int_range(entities, dtype=pl.Int64)
    name = pl.format("Name {}", index.cast(pl.String).str.zfill(7))
    items = pl.select(
        id=pl.format("Q{}", index + 900_000_000),
        kind=pl.lit("item"),
        label=name,
        description=pl.lit(None, pl.String),
        aliases=pl.lit([], pl.List(pl.String)),
        enwiki_title=name,
        sitelink_count=pl.lit(1, pl.Int32),
        instance_of=pl.lit([], pl.List(pl.String)),
        datatype=pl.lit(None, pl.String),
    )
    _write_like(items, ingest / "entities", ingest / "entities" / "names-only.all.parquet")
    articles = pl.select(page_id=index + 900_000_000, title=name, redirect_target=pl.lit(None, pl.String))
    redirects = pl.select(
        page_id=index + 950_000_000,
        title=pl.format("Also {}", index.cast(pl.String).str.zfill(7)),
        redirect_target=name,
    )
    pages = pl.concat([articles, redirects]).with_columns(
        namespace=pl.lit(0, pl.Int32),
        revision_id=pl.col("page_id"),
        revision_timestamp=pl.lit(None, pl.String),
        length=pl.lit(100, pl.Int64),
        categories=pl.lit([], pl.List(pl.String)),
        source=pl.lit("names-only.xml"),
    )
    _write_like(pages, ingest / "pages", ingest / "pages" / "names-only.all.parquet")
    return ingest


if __name__ == "__main__":
    grown = grow(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3]))
    print(add_names(grown, int(sys.argv[4])) if len(sys.argv) > 4 else grown)
