"""The graph's node and edge tables as Parquet files, made by DuckDB: the first half of the graph stage.

Each table is one DuckDB query over the deduplicated evidence, the ingest statements and links, the
entities stage's records and the build's name tables, written straight to a Parquet file in
``work_dir`` (out of core, held to the memory budget), in the column order of its Kùzu COPY
(``index.graph.COPY_COLUMNS``). Two things are Python, batch by batch: a FACT edge's qualifiers said as
text (the verbalizer's own ``format_qualifiers``, names from a per-batch lexicon) and whether a title
with a colon names an article (``classify_target``).

The stage runs these writes in a process of their own (``python -m index.graph_tables REQUEST RESULT``,
started by ``index.graph_build``) and loads Kùzu in the task's process, which never held DuckDB's joins:
a process that ran them keeps ~450-600 MB resident after them even with its heap trimmed, and Kùzu's
load then rises ~1 GB above where it starts at 1M entities (benchmarks/results/scale/graph_memory.md).

The rules are the graph's own: FACT edges for item-valued statements that are not deprecated, with the
property's label and the KG evidence that says them; LINKS_TO for links whose target and its redirect
target are articles; ABOUT from every page to the entity it names (and from a sitelinked entity's
page); MENTIONED_IN from each entity an evidence row lists to that row, with a role (subject, object,
qualifier for KG rows; page, link for page rows); HAS_EVIDENCE from a page to each of its rows; stub
pages and named-by-id entities for every endpoint that was not ingested. The last two are written in
evidence order first ("mentions", "in_page": other tables are made from them), then turned round into
the order of their start nodes for the load.
"""

from __future__ import annotations

import resource
import sys
from pathlib import Path

import duckdb
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel, Field

from index.duck import MemoryBudget, connect, read_sql, run, scalar, sql_path
from index.evidence_reader import EvidenceReader
from index.graph import NODE_KEY_SQL
from index.lexicon import table_files
from index.names import ENTITIES, PROPERTIES, TITLES, NameStore
from index.verbalize.values import format_qualifiers
from ingest.progress import progress
from ingest.wikitext.titles import classify_target

STATEMENT_COLUMNS = "subject, property, value_kind, value_item, rank, statement_id, qualifiers"


def _is_article(title: str) -> bool:
    """Only main-namespace titles become pages; 'Category:X' or 'Template:Y' link targets do not."""
    return ":" not in title or classify_target(title).kind == "article"


def _copy(con: duckdb.DuckDBPyConnection, select: str, out: Path) -> int:
    run(con, f"COPY ({select}) TO {sql_path(out)} (FORMAT parquet, COMPRESSION zstd)")
    return pq.ParquetFile(out).metadata.num_rows


def _copy_parts(con: duckdb.DuckDBPyConnection, selects: list[str], out: Path) -> int:
    """``out`` as the rows of each SELECT in turn, each SELECT written to a part file of its own by one
    query and the parts appended row group by row group. One ORDER BY over a UNION ALL of the parts
    holds every branch's hash tables and the sort's runs at once: the Entity table's one query ran out of
    memory at 1M entities (488 MB, benchmarks/results/scale/graph_memory.md) where each part fits."""
    parts = [out.with_name(f"{out.stem}.part{index}.parquet") for index in range(len(selects))]
    for select, part in zip(selects, parts, strict=True):
        _copy(con, select, part)
    first = pq.ParquetFile(parts[0]).schema_arrow  # a later part may hold nulls where the first has none
    schema = pa.schema([field.with_nullable(True) for field in first])
    rows = 0
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for part in parts:
            parquet = pq.ParquetFile(part)
            for group in range(parquet.num_row_groups):
                table = parquet.read_row_group(group).cast(schema)
                writer.write_table(table)
                rows += table.num_rows
            part.unlink()
    return rows


def peak_rss_mb() -> float:
    """This process's peak resident set so far (Linux reports it in KiB)."""
    return round(resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024, 1)


