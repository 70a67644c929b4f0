"""Report items that statements point to but the ingested slice does not contain.

A filtered slice of Wikidata always has such dangling references (Belgium's heads of state are
not in a slice of countries). They stay in the statements as ids; this report says which ids
they are and how often they are used, so a later run can widen the slice or fetch labels.
"""

from __future__ import annotations

from pathlib import Path

import polars as pl


def dangling_references(ingest_dir: Path) -> pl.DataFrame:
    """(id, uses) for every referenced entity id absent from the ``entities`` tables, most used first."""
    ingest_dir = Path(ingest_dir)
    statements = pl.scan_parquet(ingest_dir / "statements" / "*.parquet")
    main = statements.select(pl.col("value_item").alias("id"))
    qualifiers = statements.select(pl.col("qualifiers").explode()).select(
        pl.col("qualifiers").struct.field("value_item").alias("id")
    )
    entities = pl.scan_parquet(ingest_dir / "entities" / "*.parquet").select("id")
    return (
        pl.concat([main, qualifiers])
        .drop_nulls()
        .join(entities, on="id", how="anti")
        .group_by("id")
        .agg(pl.len().alias("uses"))
        .sort(["uses", "id"], descending=[True, False])
        .collect()
    )


DANGLING_FILE = "dangling_references.parquet"


def write_dangling_report(ingest_dir: Path) -> tuple[Path, int]:
    """Write ``dangling_references.parquet`` beside the tables; returns its path and row count."""
    frame = dangling_references(ingest_dir)
    path = Path(ingest_dir) / DANGLING_FILE
    frame.write_parquet(path)
    return path, frame.height
