"""The build's name tables: what each entity is called and where each title leads, as sorted Parquet.

Built once per build from the ingest output with DuckDB (out of core), then read two ways: whole-corpus
stages (entities, graph) join against them in SQL, and record-by-record code (the verbalizer, the typed
statements, the graph's FACT qualifiers) asks ``NameStore.lexicon`` for the names one batch mentions —
a small ``Lexicon`` bounded by the batch, never the corpus.

The rules are those the build has always had (``index.lexicon``): an entity's label, description,
aliases and Wikipedia title are the last non-empty ones in file order, its sitelink count the last;
a title's entity is the first entity with that Wikipedia title; a redirect's target is the last one
given; an article (namespace 0, no redirect) is its first page. Redirect chains are resolved here,
once, for every redirect: at most ``MAX_REDIRECT_HOPS`` hops, stopping at a title that redirects to
itself, so a loop cannot hang anything. ``resolved`` is that walk; ``resolved_twice`` walks again from
its end (what naming the resolved title does, since it resolves once more).

    entities.parquet  id, label, description, aliases, enwiki_title, page_title, sitelinks, first_pos
    titles.parquet    title, redirect, page_id, revision_id, source, is_article, title_entity,
                      resolved, resolved_twice, entity, resolved_entity, first_pos, article_pos,
                      redirect_pos (positions: where the row was first seen, for "first wins" orders)
    properties.parquet id, label   (property labels: bounded by Wikidata's property count, ~13k)
"""

from __future__ import annotations

import copy
import logging
import shutil
import time
from collections.abc import Iterable
from pathlib import Path

import duckdb
import polars as pl
import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.parquet as pq
from pydantic import BaseModel

from index.duck import arrow, read_sql, run, scalar, sql_path
from index.lexicon import MAX_REDIRECT_HOPS, Lexicon, table_files
from index.verbalize.keys import KEYS
from ingest.wikidata.properties import resolve_property_labels

log = logging.getLogger(__name__)

ENTITIES = "entities.parquet"
TITLES = "titles.parquet"
PROPERTIES = "properties.parquet"
ROW_GROUP_ROWS = 65_536  # sorted by key: a lookup of clustered keys reads only the row groups that hold them
LOOKUP_ROW_GROUP_ROWS = 8_192  # a file's per-batch names: a batch reads one or a few row groups


class NameStats(BaseModel):
    entities: int
    titles: int
    redirects: int
    articles: int
    properties: int
    seconds: float


def _copy_sorted(
    con: duckdb.DuckDBPyConnection, select: str, out: Path, params: dict, row_group_rows: int = ROW_GROUP_ROWS
) -> None:
    """Write a query's rows (already ORDER BY'd) as zstd Parquet in row groups of ``row_group_rows``."""
    tmp = out.with_name(f".{out.name}.tmp")
    run(
        con,
        f"COPY ({select}) TO {sql_path(tmp)} "
        f"(FORMAT parquet, COMPRESSION zstd, ROW_GROUP_SIZE {int(row_group_rows)})",
        params,
    )
    tmp.replace(out)


def _entity_rows(con: duckdb.DuckDBPyConnection, files: list[Path]) -> None:
    """The ingest entity rows with their position, as a view (nothing read until used)."""
    if not files:
        run(
            con,
            "CREATE OR REPLACE TEMP VIEW entity_rows AS SELECT NULL::VARCHAR AS id, NULL::VARCHAR AS label, "
            "NULL::VARCHAR AS description, NULL::VARCHAR[] AS aliases, NULL::VARCHAR AS enwiki_title, "
            "NULL::INTEGER AS sitelink_count, NULL::BIGINT AS pos WHERE false",
        )
        return
    run(
        con,
        "CREATE OR REPLACE TEMP VIEW entity_rows AS SELECT id, label, description, aliases, enwiki_title, "
        f"sitelink_count, pos FROM {read_sql(files, position=True)}",
    )


