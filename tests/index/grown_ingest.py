"""A larger ingest made from a real one: ``copies`` renamed copies of every ingest file.

Copy ``c`` (0 keeps the original names) renames every Wikidata item id (``Q31`` -> ``Q31c2``), every
page title (``Belgium`` -> ``Belgium (c2)``), table id and statement id, and keeps everything else —
texts, links, qualifiers, redirects — so the copies have the shapes of the original and name each
other's entities exactly as it does, while their evidence texts (which carry labels and titles) differ.
Property ids and the bundled property table are shared, as in a real dump. Used to show that a
stage's memory does not grow with its input (``test_memory_cap``) and by hand to measure that.

    python -m tests.index.grown_ingest INGEST_DIR OUT_DIR COPIES
"""

from __future__ import annotations

import shutil
import sys
from pathlib import Path

import polars as pl

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


if __name__ == "__main__":
    print(grow(Path(sys.argv[1]), Path(sys.argv[2]), int(sys.argv[3])))
