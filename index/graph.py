"""The knowledge graph: entities, pages and evidence, joined by facts, links, mentions and page-of edges.

BM25 and vectors find evidence that looks like the question; multi-hop questions ("who directed the
film in this table's third row?") also need to follow edges from what was found. The graph holds
those edges, and every edge leads back to evidence ids the retrievers share.

The build is bulk only: each node and edge table is computed with polars (keys deduplicated, every
edge endpoint added as a node, stub pages for link targets that were not ingested), written as one
Parquet file in ``work_dir`` and loaded with Kùzu's ``COPY``; per-row ``CREATE`` would be orders of
magnitude slower at OTT-QA scale (~150k pages, ~2M links, ~400k evidence rows). The database is built
beside ``out_path`` and moved into place when complete, so a reader never opens a half-built graph.
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

import polars as pl
from pydantic import BaseModel, Field

from index.kuzu_store import GraphStore
from index.lexicon import Lexicon, read_table
from index.verbalize.values import format_qualifiers
from ingest.progress import progress
from ingest.wikitext.titles import classify_target
from schemas.arrow import arrow_schema
from schemas.evidence import Evidence
from schemas.wikidata import Statement
from schemas.wikipedia import Link

NODE_TABLES = ("Entity", "Page", "Evidence")
REL_TABLES = ("FACT", "LINKS_TO", "ABOUT", "MENTIONS", "IN_PAGE")
SCHEMA = (
    "CREATE NODE TABLE Entity(id STRING PRIMARY KEY, label STRING, description STRING, "
    "page_title STRING, popularity DOUBLE)",
    "CREATE NODE TABLE Page(title STRING PRIMARY KEY, page_id INT64, ingested BOOLEAN)",
    "CREATE NODE TABLE Evidence(id STRING PRIMARY KEY, source_type STRING, title STRING, text STRING, "
    "lead BOOLEAN)",
    "CREATE REL TABLE FACT(FROM Entity TO Entity, property STRING, label STRING, statement_id STRING, "
    "rank STRING, qualifiers STRING, evidence_id STRING)",
    "CREATE REL TABLE LINKS_TO(FROM Page TO Page, source_kind STRING, relation STRING, anchor STRING, "
    "source_index INT32, row_index INT32)",
    "CREATE REL TABLE ABOUT(FROM Page TO Entity)",
    "CREATE REL TABLE MENTIONS(FROM Evidence TO Entity, role STRING)",
    "CREATE REL TABLE IN_PAGE(FROM Evidence TO Page)",
)


class GraphStats(BaseModel):
    nodes: dict[str, int] = Field(description="rows per node table, counted in the built graph")
    edges: dict[str, int] = Field(description="rows per rel table, counted in the built graph")
    links_skipped: int = Field(description="links to categories, files and other non-article namespaces")
    seconds: float
    copy_seconds: float = Field(description="time of the COPY of all rel tables")
    edges_per_second: float = Field(description="rel rows loaded per second by COPY")


def _mapped(values: pl.Series, fn: Callable[[str], str | None]) -> pl.Series:
    """Apply a Python lookup once per distinct value (titles repeat a lot), then map back vectorized."""
    distinct = values.drop_nulls().unique()
    return values.replace_strict(
        distinct, [fn(v) for v in distinct], default=None, return_dtype=pl.String
    ).alias(values.name)


def _is_article(title: str) -> bool:
    """Only main-namespace titles become pages; 'Category:X' or 'Template:Y' link targets do not."""
    return ":" not in title or classify_target(title).kind == "article"


def _read_evidence(files: list[Path]) -> pl.DataFrame:
    columns = ["evidence_id", "source_type", "title", "text", "page_title", "entity_ids", "provenance"]
    frames = [pl.read_parquet(f, columns=columns) for f in files]
    if not frames:
        frames = [pl.from_arrow(arrow_schema(Evidence).empty_table()).select(columns)]
    evidence = pl.concat(frames, how="vertical_relaxed")
    # a lead-section window says what its page is about: what a hop to that page reads first
    lead = (pl.col("source_type") == "text") & (
        pl.col("provenance").struct.field("section_path").list.len().fill_null(0) == 0
    )
    return (
        evidence.with_columns(statement_id=pl.col("provenance").struct.field("statement_id"), lead=lead)
        .drop("provenance")
        .unique("evidence_id", keep="first", maintain_order=True)
    )


def _ingest_table(ingest_dir: Path, table: str, model: type[BaseModel], columns: list[str]) -> pl.DataFrame:
    """An ingest table's columns, or an empty frame of the right types when no reader wrote it."""
    frame = read_table(ingest_dir, table, columns)
    return pl.from_arrow(arrow_schema(model).empty_table()).select(columns) if frame is None else frame