class GraphTables:
    """The relations the graph's queries read, as SQL, and the files they write into ``work``."""

    def __init__(self, ingest_dir: Path, evidence: EvidenceReader, names_dir: Path, work: Path):
        self.work = work
        statements = table_files(ingest_dir, ("statements",))
        links = table_files(ingest_dir, ("links",))
        self.statement_files = statements
        self.rel = {
            "evidence": evidence.sql(
                ["evidence_id", "source_type", "page_title", "entity_ids", "provenance"]
            ),
            "statements": (
                f"(SELECT {STATEMENT_COLUMNS}, pos FROM {read_sql(statements, position=True)} "
                "WHERE value_kind = 'item' AND value_item IS NOT NULL)"
                if statements
                else "(SELECT NULL::VARCHAR AS subject, NULL::VARCHAR AS property, "
                "NULL::VARCHAR AS value_kind, "
                "NULL::VARCHAR AS value_item, NULL::VARCHAR AS rank, NULL::VARCHAR AS statement_id, "
                "NULL::BIGINT AS pos WHERE false)"
            ),
            "links": (
                read_sql(links, position=True)
                if links
                else "(SELECT NULL::VARCHAR AS source_title, NULL::VARCHAR AS source_kind, NULL::INTEGER AS "
                "source_index, NULL::INTEGER AS row_index, NULL::VARCHAR AS relation, NULL::VARCHAR AS "
                "target_title, NULL::VARCHAR AS anchor_text, NULL::BIGINT AS pos WHERE false)"
            ),
            "titles": f"read_parquet({sql_path(names_dir / TITLES)})",
            "ent": f"read_parquet({sql_path(names_dir / ENTITIES)})",
            "props": f"read_parquet({sql_path(names_dir / PROPERTIES)})",
        }

    def file(self, name: str) -> Path:
        return self.work / f"{name}.parquet"

    def read(self, name: str) -> str:
        return f"read_parquet({sql_path(self.file(name))})"


def write_qualifier_texts(tables: GraphTables, names: NameStore, out: Path, batch_rows: int) -> None:
    """(pos, text) of every item-valued, not deprecated statement with qualifiers: the qualifiers as the
    verbalizer says them, with the names of one batch at a time."""
    schema = pa.schema([("pos", pa.int64()), ("text", pa.string())])
    with pq.ParquetWriter(out, schema, compression="zstd") as writer:
        for index, path in enumerate(tables.statement_files):
            base = index << 40
            with names.names_for_file(
                "statements", path, batch_rows, tables.work / f"names-{index}"
            ) as batches:
                start = 0
                parquet = pq.ParquetFile(path)
                for batch in parquet.iter_batches(
                    batch_size=batch_rows, columns=STATEMENT_COLUMNS.split(", ")
                ):
                    lexicon = batches.lexicon(start, batch.num_rows)
                    positions, texts = [], []
                    rows = zip(
                        *(
                            batch.column(c).to_pylist()
                            for c in ("value_kind", "value_item", "rank", "qualifiers")
                        ),
                        strict=True,
                    )
                    for offset, (kind, item, rank, qualifiers) in enumerate(rows):
                        if kind == "item" and item and rank != "deprecated" and qualifiers:
                            positions.append(base + start + offset)
                            texts.append(format_qualifiers(qualifiers, lexicon))
                    writer.write_table(pa.table({"pos": positions, "text": texts}, schema=schema))
                    start += batch.num_rows


def write_colon_titles(
    con: duckdb.DuckDBPyConnection, tables: GraphTables, out: Path, batch_rows: int
) -> None:
    """(title, is_article) of every link target or its redirect target that has a colon."""
    r = tables.rel
    sql = (
        f"SELECT DISTINCT title FROM (SELECT l.target_title AS title FROM {r['links']} l UNION ALL "
        f"SELECT t.resolved FROM {r['links']} l JOIN {r['titles']} t ON t.title = l.target_title) "
        "WHERE contains(title, ':')"
    )
    schema = pa.schema([("title", pa.string()), ("article", pa.bool_())])
    with pq.ParquetWriter(out, schema) as writer:
        for batch in con.sql(sql).to_arrow_reader(batch_rows):
            titles = batch.column(0).to_pylist()
            writer.write_table(
                pa.table({"title": titles, "article": [_is_article(t) for t in titles]}, schema=schema)
            )