def _page_rows(con: duckdb.DuckDBPyConnection, files: list[Path]) -> None:
    if not files:
        run(
            con,
            "CREATE OR REPLACE TEMP VIEW page_rows AS SELECT NULL::VARCHAR AS title, "
            "NULL::BIGINT AS page_id, "
            "NULL::INTEGER AS namespace, NULL::BIGINT AS revision_id, NULL::VARCHAR AS redirect_target, "
            "NULL::VARCHAR AS source, NULL::BIGINT AS pos WHERE false",
        )
        return
    run(
        con,
        "CREATE OR REPLACE TEMP VIEW page_rows AS SELECT title, page_id, namespace, revision_id, "
        f"redirect_target, source, pos FROM {read_sql(files, position=True)}",
    )


def _base_tables(con: duckdb.DuckDBPyConnection) -> None:
    """Entities, title → entity, redirects and articles, each by the rule the build has always used."""
    run(
        con,
        """
        CREATE TABLE ent AS
        SELECT id,
               arg_max(label, pos) FILTER (WHERE label <> '') AS label,
               arg_max(description, pos) FILTER (WHERE description <> '') AS description,
               arg_max(aliases, pos) FILTER (WHERE len(aliases) > 0) AS aliases,
               arg_max(enwiki_title, pos) FILTER (WHERE enwiki_title <> '') AS enwiki_title,
               arg_max_null(sitelink_count, pos) AS sitelinks,
               min(pos) AS first_pos
        FROM entity_rows GROUP BY id
        """,
    )
    run(
        con,
        "CREATE TABLE te AS SELECT enwiki_title AS title, arg_min(id, pos) AS qid "
        "FROM entity_rows WHERE enwiki_title <> '' GROUP BY enwiki_title",
    )
    run(
        con,
        "CREATE TABLE red AS SELECT title, arg_max(redirect_target, pos) AS target, min(pos) AS first_pos "
        "FROM page_rows WHERE redirect_target <> '' GROUP BY title",
    )
    run(
        con,
        """
        CREATE TABLE art AS
        SELECT title,
               arg_min({'page_id': page_id, 'revision_id': revision_id, 'source': source}, pos) AS page,
               min(pos) AS first_pos
        FROM page_rows
        WHERE (redirect_target IS NULL OR redirect_target = '') AND namespace = 0
        GROUP BY title
        """,
    )


def _redirect_hops(con: duckdb.DuckDBPyConnection) -> None:
    """``hops``: every redirect source with where ``MAX_REDIRECT_HOPS`` hops and twice that many lead.

    One hop moves to the target unless there is none or it is the title itself; a title that stops
    stays where it stopped, so iterating the hop is the bounded, loop-safe walk."""
    run(con, "CREATE TABLE hop0 AS SELECT title, title AS cur FROM red")
    last = 2 * MAX_REDIRECT_HOPS
    for step in range(1, last + 1):
        run(
            con,
            f"CREATE TABLE hop{step} AS SELECT h.title, "
            "CASE WHEN r.target IS NOT NULL AND r.target <> h.cur THEN r.target ELSE h.cur END AS cur "
            f"FROM hop{step - 1} h LEFT JOIN red r ON r.title = h.cur",
        )
        if step - 1 != MAX_REDIRECT_HOPS:
            run(con, f"DROP TABLE hop{step - 1}")
    run(
        con,
        f"CREATE TABLE hops AS SELECT a.title, a.cur AS resolved, b.cur AS resolved_twice "
        f"FROM hop{MAX_REDIRECT_HOPS} a JOIN hop{last} b USING (title)",
    )
    run(con, f"DROP TABLE hop{MAX_REDIRECT_HOPS}")
    run(con, f"DROP TABLE hop{last}")


TITLES_SQL = """
WITH keys AS (
    SELECT title, min(first_pos) AS first_pos FROM (
        SELECT title, first_pos FROM red UNION ALL SELECT title, first_pos FROM art
        UNION ALL SELECT title, NULL::BIGINT FROM te
    ) GROUP BY title
), walked AS (
    SELECT k.title, k.first_pos,
           coalesce(h.resolved, k.title) AS resolved,
           coalesce(h.resolved_twice, k.title) AS resolved_twice
    FROM keys k LEFT JOIN hops h USING (title)
)
SELECT w.title, red.target AS redirect,
       art.page.page_id AS page_id, art.page.revision_id AS revision_id, art.page.source AS source,
       art.title IS NOT NULL AS is_article,
       te0.qid AS title_entity,
       w.resolved, w.resolved_twice,
       coalesce(te1.qid, te0.qid, w.resolved) AS entity,
       coalesce(te2.qid, te1.qid, w.resolved_twice) AS resolved_entity,
       w.first_pos, art.first_pos AS article_pos, red.first_pos AS redirect_pos
FROM walked w
LEFT JOIN red USING (title)
LEFT JOIN art USING (title)
LEFT JOIN te te0 ON te0.title = w.title
LEFT JOIN te te1 ON te1.title = w.resolved
LEFT JOIN te te2 ON te2.title = w.resolved_twice
ORDER BY w.title
"""

