"""Property labels: from property entities in the dump when it has them, else from a bundled table.

A filtered slice of Wikidata (like the sample) carries no property entities, yet the verbalizer
must say "population" for P1082. The bundled TSV (id, label, datatype, aliases, description)
fills that gap; ``resolve_property_labels`` lets labels read from a dump win over it.
"""

from __future__ import annotations

import csv
import gzip
from pathlib import Path

import polars as pl

from ingest.parquet_sink import ParquetSink
from schemas.wikidata import PropertyLabel

BUNDLED_NAME = "bundled.all.parquet"


def read_bundled_properties(path: Path) -> list[dict]:
    """Rows of the bundled property table (.tsv or .tsv.gz) as ``PropertyLabel`` dicts."""
    opener = gzip.open if Path(path).suffix == ".gz" else open
    rows = []
    with opener(path, "rt", encoding="utf-8", newline="") as f:  # type: ignore[operator]
        reader = csv.DictReader(f, delimiter="\t", quoting=csv.QUOTE_NONE)
        for line_no, rec in enumerate(reader, start=2):
            if not rec.get("id") or not rec.get("label"):
                raise ValueError(f"{path}:{line_no}: property row needs an id and a label, got {rec!r}")
            rows.append(
                {
                    "id": rec["id"],
                    "label": rec["label"],
                    "datatype": rec.get("datatype") or None,
                    "aliases": [a for a in (rec.get("aliases") or "").split("|") if a],
                    "description": rec.get("description") or None,
                    "source": "bundled",
                }
            )
    return rows


def write_bundled_properties(out_dir: Path, tsv_path: Path) -> Path:
    """Copy the bundled table into the ingest output as ``properties/bundled.all.parquet``."""
    path = Path(out_dir) / "properties" / BUNDLED_NAME
    with ParquetSink(path, PropertyLabel) as sink:
        sink.extend(read_bundled_properties(tsv_path))
    return path


def property_row_from_entity(entity_row: dict) -> dict | None:
    """A ``PropertyLabel`` row from a property entity of the dump (None if it has no label)."""
    if entity_row["kind"] != "property" or not entity_row["label"]:
        return None
    return {
        "id": entity_row["id"],
        "label": entity_row["label"],
        "datatype": entity_row["datatype"],
        "aliases": entity_row["aliases"],
        "description": entity_row["description"],
        "source": "dump",
    }


def resolve_property_labels(ingest_dir: Path) -> pl.DataFrame:
    """One row per property id; a label read from the dump wins over the bundled one."""
    files = sorted((Path(ingest_dir) / "properties").glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no property tables under {ingest_dir}/properties: run the ingest first")
    frame = pl.concat([pl.read_parquet(f) for f in files])
    return (
        frame.with_columns(pl.when(pl.col("source") == "dump").then(0).otherwise(1).alias("_rank"))
        .sort(["id", "_rank"])
        .unique(subset="id", keep="first", maintain_order=True)
        .drop("_rank")
    )