def _edge_queries(tables: GraphTables) -> dict[str, str]:
    r = tables.rel
    article = (
        "(NOT contains({t}, ':') OR coalesce((SELECT c.article FROM "
        + tables.read("colon_titles")
        + " c WHERE c.title = {t}), false))"
    )
    resolved = "coalesce(t.resolved, l.target_title)"
    kg = (
        "SELECT provenance.statement_id AS statement_id, arg_min(evidence_id, pos) AS evidence_id "
        f"FROM {r['evidence']} "
        "WHERE source_type = 'kg' AND provenance.statement_id IS NOT NULL GROUP BY 1"
    )
    return {
        "facts": f"""
            SELECT s.subject AS "from", s.value_item AS "to", s.property,
                   coalesce(p.label, e.label, s.property) AS label, s.statement_id, s.rank,
                   coalesce(q.text, '') AS qualifiers, coalesce(k.evidence_id, '') AS evidence_id
            FROM {r["statements"]} s
            LEFT JOIN {r["props"]} p ON p.id = s.property
            LEFT JOIN {r["ent"]} e ON e.id = s.property
            LEFT JOIN {tables.read("qualifiers")} q ON q.pos = s.pos
            LEFT JOIN ({kg}) k ON k.statement_id = s.statement_id
            WHERE s.rank <> 'deprecated' ORDER BY s.pos""",
        "LINKS_TO": f"""
            SELECT node_key("from") AS from_key, node_key("to") AS to_key, source_kind, relation, anchor,
                   source_index, row_index, "from", "to" FROM (
                SELECT l.source_title AS "from",
                       CASE WHEN {article.format(t="l.target_title")} AND {article.format(t=resolved)}
                            THEN {resolved} END AS "to",
                       l.source_kind, l.relation, l.anchor_text AS anchor,
                       l.source_index::INTEGER AS source_index, l.row_index::INTEGER AS row_index, l.pos
                FROM {r["links"]} l LEFT JOIN {r["titles"]} t ON t.title = l.target_title
            ) WHERE "to" IS NOT NULL ORDER BY pos""",
        "in_page": f"""
            SELECT e.pos AS from_key, node_key(coalesce(t.resolved, e.page_title)) AS to_key,
                   coalesce(t.resolved, e.page_title) AS "to"
            FROM {r["evidence"]} e LEFT JOIN {r["titles"]} t ON t.title = e.page_title
            WHERE e.page_title IS NOT NULL ORDER BY e.pos""",
    }


def _split_facts(con: duckdb.DuckDBPyConnection, tables: GraphTables) -> int:
    """The item statements as FACT edges (ends, property, statement node id) and Statement nodes (the
    rest), the id being the statement's row in ``facts``: a wide rel table costs Kùzu far more memory to
    load than a node table (``index.graph.SCHEMA``)."""
    facts = f"read_parquet({sql_path(tables.file('facts'))}, file_row_number=true)"
    _copy(
        con,
        "SELECT file_row_number AS key, property, label, statement_id, rank, qualifiers, evidence_id "
        f"FROM {facts} ORDER BY key",
        tables.file("Statement"),
    )
    return _copy(
        con,
        'SELECT node_key("from") AS from_key, node_key("to") AS to_key, property, '
        f'file_row_number AS statement, "from", "to" FROM {facts} ORDER BY statement',
        tables.file("FACT"),
    )


def _mentions(tables: GraphTables) -> str:
    r = tables.rel
    return f"""
        WITH objects AS (
            SELECT statement_id, arg_min(value_item, pos) AS object FROM {r["statements"]} GROUP BY 1
        ),
        rows AS (
            SELECT e.evidence_id, e.source_type, e.entity_ids,
                   coalesce(t.entity, e.page_title) AS page_entity,
                   o.object, e.pos
            FROM {r["evidence"]} e
            LEFT JOIN {r["titles"]} t ON t.title = e.page_title
            LEFT JOIN objects o ON o.statement_id = e.provenance.statement_id
        ), exploded AS (
            SELECT evidence_id, source_type, page_entity, object, pos,
                   unnest(entity_ids) AS entity, generate_subscripts(entity_ids, 1) - 1 AS position
            FROM rows
        ), roles AS (
            SELECT evidence_id, entity, pos, position,
                   CASE WHEN source_type = 'kg' AND position = 0 THEN 'subject'
                        WHEN source_type = 'kg' AND entity = object THEN 'object'
                        WHEN source_type = 'kg' THEN 'qualifier'
                        WHEN entity = page_entity THEN 'page'
                        ELSE 'link' END AS role
            FROM exploded WHERE entity IS NOT NULL
        )
        SELECT pos AS from_key, node_key(entity) AS to_key, arg_min(role, position) AS role, entity AS "to"
        FROM roles GROUP BY pos, entity ORDER BY pos, min(position)"""


