"""The entities stage: one record per entity with its popularity, the alias table, the alias index.

Built from the build's name tables (``index.names``) and the ingest links with DuckDB, out of core:

- entity records: every Wikidata entity (in the order it was first ingested), then every article
  without a Wikidata id, with sitelinks, in-links (links to its page, through redirects and
  sitelinks) and a popularity in [0, 1] mixing both on a log scale;
- aliases: labels and aliases of labelled entities, article titles, redirects and link anchors
  (counted), each pair ``(normalized alias, entity)`` once with the alias and source of its strongest
  source, and ``prior = P(entity | normalized alias)``. Normalizing is Python (``normalize_mention``),
  done batch by batch; grouping, priors and the sort are DuckDB's;
- the Tantivy alias index over the aliases, fed batch by batch.

Only the current batch is ever in Python.
"""

from __future__ import annotations

import math
import time
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from index.aliases import MAX_ALIAS_CHARS, SOURCE_RANK, build_alias_index, normalize_mention
from index.duck import MemoryBudget, read_sql, record_batches, scalar, sql_path
from index.lexicon import table_files
from index.names import ENTITIES, TITLES
from schemas.arrow import arrow_schema
from schemas.evidence import Alias, EntityRecord

ENTITY_SCHEMA = arrow_schema(EntityRecord)
ALIAS_SCHEMA = arrow_schema(Alias)
PAIRS = "alias_pairs.parquet"


class EntityStats(BaseModel):
    entities: int
    aliases: int
    alias_index_seconds: float
    seconds: float


def _links(ingest_dir: Path) -> str:
    """The ingest links as a relation (an empty one of the right columns when there are none)."""
    files = table_files(ingest_dir, ("links",))
    if files:
        return read_sql(files, position=True)
    empty = ", ".join(f"NULL::VARCHAR AS {c}" for c in ("target_title", "anchor_text"))
    return f"(SELECT {empty}, NULL::BIGINT AS pos WHERE false)"


def _relations(ingest_dir: Path, names_dir: Path) -> dict[str, str]:
    return {
        "links": _links(ingest_dir),
        "ent": f"read_parquet({sql_path(names_dir / ENTITIES)})",
        "titles": f"read_parquet({sql_path(names_dir / TITLES)})",
    }


INLINKS_SQL = """
SELECT coalesce(t.entity, l.target_title) AS entity, count(*) AS n
FROM {links} l LEFT JOIN {titles} t ON t.title = l.target_title GROUP BY 1
"""

RECORDS_SQL = """
WITH inlinks AS ({inlinks}), records AS (
    SELECT id AS entity_id, coalesce(label, enwiki_title, id) AS label, description, page_title, sitelinks,
           0 AS part, first_pos AS pos
    FROM {ent}
    UNION ALL
    SELECT title, title, NULL, title, 0, 1, article_pos FROM {titles}
    WHERE is_article AND title_entity IS NULL
)
SELECT r.entity_id, r.label, r.description, r.page_title, r.sitelinks, coalesce(i.n, 0) AS inlinks
FROM records r LEFT JOIN inlinks i ON i.entity = r.entity_id ORDER BY r.part, r.pos
"""


def write_entity_records(
    con: duckdb.DuckDBPyConnection, relations: dict[str, str], out: Path, batch_rows: int
) -> int:
    """One ``EntityRecord`` per Wikidata entity and per article page without a Wikidata id."""
    inlinks = INLINKS_SQL.format(**relations)
    max_sitelinks = scalar(
        con,
        f"SELECT greatest(coalesce(max(sitelinks), 0), 0) FROM {relations['ent']}",
    )
    max_inlinks = scalar(con, f"SELECT coalesce(max(n), 0) FROM ({inlinks})")

    def popularity(sitelinks: int, links_in: int) -> float:
        a = math.log1p(sitelinks) / math.log1p(max_sitelinks) if max_sitelinks else 0.0
        b = math.log1p(links_in) / math.log1p(max_inlinks) if max_inlinks else 0.0
        return round(0.5 * a + 0.5 * b, 6)

    rows = 0
    tmp = out.with_name(f".{out.name}.tmp")
    with pq.ParquetWriter(tmp, ENTITY_SCHEMA, compression="zstd") as writer:
        sql = RECORDS_SQL.format(inlinks=inlinks, **relations)
        for batch in record_batches(con, sql, rows=batch_rows):
            sitelinks, links_in = batch.column("sitelinks").to_pylist(), batch.column("inlinks").to_pylist()
            scores = [popularity(s, n) for s, n in zip(sitelinks, links_in, strict=True)]
            table = pa.Table.from_batches([batch]).append_column("popularity", pa.array(scores, pa.float64()))
            writer.write_table(table.cast(ENTITY_SCHEMA))
            rows += batch.num_rows
    tmp.replace(out)
    return rows