ENTITIES_SQL = """
SELECT ent.id, ent.label, ent.description, ent.aliases, ent.enwiki_title,
       coalesce(ent.enwiki_title, CASE WHEN art.title IS NOT NULL THEN ent.id END) AS page_title,
       ent.sitelinks, ent.first_pos
FROM ent LEFT JOIN art ON art.title = ent.id
ORDER BY ent.id
"""


def build_names(ingest_dir: Path, out_dir: Path, con: duckdb.DuckDBPyConnection) -> NameStats:
    """Write the three name tables under ``out_dir`` from the ingest output (any of its tables may be absent).

    ``con`` should be a file-backed DuckDB (its scratch tables then live on disk, not in memory)."""
    started = time.perf_counter()
    out_dir = Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    ingest_dir = Path(ingest_dir)
    _entity_rows(con, table_files(ingest_dir, ("entities",)))
    _page_rows(con, table_files(ingest_dir, ("pages",)))
    _base_tables(con)
    _redirect_hops(con)
    _copy_sorted(con, ENTITIES_SQL, out_dir / ENTITIES, {})
    _copy_sorted(con, TITLES_SQL, out_dir / TITLES, {})
    properties = 0
    if (ingest_dir / "properties").is_dir():
        props = resolve_property_labels(ingest_dir).select("id", "label").sort("id")
        properties = props.height
        props.write_parquet(out_dir / PROPERTIES)
    else:
        pl.DataFrame(schema={"id": pl.String, "label": pl.String}).write_parquet(out_dir / PROPERTIES)
    stats = NameStats(
        entities=scalar(con, "SELECT count(*) FROM ent"),
        titles=pq.ParquetFile(out_dir / TITLES).metadata.num_rows,
        redirects=scalar(con, "SELECT count(*) FROM red"),
        articles=scalar(con, "SELECT count(*) FROM art"),
        properties=properties,
        seconds=round(time.perf_counter() - started, 3),
    )
    for table in ("ent", "te", "red", "art", "hops"):
        run(con, f"DROP TABLE IF EXISTS {table}")
    log.info("name tables: %s", stats)
    return stats


def read_units(unit_table: Path | None) -> dict[str, str]:
    """The bundled labels of common units (a few dozen rows)."""
    if unit_table is None:
        return {}
    units = pl.read_csv(unit_table, separator="\t", quote_char=None)
    return dict(zip(units["id"], units["label"], strict=True))