def _pages(tables: GraphTables) -> list[str]:
    """The ingested articles in title-table order, then the stub pages links and evidence name, by title."""
    r = tables.rel
    return [
        f"SELECT node_key(title) AS key, title, page_id, true AS ingested FROM {r['titles']} "
        "WHERE is_article ORDER BY article_pos",
        f"""
        WITH named AS (
            SELECT "from" AS title FROM {tables.read("LINKS_TO")}
            UNION SELECT "to" FROM {tables.read("LINKS_TO")}
            UNION SELECT "to" FROM {tables.read("in_page")}
        )
        SELECT node_key(n.title) AS key, n.title, NULL::BIGINT AS page_id, false AS ingested
        FROM named n ANTI JOIN (SELECT title FROM {r["titles"]} WHERE is_article) a USING (title)
        WHERE n.title IS NOT NULL ORDER BY n.title""",
    ]


def _about(tables: GraphTables) -> str:
    r = tables.rel
    pages = tables.read("Page")
    return f"""
        SELECT node_key("from") AS from_key, node_key("to") AS to_key, "from", "to" FROM (
            SELECT p.title AS "from", coalesce(t.entity, p.title) AS "to", 0 AS part, p.file_row_number AS pos
            FROM read_parquet({sql_path(tables.file("Page"))}, file_row_number=true) p
            LEFT JOIN {r["titles"]} t USING (title)
            UNION ALL
            SELECT coalesce(t.resolved, e.enwiki_title), e.id, 1, e.first_pos
            FROM {r["ent"]} e LEFT JOIN {r["titles"]} t ON t.title = e.enwiki_title
            WHERE e.enwiki_title IS NOT NULL
              AND coalesce(t.resolved, e.enwiki_title) IN (SELECT title FROM {pages})
        ) GROUP BY "from", "to" ORDER BY min(part), min(pos)"""


def _missing_entity_ids(tables: GraphTables, entity_records: Path) -> str:
    """Every id an edge ends at that the entities stage has no record of: the anti join drops the ends
    that have one before DISTINCT hashes the rest (at 1M entities, 2.25M distinct ids of 30M ends)."""
    refs = " UNION ALL ".join(
        [
            f'SELECT "from" AS id FROM {tables.read("FACT")}',
            f'SELECT "to" FROM {tables.read("FACT")}',
            f'SELECT "to" FROM {tables.read("mentions")}',
            f'SELECT "to" FROM {tables.read("ABOUT")}',
        ]
    )
    return f"""
        SELECT DISTINCT refs.id FROM ({refs}) refs
        ANTI JOIN (SELECT DISTINCT entity_id AS id FROM read_parquet({sql_path(entity_records)})) known
        USING (id) WHERE refs.id IS NOT NULL"""


def _entities(tables: GraphTables, entity_records: Path, missing: Path) -> list[str]:
    """The entities stage's records (an id's first record), in file order; then, by id, the ``missing``
    ids, named from the name tables or by their id."""
    r = tables.rel
    records = f"read_parquet({sql_path(entity_records)}, file_row_number=true)"
    return [
        f"""
        SELECT node_key(entity_id) AS key, entity_id AS id, label, description, page_title,
               popularity::DOUBLE AS popularity
        FROM {records}
        WHERE file_row_number IN (SELECT min(file_row_number) FROM {records} GROUP BY entity_id)
        ORDER BY file_row_number""",
        f"""
        SELECT node_key(m.id) AS key, m.id, coalesce(e.label, e.enwiki_title, m.id) AS label, e.description,
               coalesce(e.enwiki_title, CASE WHEN t.is_article THEN m.id END) AS page_title,
               0.0::DOUBLE AS popularity
        FROM read_parquet({sql_path(missing)}) m LEFT JOIN {r["ent"]} e ON e.id = m.id
        LEFT JOIN {r["titles"]} t ON t.title = m.id
        ORDER BY m.id""",
    ]


def _from_the_other_end(tables: GraphTables, edges: str, nodes: str, columns: str = "") -> str:
    """``edges`` (evidence → entity or page, in evidence order) turned round, in the order of the
    ``nodes`` file their new start is in: the rows of one COPY slice then start at a few neighbouring
    node groups, the only ones that slice adds to (the table is stored in that direction only,
    ``index.graph.SCHEMA``). Every end has its node (stub pages, named-by-id entities): an inner join."""
    return f"""
        SELECT m.to_key AS from_key, m.from_key AS to_key{columns}
        FROM {tables.read(edges)} m
        JOIN (SELECT key, file_row_number AS node FROM read_parquet({sql_path(tables.file(nodes))},
              file_row_number=true)) n ON n.key = m.to_key
        ORDER BY n.node, m.from_key"""


def _evidence_nodes(tables: GraphTables) -> str:
    return f"""
        SELECT pos AS key, evidence_id AS id, source_type,
               source_type = 'text' AND coalesce(len(provenance.section_path), 0) = 0 AS lead
        FROM {tables.rel["evidence"]} ORDER BY pos"""