def _read_statements(ingest_dir: Path) -> pl.DataFrame:
    """Item-valued statements: the only ones that become FACT edges or name an object entity."""
    columns = ["subject", "property", "value_kind", "value_item", "rank", "statement_id", "qualifiers"]
    statements = _ingest_table(ingest_dir, "statements", Statement, columns)
    return statements.filter((pl.col("value_kind") == "item") & pl.col("value_item").is_not_null())


def _fact_edges(statements: pl.DataFrame, evidence: pl.DataFrame, lexicon: Lexicon) -> pl.DataFrame:
    facts = statements.filter(pl.col("rank") != "deprecated")
    qualifiers = [format_qualifiers(q, lexicon) if q else "" for q in facts["qualifiers"].to_list()]
    facts = facts.with_columns(
        label=_mapped(facts["property"], lexicon.property_name),
        qualifiers=pl.Series(qualifiers, dtype=pl.String),
    )
    kg = (
        evidence.filter((pl.col("source_type") == "kg") & pl.col("statement_id").is_not_null())
        .select("statement_id", "evidence_id")
        .unique("statement_id", keep="first", maintain_order=True)
    )
    return facts.join(kg, on="statement_id", how="left", maintain_order="left").select(
        pl.col("subject").alias("from"),
        pl.col("value_item").alias("to"),
        "property",
        "label",
        "statement_id",
        "rank",
        "qualifiers",
        pl.col("evidence_id").fill_null(""),
    )


def _link_edges(ingest_dir: Path, lexicon: Lexicon) -> tuple[pl.DataFrame, int]:
    """Links with targets resolved through redirects; (edges, links skipped as non-article targets)."""
    columns = ["source_title", "source_kind", "source_index", "row_index", "relation", "target_title"]
    links = _ingest_table(ingest_dir, "links", Link, [*columns, "anchor_text"])

    def resolve(title: str) -> str | None:
        resolved = lexicon.resolve_title(title)
        return resolved if _is_article(title) and _is_article(resolved) else None

    links = links.with_columns(to=_mapped(links["target_title"], resolve))
    skipped = links["to"].null_count()
    edges = links.filter(pl.col("to").is_not_null()).select(
        pl.col("source_title").alias("from"),
        "to",
        "source_kind",
        "relation",
        pl.col("anchor_text").alias("anchor"),
        pl.col("source_index").cast(pl.Int32),
        pl.col("row_index").cast(pl.Int32),
    )
    return edges, skipped


def _page_nodes(lexicon: Lexicon, titles: list[pl.Series]) -> pl.DataFrame:
    """Ingested articles, then a stub (no page id, not ingested) for every other title an edge names."""
    articles = pl.DataFrame(
        {
            "title": list(lexicon.articles),
            "page_id": [page_id for page_id, _, _ in lexicon.articles.values()],
            "ingested": [True] * len(lexicon.articles),
        },
        schema={"title": pl.String, "page_id": pl.Int64, "ingested": pl.Boolean},
    )
    stubs = (
        pl.concat([t.cast(pl.String).alias("title") for t in titles])
        .drop_nulls()
        .unique()
        .to_frame()
        .with_columns(page_id=pl.lit(None, pl.Int64), ingested=pl.lit(False))
    )
    return pl.concat([articles, stubs]).unique("title", keep="first", maintain_order=True)