class NameStore:
    """The build's name tables, and the small tables every batch shares (property and unit labels).

    Holds only the property labels (bounded by Wikidata's property count) and the unit labels; entity
    and title names are looked up per ingest file (``names_for_file``), never loaded whole.
    """

    def __init__(self, names_dir: Path, con: duckdb.DuckDBPyConnection, unit_table: Path | None = None):
        self.dir = Path(names_dir)
        for name in (ENTITIES, TITLES, PROPERTIES):
            if not (self.dir / name).is_file():
                raise FileNotFoundError(
                    f"no name table {self.dir / name}: the build's plan step writes them; run the plan again"
                )
        self.con = con
        props = pq.read_table(self.dir / PROPERTIES)
        self.property_labels: dict[str, str] = dict(
            zip(props["id"].to_pylist(), props["label"].to_pylist(), strict=True)
        )
        self.unit_table = unit_table  # a process of its own (the graph's writes) reads it again
        self.units = read_units(unit_table)

    def on(self, con: duckdb.DuckDBPyConnection) -> NameStore:
        """The same name tables and small tables, queried through another connection (a step that closes
        its DuckDB when done with it, to give its memory back before a next phase)."""
        other = copy.copy(self)
        other.con = con
        return other

    def lexicon(self, ids: Iterable[str] = (), titles: Iterable[str] = ()) -> Lexicon:
        """The names of a few ids and titles, looked up with one join each: for a handful of keys
        (tests, one record); the build looks its batches up per file (``names_for_file``)."""
        lexicon = Lexicon(property_labels=self.property_labels, units=self.units)
        for keys, table, columns, fill in (
            (ids, ENTITIES, ID_COLUMNS, _fill_entities),
            (titles, TITLES, f"title, {TITLE_COLUMNS}", _fill_titles),
        ):
            wanted = pa.table({"key": pa.array(sorted(set(keys)), pa.string())})
            if not wanted.num_rows:
                continue
            key = columns.split(",")[0].strip()
            self.con.register("wanted_keys", wanted)
            try:
                found = arrow(
                    self.con,
                    f"SELECT w.key AS {key}{', ' + columns.split(',', 1)[1] if ',' in columns else ''} "
                    f"FROM wanted_keys w {'LEFT ' if table == TITLES else ''}JOIN read_parquet($path) n "
                    f"ON n.{key} = w.key",
                    {"path": str(self.dir / table)},
                )
            finally:
                self.con.unregister("wanted_keys")
            fill(lexicon, found)
        return lexicon

    def names_for_file(self, table: str, path: Path, batch_rows: int, work_dir: Path) -> BatchNames:
        """The names every batch of ``batch_rows`` records of this ingest file mentions (one join)."""
        return BatchNames(self, table, Path(path), batch_rows, Path(work_dir))


ID_COLUMNS = "id, label, description, aliases, enwiki_title"
TITLE_COLUMNS = "page_id, revision_id, source, is_article, resolved, resolved_twice, entity, resolved_entity"
TITLE_FIELDS = [c.strip() for c in TITLE_COLUMNS.split(",")]


class PartFile:
    """A Parquet file sorted by ``part``, read one part range at a time through its row groups' min/max
    statistics (pyarrow, no query engine per read: a verbalizer reads it once per batch)."""

    def __init__(self, path: Path):
        self.path = path
        self._file = pq.ParquetFile(path)
        metadata = self._file.metadata
        column = self._file.schema_arrow.get_field_index("part")
        self._ranges = []
        for group in range(metadata.num_row_groups):
            stats = metadata.row_group(group).column(column).statistics
            self._ranges.append((stats.min, stats.max) if stats is not None and stats.has_min_max else None)

    def read(self, first: int, last: int) -> pa.Table:
        groups = [g for g, r in enumerate(self._ranges) if r is None or (r[0] <= last and r[1] >= first)]
        table = self._file.read_row_groups(groups) if groups else self._file.schema_arrow.empty_table()
        part = table.column("part")
        return table.filter(pc.and_(pc.greater_equal(part, first), pc.less_equal(part, last)))