def write_graph_tables(
    con: duckdb.DuckDBPyConnection,
    tables: GraphTables,
    entity_records: Path,
    names: NameStore,
    batch_rows: int,
    peaks: dict[str, float] | None = None,
) -> tuple[dict[str, int], int]:
    """Every node and rel table as a Parquet file in COPY column order: (rows per table, links skipped).
    ``peaks`` gets the process's peak RSS after each file ("write NAME")."""
    peaks = {} if peaks is None else peaks

    def written(name: str) -> None:
        peaks[f"write {name}"] = peak_rss_mb()

    run(con, NODE_KEY_SQL)
    bar = progress("graph: prepare tables", total=5, unit="stage")
    write_qualifier_texts(tables, names, tables.file("qualifiers"), batch_rows)
    written("qualifiers")
    write_colon_titles(con, tables, tables.file("colon_titles"), batch_rows)
    written("colon_titles")
    bar.update()
    rows = {name: _copy(con, sql, tables.file(name)) for name, sql in _edge_queries(tables).items()}
    written(" and ".join(rows))
    rows["FACT"] = rows["Statement"] = _split_facts(con, tables)
    written("FACT and Statement")
    del rows["facts"]
    links_total = scalar(con, f"SELECT count(*) FROM {tables.rel['links']}")
    bar.update()
    mentions = _copy(con, _mentions(tables), tables.file("mentions"))
    written("mentions")
    rows["Evidence"] = _copy(con, _evidence_nodes(tables), tables.file("Evidence"))
    written("Evidence")
    bar.update()
    rows["Page"] = _copy_parts(con, _pages(tables), tables.file("Page"))
    written("Page")
    rows["ABOUT"] = _copy(con, _about(tables), tables.file("ABOUT"))
    written("ABOUT")
    bar.update()
    missing = tables.file("entity_ids_missing")
    _copy(con, _missing_entity_ids(tables, entity_records), missing)
    rows["Entity"] = _copy_parts(con, _entities(tables, entity_records, missing), tables.file("Entity"))
    written("Entity")
    turned = {"MENTIONED_IN": ("mentions", "Entity", ", m.role"), "HAS_EVIDENCE": ("in_page", "Page", "")}
    for name, (edges, nodes, columns) in turned.items():
        rows[name] = _copy(con, _from_the_other_end(tables, edges, nodes, columns), tables.file(name))
        written(name)
    if (rows["MENTIONED_IN"], rows["HAS_EVIDENCE"]) != (mentions, rows.pop("in_page")):
        raise RuntimeError(f"an evidence edge lost its end node turning it round: {rows}, {mentions}")
    bar.update()
    bar.close()
    return rows, links_total - rows["LINKS_TO"]


class WriteRequest(BaseModel):
    """What the write phase reads and where it writes, passed to its process as JSON."""

    ingest_dir: Path
    evidence_dir: Path = Field(description="the version (or build) folder whose evidence is read")
    entity_records: Path
    names_dir: Path
    unit_table: Path | None
    work_dir: Path = Field(description="the table files go here, DuckDB spills under it")
    budget: MemoryBudget


class WriteResult(BaseModel):
    rows: dict[str, int] = Field(description="rows of each node and rel table's file")
    links_skipped: int
    peak_rss_mb: dict[str, float] = Field(description="the write process's peak RSS after each file")


def write_here(request: WriteRequest) -> WriteResult:
    """The write phase in this process, on a DuckDB of its own that is closed when done."""
    tables = GraphTables(
        request.ingest_dir, EvidenceReader(request.evidence_dir), request.names_dir, request.work_dir
    )
    peaks: dict[str, float] = {}
    with connect(request.budget, request.work_dir / "spill") as con:
        names = NameStore(request.names_dir, con, request.unit_table)
        rows, skipped = write_graph_tables(
            con,
            tables,
            request.entity_records,
            names,
            request.budget.batch_rows(2_000, ceiling=50_000),
            peaks,
        )
    return WriteResult(rows=rows, links_skipped=skipped, peak_rss_mb=peaks)


def main(argv: list[str]) -> int:
    """``python -m index.graph_tables REQUEST.json RESULT.json``: ``write_here`` on the request, its
    result written as JSON (an exception's traceback goes to stderr and the exit status is 1)."""
    request_path, result_path = (Path(arg) for arg in argv)
    result = write_here(WriteRequest.model_validate_json(request_path.read_text()))
    result_path.write_text(result.model_dump_json())
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