def _about_edges(lexicon: Lexicon, pages: pl.DataFrame) -> pl.DataFrame:
    """Every page -> the entity it is about (stub pages too: a linked-to page names its entity), plus
    sitelinked Wikidata entities whose page is a node."""
    titles = pages["title"]
    own = pl.DataFrame({"from": titles, "to": _mapped(titles, lexicon.entity_for_title)})
    sitelinked = pl.DataFrame(
        {
            "from": [lexicon.resolve_title(t) for t in lexicon.entity_titles.values()],
            "to": list(lexicon.entity_titles),
        },
        schema={"from": pl.String, "to": pl.String},
    ).join(pages.select(pl.col("title").alias("from")), on="from", how="semi")
    return pl.concat([own, sitelinked]).unique(keep="first", maintain_order=True)


def _evidence_edges(
    evidence: pl.DataFrame, statements: pl.DataFrame, lexicon: Lexicon
) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(MENTIONS, IN_PAGE) edges. A KG row lists subject, object, qualifier items in that order; a
    page row lists the page's own entity first, then its link targets."""
    objects = statements.select("statement_id", pl.col("value_item").alias("object")).unique(
        "statement_id", keep="first"
    )
    rows = evidence.select(
        "evidence_id",
        "source_type",
        "statement_id",
        "entity_ids",
        page_entity=_mapped(evidence["page_title"], lexicon.entity_for_title),
    ).join(objects, on="statement_id", how="left")
    exploded = (
        rows.with_columns(position=pl.int_ranges(pl.col("entity_ids").list.len()))
        .explode(["entity_ids", "position"])
        .filter(pl.col("entity_ids").is_not_null())
    )
    kg = pl.col("source_type") == "kg"
    role = (
        pl.when(kg & (pl.col("position") == 0))
        .then(pl.lit("subject"))
        .when(kg & (pl.col("entity_ids") == pl.col("object")))
        .then(pl.lit("object"))
        .when(kg)
        .then(pl.lit("qualifier"))
        .when(pl.col("entity_ids") == pl.col("page_entity"))
        .then(pl.lit("page"))
        .otherwise(pl.lit("link"))
    )
    mentions = exploded.select(
        pl.col("evidence_id").alias("from"), pl.col("entity_ids").alias("to"), role.alias("role")
    ).unique(["from", "to"], keep="first", maintain_order=True)
    in_page = evidence.select(
        pl.col("evidence_id").alias("from"),
        _mapped(evidence["page_title"], lexicon.resolve_title).alias("to"),
    ).filter(pl.col("to").is_not_null())
    return mentions, in_page


def _entity_nodes(entities_path: Path, referenced: list[pl.Series], lexicon: Lexicon) -> pl.DataFrame:
    """All entity records, plus every id an edge names that has none (named through the lexicon)."""
    columns = ["entity_id", "label", "description", "page_title", "popularity"]
    known = (
        pl.read_parquet(entities_path, columns=columns)
        .rename({"entity_id": "id"})
        .with_columns(pl.col("popularity").cast(pl.Float64))
        .unique("id", keep="first", maintain_order=True)
    )
    ids = pl.concat([s.cast(pl.String) for s in referenced]).drop_nulls().unique().sort()
    missing = ids.filter(~ids.is_in(known["id"].implode())).to_list()
    extra = pl.DataFrame(
        {
            "id": missing,
            "label": [lexicon.name(i) for i in missing],
            "description": [lexicon.descriptions.get(i) for i in missing],
            "page_title": [lexicon.page_title_for(i) for i in missing],
            "popularity": [0.0] * len(missing),
        },
        schema=known.schema,
    )
    return pl.concat([known, extra])