PAIRS_SQL = """
SELECT label AS alias, id AS entity_id, 'label' AS source, 1::BIGINT AS count, {label} AS rank,
       first_pos AS pos, 0 AS item
FROM {ent} WHERE label IS NOT NULL
UNION ALL
SELECT alias, entity_id, 'alias', 1, {alias}, pos, item FROM (
    SELECT unnest(aliases) AS alias, id AS entity_id, first_pos AS pos,
           generate_subscripts(aliases, 1) AS item
    FROM {ent} WHERE label IS NOT NULL AND aliases IS NOT NULL
)
UNION ALL
SELECT title, entity, 'title', 1, {title}, article_pos, 0 FROM {titles} WHERE is_article
UNION ALL
SELECT title, entity, 'redirect', 1, {redirect}, redirect_pos, 0 FROM {titles} WHERE redirect IS NOT NULL
UNION ALL
SELECT l.anchor_text, coalesce(t.entity, l.target_title), 'anchor', count(*), {anchor}, min(l.pos), 0
FROM {links} l LEFT JOIN {titles} t ON t.title = l.target_title
GROUP BY l.anchor_text, l.target_title, t.entity
"""

ALIASES_SQL = """
WITH grouped AS (
    SELECT alias_norm, entity_id,
           arg_min(alias, [rank, pos, item]) AS alias, arg_min(source, [rank, pos, item]) AS source,
           sum(count)::BIGINT AS count
    FROM read_parquet({pairs}) GROUP BY alias_norm, entity_id
)
SELECT alias, alias_norm, entity_id, source, count,
       count::DOUBLE / (sum(count) OVER (PARTITION BY alias_norm))::DOUBLE AS prior
FROM grouped ORDER BY alias_norm, prior DESC, entity_id
"""


def write_alias_pairs(
    con: duckdb.DuckDBPyConnection, relations: dict[str, str], out: Path, batch_rows: int
) -> None:
    """Every (alias, entity) pair from every naming source, blank and overlong aliases left out, with its
    normalized form: the one step that is Python, a batch at a time."""
    sql = PAIRS_SQL.format(**relations, **SOURCE_RANK)
    writer: pq.ParquetWriter | None = None
    try:
        for batch in record_batches(con, sql, rows=batch_rows):
            frame = pl.from_arrow(batch).filter(
                (pl.col("alias").str.strip_chars().str.len_chars() > 0)
                & (pl.col("alias").str.len_chars() <= MAX_ALIAS_CHARS)
            )
            frame = frame.with_columns(
                alias_norm=pl.Series([normalize_mention(a) for a in frame["alias"]], dtype=pl.String)
            ).filter(pl.col("alias_norm") != "")
            table = frame.to_arrow()
            if writer is None:
                writer = pq.ParquetWriter(out, table.schema, compression="zstd")
            writer.write_table(table)
    finally:
        if writer is not None:
            writer.close()
    if writer is None:  # no names at all
        pq.write_table(
            pa.table({c: pa.array([], pa.string()) for c in ("alias", "entity_id", "source", "alias_norm")})
            .append_column("count", pa.array([], pa.int64()))
            .append_column("rank", pa.array([], pa.int64()))
            .append_column("pos", pa.array([], pa.int64()))
            .append_column("item", pa.array([], pa.int64())),
            out,
        )


def write_aliases(con: duckdb.DuckDBPyConnection, pairs: Path, out: Path, batch_rows: int) -> int:
    rows = 0
    tmp = out.with_name(f".{out.name}.tmp")
    with pq.ParquetWriter(tmp, ALIAS_SCHEMA, compression="zstd") as writer:
        for batch in record_batches(con, ALIASES_SQL.format(pairs=sql_path(pairs)), rows=batch_rows):
            writer.write_table(pa.Table.from_batches([batch]).cast(ALIAS_SCHEMA))
            rows += batch.num_rows
    tmp.replace(out)
    return rows


def build_entities(
    ingest_dir: Path,
    names_dir: Path,
    entity_path: Path,
    alias_path: Path,
    alias_index_dir: Path,
    con: duckdb.DuckDBPyConnection,
    budget: MemoryBudget,
    work_dir: Path,
) -> EntityStats:
    """Write the entity records, the alias table and the alias index."""
    started = time.perf_counter()
    work_dir.mkdir(parents=True, exist_ok=True)
    relations = _relations(Path(ingest_dir), Path(names_dir))
    batch_rows = budget.batch_rows(500, ceiling=100_000)
    entities = write_entity_records(con, relations, entity_path, batch_rows)
    write_alias_pairs(con, relations, work_dir / PAIRS, batch_rows)
    aliases = write_aliases(con, work_dir / PAIRS, alias_path, batch_rows)
    (work_dir / PAIRS).unlink()
    index_stats = build_alias_index(
        alias_path,
        entity_path,
        alias_index_dir,
        con,
        batch_rows,
        heap_bytes=min(128_000_000, (budget.memory_mb << 20) // 4),
    )
    return EntityStats(
        entities=entities,
        aliases=aliases,
        alias_index_seconds=index_stats.seconds,
        seconds=round(time.perf_counter() - started, 3),
    )