class BatchNames:
    """For one ingest file: the names each of its batches mentions, joined once, sorted by batch.

    DuckDB lists the (batch, key) pairs of the file (``index.verbalize.keys``), joins them with the name
    tables and writes the result sorted by batch into ``work_dir``; ``lexicon(first_row, rows)`` then
    reads only the row groups of that batch. Memory: one batch's names; the join itself is DuckDB's,
    held to its memory limit. Use as a context manager: the files are removed on exit.
    """

    def __init__(self, store: NameStore, table: str, path: Path, batch_rows: int, work_dir: Path):
        if table not in KEYS:
            raise ValueError(f"no key queries for table {table!r}; known: {sorted(KEYS)}")
        if batch_rows < 1:
            raise ValueError(f"batch_rows must be positive, got {batch_rows}")
        self.store, self.batch_rows = store, batch_rows
        self.dir = work_dir
        self.dir.mkdir(parents=True, exist_ok=True)
        keys = KEYS[table]
        rows = (
            f"rows AS (SELECT file_row_number // {int(batch_rows)} AS part, * "
            f"FROM read_parquet({sql_path(path)}, file_row_number=true))"
        )
        self.ids: PartFile | None = None
        self.titles_file: PartFile | None = None
        if keys.ids is not None:
            _copy_sorted(
                store.con,
                f"WITH {rows}, k AS (SELECT DISTINCT part, key FROM ({keys.ids}) WHERE key IS NOT NULL) "
                f"SELECT k.part, {', '.join('n.' + c.strip() for c in ID_COLUMNS.split(','))} "
                f"FROM k JOIN read_parquet({sql_path(store.dir / ENTITIES)}) n ON n.id = k.key "
                "ORDER BY k.part",
                self.dir / "ids.parquet",
                {},
                row_group_rows=LOOKUP_ROW_GROUP_ROWS,
            )
            self.ids = PartFile(self.dir / "ids.parquet")
        if keys.titles is not None:
            _copy_sorted(
                store.con,
                f"WITH {rows}, k AS (SELECT DISTINCT part, key FROM ({keys.titles}) WHERE key IS NOT NULL) "
                "SELECT k.part, k.key AS title, "
                f"{', '.join('t.' + c.strip() for c in TITLE_COLUMNS.split(','))} "
                f"FROM k LEFT JOIN read_parquet({sql_path(store.dir / TITLES)}) t ON t.title = k.key "
                "ORDER BY k.part",
                self.dir / "titles.parquet",
                {},
                row_group_rows=LOOKUP_ROW_GROUP_ROWS,
            )
            self.titles_file = PartFile(self.dir / "titles.parquet")

    def _parts(self, first_row: int, rows: int) -> tuple[int, int]:
        return first_row // self.batch_rows, (first_row + max(rows, 1) - 1) // self.batch_rows

    def lexicon(self, first_row: int, rows: int) -> Lexicon:
        """The names of the records ``first_row`` … ``first_row + rows - 1`` of the file."""
        lexicon = Lexicon(property_labels=self.store.property_labels, units=self.store.units)
        first, last = self._parts(first_row, rows)
        if self.ids is not None:
            _fill_entities(lexicon, self.ids.read(first, last))
        if self.titles_file is not None:
            _fill_titles(lexicon, self.titles_file.read(first, last).select(["title", *TITLE_FIELDS]))
        return lexicon

    def titles(self, first_row: int, rows: int) -> pl.DataFrame:
        """The title lookups of those records as a frame, one row per title (for verbalizers that join
        instead of asking a ``Lexicon``): title, its article's page id, revision and dump file, whether it
        is an article, where it resolves to, and the entities it and its resolution name (null when no
        name table knows the title: it resolves to and names itself)."""
        if self.titles_file is None:
            raise ValueError("this table's records name no titles")
        found = self.titles_file.read(*self._parts(first_row, rows)).select(["title", *TITLE_FIELDS])
        return pl.from_arrow(found).unique("title", keep="first", maintain_order=True)  # type: ignore[return-value]

    def close(self) -> None:
        shutil.rmtree(self.dir, ignore_errors=True)

    def __enter__(self) -> BatchNames:
        return self

    def __exit__(self, *exc: object) -> None:
        self.close()


def _fill_entities(lexicon: Lexicon, found: pa.Table) -> None:
    ids = found["id"].to_pylist()
    for column, target in (
        ("label", lexicon.labels),
        ("description", lexicon.descriptions),
        ("aliases", lexicon.aliases),
        ("enwiki_title", lexicon.entity_titles),
    ):
        target.update((k, v) for k, v in zip(ids, found[column].to_pylist(), strict=True) if v)


def _fill_titles(lexicon: Lexicon, found: pa.Table) -> None:
    """Every looked-up title (a title no name table knows leads to itself and names itself)."""
    columns = [found[c].to_pylist() for c in found.column_names]
    for title, page_id, revision, source, is_article, resolved, twice, entity, resolved_entity in zip(
        *columns, strict=True
    ):
        if resolved is None:  # in no name table: no redirect, no article, no sitelink
            lexicon.resolved[title] = lexicon.title_entities[title] = title
            continue
        if is_article:
            lexicon.articles[title] = (page_id, revision, source)
        lexicon.resolved[title] = resolved
        lexicon.title_entities[title] = entity
        # naming the resolved title resolves it once more: its walk and entity come along
        lexicon.resolved.setdefault(resolved, twice)
        lexicon.title_entities.setdefault(resolved, resolved_entity)