def _graph_frames(
    ingest_dir: Path, evidence_files: list[Path], entities_path: Path, lexicon: Lexicon
) -> tuple[dict[str, pl.DataFrame], int]:
    """Every node and rel table as a frame in COPY column order; and the count of skipped links."""
    bar = progress("graph: prepare tables", total=6, unit="stage")
    evidence = _read_evidence(evidence_files)
    statements = _read_statements(ingest_dir)
    bar.update()
    facts = _fact_edges(statements, evidence, lexicon)
    bar.update()
    links, skipped = _link_edges(ingest_dir, lexicon)
    bar.update()
    mentions, in_page = _evidence_edges(evidence, statements, lexicon)
    bar.update()
    pages = _page_nodes(lexicon, [links["from"], links["to"], in_page["to"]])
    about = _about_edges(lexicon, pages)
    bar.update()
    entities = _entity_nodes(
        entities_path, [facts["from"], facts["to"], mentions["to"], about["to"]], lexicon
    )
    bar.update()
    bar.close()
    frames = {
        "Entity": entities,
        "Page": pages,
        "Evidence": evidence.select(
            pl.col("evidence_id").alias("id"), "source_type", "title", "text", "lead"
        ),
        "FACT": facts,
        "LINKS_TO": links,
        "ABOUT": about,
        "MENTIONS": mentions,
        "IN_PAGE": in_page,
    }
    return frames, skipped


def build_graph(
    ingest_dir: Path,
    evidence_files: list[Path],
    entities_path: Path,
    lexicon: Lexicon,
    out_path: Path,
    work_dir: Path,
) -> GraphStats:
    """Build the Kùzu graph at ``out_path`` (replacing an older one) from Parquet files in ``work_dir``."""
    started = time.perf_counter()
    out_path, work_dir = Path(out_path), Path(work_dir)
    work_dir.mkdir(parents=True, exist_ok=True)
    frames, skipped = _graph_frames(Path(ingest_dir), evidence_files, entities_path, lexicon)
    files = {}
    for name, frame in frames.items():
        files[name] = work_dir / f"{name}.parquet"
        frame.write_parquet(files[name])

    building = out_path.with_name(f".{out_path.name}.building")
    for leftover in (building, building.with_name(building.name + ".wal")):
        leftover.unlink(missing_ok=True)
    bar = progress("graph: COPY", total=sum(f.height for f in frames.values()), unit="row", unit_scale=True)
    with GraphStore.create(building) as store:
        store.ddl(SCHEMA)
        for name in NODE_TABLES:
            if frames[name].height:
                store.copy_from(name, files[name])
            bar.update(frames[name].height)
        copy_started = time.perf_counter()
        for name in REL_TABLES:
            if frames[name].height:
                store.copy_from(name, files[name])
            bar.update(frames[name].height)
        copy_seconds = time.perf_counter() - copy_started
        nodes = {name: store.count(name) for name in NODE_TABLES}
        edges = {name: store.count(name) for name in REL_TABLES}
    bar.close()
    os.replace(building, out_path)
    return GraphStats(
        nodes=nodes,
        edges=edges,
        links_skipped=skipped,
        seconds=round(time.perf_counter() - started, 3),
        copy_seconds=round(copy_seconds, 3),
        edges_per_second=round(sum(edges.values()) / copy_seconds, 1) if copy_seconds else 0.0,
    )


class Fact(BaseModel):
    """One item-valued statement, seen from the entity asked about ('out': it is the subject)."""

    direction: Literal["out", "in"]
    subject: str
    subject_label: str | None
    property: str
    label: str
    object: str
    object_label: str | None
    statement_id: str
    rank: str
    qualifiers: str
    evidence_id: str = Field(description="KG evidence of the statement, '' when none was verbalized")


class PageLink(BaseModel):
    title: str
    source_kind: str
    relation: str | None
    anchor: str
    source_index: int
    row_index: int | None


_FACT_RETURN = (
    "RETURN s.id AS subject, s.label AS subject_label, f.property AS property, f.label AS label, "
    "o.id AS object, o.label AS object_label, f.statement_id AS statement_id, f.rank AS rank, "
    "f.qualifiers AS qualifiers, f.evidence_id AS evidence_id ORDER BY f.property, o.id, s.id LIMIT $limit"
)


CLASSES_CYPHER = (
    "MATCH (e:Entity)-[f:FACT]->(k:Entity) WHERE f.property = 'P31' "
    "RETURN k.id AS id, k.label AS label, count(DISTINCT e.id) AS members ORDER BY members DESC, id"
)
MEMBERS_CYPHER = (
    "MATCH (e:Entity) WHERE "
    "($any_country OR EXISTS { MATCH (e)-[f:FACT]->(c:Entity) "
    "WHERE f.property = 'P17' AND c.id = $country }) "
    "AND ($any_class OR EXISTS { MATCH (e)-[g:FACT]->(k:Entity) "
    "WHERE g.property = 'P31' AND k.id IN $classes }) "
    "RETURN e.id AS id, e.label AS label ORDER BY e.id LIMIT $limit"
)
"""The entity-set query: fixed text, every value a parameter, so it can be shown and re-run as it is."""
FACT_RELATIONS_CYPHER = (
    "MATCH ()-[f:FACT]->() RETURN f.property AS name, f.label AS label, count(*) AS n ORDER BY n DESC, name"
)
LINK_RELATIONS_CYPHER = (
    "MATCH ()-[l:LINKS_TO]->() WHERE l.relation IS NOT NULL "
    "RETURN l.source_kind AS kind, l.relation AS name, count(*) AS n ORDER BY n DESC, name"
)
EGO_FACTS_CYPHER = (
    "MATCH (x:Entity)-[f:FACT]->(y:Entity) "
    "WHERE x.id IN $ids AND ($any_relation OR f.property IN $relations) AND y.id <> x.id "
    "RETURN x.id AS source, f.property AS relation, f.label AS label, y.id AS target, "
    "y.label AS target_label, f.evidence_id AS evidence_id ORDER BY x.id, f.property, y.id LIMIT $limit"
)
EGO_LINKS_CYPHER = (
    "MATCH (x:Entity)<-[:ABOUT]-(p:Page)-[l:LINKS_TO]->(q:Page)-[:ABOUT]->(y:Entity) "
    "WHERE x.id IN $ids AND l.relation IS NOT NULL AND ($any_relation OR l.relation IN $relations) "
    "AND y.id <> x.id "
    "RETURN x.id AS source, l.relation AS relation, l.relation AS label, y.id AS target, "
    "y.label AS target_label, l.source_kind AS kind, l.source_index AS source_index, "
    "l.row_index AS row_index "
    "ORDER BY x.id, l.source_index, l.row_index, y.id LIMIT $limit"
)
"""The graph-critic mode's walk, one hop from the topic entities along the chosen relations: statements by
property (FACT) and page links by column header or infobox key (LINKS_TO). Fixed text; the entities and
relations are parameters, never spliced in."""
PAGE_EVIDENCE_CYPHER = (
    "MATCH (e:Evidence)-[:IN_PAGE]->(p:Page)-[:ABOUT]->(x:Entity) WHERE x.id IN $ids "
    "RETURN x.id AS entity_id, e.id AS id ORDER BY x.id, e.id LIMIT $limit"
)


class RelationCount(BaseModel):
    """One relation type the index holds: a Wikidata property (kind 'property') or a link's column header
    or infobox key (kind 'table', 'infobox', …), with how many edges carry it."""

    kind: str
    name: str
    label: str
    count: int


class EgoEdge(BaseModel):
    """One step of a walk: source -relation-> target, with where the index says it (a statement's evidence
    row, or the table row / infobox the link sits in)."""

    source: str
    relation: str
    label: str
    target: str
    target_label: str | None
    kind: str = "property"
    evidence_id: str | None = None
    source_index: int | None = None
    row_index: int | None = None


class GraphIndex:
    """Read-only queries over a built graph; safe to share between threads (see ``GraphStore``)."""

    def __init__(self, store: GraphStore):
        self.store = store

    @classmethod
    def open(cls, path: Path) -> GraphIndex:
        return cls(GraphStore.open(path, read_only=True))

    def query(self, cypher: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        return self.store.execute(cypher, params)

    def counts(self) -> dict[str, int]:
        return {name: self.store.count(name) for name in (*NODE_TABLES, *REL_TABLES)}

    def facts(self, entity_id: str, limit: int = 50) -> list[Fact]:
        """One-hop item facts: those the entity is subject of first, then those pointing at it."""
        out = self.query(
            f"MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE s.id = $id {_FACT_RETURN}",
            {"id": entity_id, "limit": limit},
        )
        facts = [Fact(direction="out", **row) for row in out]
        if len(facts) < limit:
            into = self.query(
                f"MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE o.id = $id {_FACT_RETURN}",
                {"id": entity_id, "limit": limit - len(facts)},
            )
            facts += [Fact(direction="in", **row) for row in into]
        return facts

    def evidence_for_entity(self, entity_id: str, limit: int = 50) -> list[str]:
        """Evidence ids mentioning the entity (literal statements too): its own statements and page first."""
        rows = self.query(
            "MATCH (e:Evidence)-[m:MENTIONS]->(x:Entity) WHERE x.id = $id RETURN e.id AS id "
            "ORDER BY CASE m.role WHEN 'subject' THEN 0 WHEN 'page' THEN 1 WHEN 'object' THEN 2 ELSE 3 END, "
            "e.id LIMIT $limit",
            {"id": entity_id, "limit": limit},
        )
        return [row["id"] for row in rows]

    def lead_evidence(self, entity_ids: list[str]) -> list[tuple[str, str]]:
        """(entity id, evidence id) of the lead-section windows of the entities' own pages, in one query.

        A hop from evidence to the pages it links lands here: a page's lead says what its subject is.
        """
        if not entity_ids:
            return []
        rows = self.query(
            "MATCH (e:Evidence)-[m:MENTIONS]->(x:Entity) WHERE x.id IN $ids AND m.role = 'page' AND e.lead "
            "RETURN x.id AS entity_id, e.id AS id",
            {"ids": list(entity_ids)},
        )
        return [(row["entity_id"], row["id"]) for row in rows]

    def page_entities(self, titles: list[str]) -> dict[str, str]:
        """Page title → the id of the entity the page is about, for the titles the graph has a page of."""
        if not titles:
            return {}
        rows = self.query(
            "MATCH (x:Entity) WHERE x.page_title IN $titles RETURN x.page_title AS title, x.id AS id",
            {"titles": list(titles)},
        )
        return {row["title"]: row["id"] for row in rows}

    def linked_pages(
        self, title: str, source_kind: str | None = None, relation: str | None = None, limit: int = 200
    ) -> list[PageLink]:
        """Pages the page links to, optionally only from tables/infoboxes/passages or one column or key."""
        rows = self.query(
            "MATCH (p:Page)-[l:LINKS_TO]->(q:Page) WHERE p.title = $title "
            "AND ($kind IS NULL OR l.source_kind = $kind) AND ($relation IS NULL OR l.relation = $relation) "
            "RETURN q.title AS title, l.source_kind AS source_kind, l.relation AS relation, "
            "l.anchor AS anchor, l.source_index AS source_index, l.row_index AS row_index "
            "ORDER BY l.source_kind, l.source_index, l.row_index, q.title LIMIT $limit",
            {"title": title, "kind": source_kind, "relation": relation, "limit": limit},
        )
        return [PageLink(**row) for row in rows]

    def pages_via_table_cells(self, title: str, limit: int = 200) -> list[str]:
        """Pages reached from the page's table cells: through its table-row evidence to the entities the
        rows mention and on to their pages, or straight along its table links."""
        via_evidence = self.query(
            "MATCH (p:Page)<-[:IN_PAGE]-(e:Evidence)-[m:MENTIONS]->(:Entity)<-[:ABOUT]-(q:Page) "
            "WHERE p.title = $title AND e.source_type = $kind AND m.role = $role "
            "RETURN DISTINCT q.title AS title",
            {"title": title, "kind": "table", "role": "link"},
        )
        via_links = self.query(
            "MATCH (p:Page)-[l:LINKS_TO]->(q:Page) WHERE p.title = $title AND l.source_kind = $kind "
            "RETURN DISTINCT q.title AS title",
            {"title": title, "kind": "table"},
        )
        return sorted({row["title"] for row in via_evidence + via_links})[:limit]

    def classes(self) -> list[tuple[str, str | None, int]]:
        """(class id, label, members) of every class an entity is an instance of (P31), largest first."""
        rows = self.query(CLASSES_CYPHER)
        return [(row["id"], row["label"], row["members"]) for row in rows]

    def members(
        self, country: str | None, classes: list[str], limit: int
    ) -> tuple[list[tuple[str, str | None]], dict[str, Any]]:
        """Entities in ``country`` (P17) and/or instances of one of ``classes`` (P31), with the parameters
        the fixed query ``MEMBERS_CYPHER`` ran with: (id, label) pairs, at most ``limit``."""
        if country is None and not classes:
            raise ValueError("an entity set needs a country or a class")
        params = {
            "country": country or "",
            "any_country": country is None,
            "classes": list(classes) or [""],
            "any_class": not classes,
            "limit": limit,
        }
        rows = self.query(MEMBERS_CYPHER, params)
        return [(row["id"], row["label"]) for row in rows], params

    def relations(self) -> list[RelationCount]:
        """Every relation type with its edge count, most used first: what a router may choose among."""
        facts = [
            RelationCount(kind="property", name=r["name"], label=r["label"] or r["name"], count=r["n"])
            for r in self.query(FACT_RELATIONS_CYPHER)
        ]
        links = [
            RelationCount(kind=r["kind"], name=r["name"], label=r["name"], count=r["n"])
            for r in self.query(LINK_RELATIONS_CYPHER)
        ]
        return facts + links

    def ego(
        self, entity_ids: list[str], relations: list[str] | None, limit: int
    ) -> tuple[list[EgoEdge], bool]:
        """One hop from ``entity_ids`` along ``relations`` (property ids, column headers, infobox keys; None
        = any): (edges, capped). At most ``limit`` edges of each kind are read per entity: a hub page
        links thousands of pages, and the walk must stay bounded and say when it was cut."""
        if not entity_ids:
            return [], False
        edges: list[EgoEdge] = []
        capped = False
        for entity_id in dict.fromkeys(entity_ids):  # the cap is per entity: one hub must not starve another
            params = {
                "ids": [entity_id],
                "any_relation": relations is None,
                "relations": list(relations or [""]),
                "limit": limit + 1,
            }
            facts = self.query(EGO_FACTS_CYPHER, params)
            links = self.query(EGO_LINKS_CYPHER, params)
            capped = capped or len(facts) > limit or len(links) > limit
            edges += [EgoEdge(kind="property", **r) for r in facts[:limit]]
            edges += [EgoEdge(**r) for r in links[:limit]]
        return edges, capped

    def page_evidence(self, entity_ids: list[str], limit: int) -> list[tuple[str, str]]:
        """(entity id, evidence id) of the rows on the entities' own pages: passages, table rows, infobox
        fields — a topic entity's documents."""
        if not entity_ids:
            return []
        rows = self.query(PAGE_EVIDENCE_CYPHER, {"ids": list(entity_ids), "limit": limit})
        return [(row["entity_id"], row["id"]) for row in rows]

    def close(self) -> None:
        self.store.close()

    def __enter__(self) -> GraphIndex:
        return self

    def __exit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        self.close()
