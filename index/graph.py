"""The knowledge graph: entities, pages and evidence, joined by facts, links, mentions and page-of edges.

BM25 and vectors find evidence that looks like the question; multi-hop questions ("who directed the
film in this table's third row?") also need to follow edges from what was found. The graph holds
those edges, and every edge leads back to evidence ids the retrievers share.

This module holds the graph's schema and its read side; ``index.graph_build`` builds it in bulk (DuckDB
tables as Parquet files, loaded with Kùzu's ``COPY``).
"""

from __future__ import annotations

import hashlib
from pathlib import Path
from types import TracebackType
from typing import Any, Literal

from pydantic import BaseModel, Field

from index.kuzu_store import GraphStore

NODE_TABLES = ("Entity", "Page", "Evidence", "Statement")
REL_TABLES = ("FACT", "LINKS_TO", "ABOUT", "MENTIONED_IN", "HAS_EVIDENCE")
# Every node table's primary key is an INT64 ``key``; the Wikidata id, page title or evidence id is a
# property beside it. Kùzu builds a hash index over a table's primary key during its COPY and looks both
# ends of every rel row up in it: with STRING keys the Entity COPY at 1M entities added 565 MB of RSS
# and MENTIONS' 1,051 MB, growing with the nodes; 2.86M keys in one node COPY took +671 MB / 22.6 s as
# STRING and +210 MB / 2.8 s as INT64 (benchmarks/results/scale/graph_memory.md).
SCHEMA = (
    "CREATE NODE TABLE Entity(key INT64 PRIMARY KEY, id STRING, label STRING, description STRING, "
    "page_title STRING, popularity DOUBLE)",
    "CREATE NODE TABLE Page(key INT64 PRIMARY KEY, title STRING, page_id INT64, ingested BOOLEAN)",
    # no title or text: no graph query reads them (the evidence Parquet and BM25 hold them), and at full
    # size they would be ~a third of the graph's bytes (benchmarks/results/scale/kuzu_pool.md); the key
    # is the row's position in the deduplicated evidence (``pos``), unique by construction
    "CREATE NODE TABLE Evidence(key INT64 PRIMARY KEY, id STRING, source_type STRING, lead BOOLEAN)",
    # what a FACT edge says beyond its ends and property, one node per edge (``FACT.statement`` is its
    # key): Kùzu rewrites a rel node group's adjacency lists whole, every column of every edge, and the
    # objects of a property (a class, a country) gather into few node groups, so a wide FACT needed a
    # buffer pool that grew with all the statements; a node table is written a node group at a time
    "CREATE NODE TABLE Statement(key INT64 PRIMARY KEY, property STRING, label STRING, "
    "statement_id STRING, rank STRING, qualifiers STRING, evidence_id STRING)",
    "CREATE REL TABLE FACT(FROM Entity TO Entity, property STRING, statement INT64)",
    "CREATE REL TABLE LINKS_TO(FROM Page TO Page, source_kind STRING, relation STRING, anchor STRING, "
    "source_index INT32, row_index INT32)",
    "CREATE REL TABLE ABOUT(FROM Page TO Entity)",
    # The two largest rel tables are stored in one direction only, the one every query of the engine
    # walks (from an entity or a page to its evidence), and COPYed in the order of that end's nodes. A
    # rel table stored in both directions is rewritten, at every COPY slice, in the node groups of the end
    # its rows are not sorted by - all of them, each slice - so the COPY's memory outside the buffer pool
    # grew with the table: at 1M entities MENTIONS (evidence → entity, both directions) rose ~1.4 GB over
    # the RSS before it (benchmarks/results/scale/graph_memory.md). A query that walks them the other way
    # (evidence → entity) still runs, as a scan of the table: no engine query does.
    "CREATE REL TABLE MENTIONED_IN(FROM Entity TO Evidence, role STRING) WITH (storage_direction = 'fwd')",
    "CREATE REL TABLE HAS_EVIDENCE(FROM Page TO Evidence) WITH (storage_direction = 'fwd')",
)
COPY_COLUMNS: dict[str, tuple[str, ...]] = {
    "Entity": ("key", "id", "label", "description", "page_title", "popularity"),
    "Page": ("key", "title", "page_id", "ingested"),
    "Evidence": ("key", "id", "source_type", "lead"),
    "Statement": ("key", "property", "label", "statement_id", "rank", "qualifiers", "evidence_id"),
    "FACT": ("from_key", "to_key", "property", "statement"),
    "LINKS_TO": ("from_key", "to_key", "source_kind", "relation", "anchor", "source_index", "row_index"),
    "ABOUT": ("from_key", "to_key"),
    "MENTIONED_IN": ("from_key", "to_key", "role"),
    "HAS_EVIDENCE": ("from_key", "to_key"),
}
"""The columns of each table's Parquet file that its COPY loads, in the schema's order. A rel file also
holds its ends as ids or titles (``from``, ``to``): later tables of the build are made from them."""

NODE_KEY_SQL = "CREATE OR REPLACE TEMP MACRO node_key(x) AS (md5_number_lower(x) >> 1)::BIGINT"
"""DuckDB's ``node_key``: the same number ``node_key`` computes in Python (a test holds them equal)."""


def node_key(text: str) -> int:
    """The INT64 primary key of the Entity with this id or the Page with this title: 63 bits of its
    MD5, so the build (DuckDB's ``md5_number_lower``, ``NODE_KEY_SQL``) and a reader (here) compute it
    apart. Two of 100M keys share one with probability ~5e-4; the COPY then fails on the duplicate key
    (``index.kuzu_store.GraphStore.copy_from`` names it) rather than merge two nodes."""
    return int.from_bytes(hashlib.md5(text.encode("utf-8")).digest()[8:], "little") >> 1


class GraphStats(BaseModel):
    nodes: dict[str, int] = Field(description="rows per node table, counted in the built graph")
    edges: dict[str, int] = Field(description="rows per rel table, counted in the built graph")
    links_skipped: int = Field(description="links to categories, files and other non-article namespaces")
    seconds: float
    copy_seconds: float = Field(description="time of the COPY of all rel tables")
    edges_per_second: float = Field(description="rel rows loaded per second by COPY")
    peak_rss_mb: dict[str, float] = Field(
        default_factory=dict,
        description="peak RSS after each phase, in order: each Parquet file written ('write NAME', the "
        "write process's own), then each table's COPY ('copy NAME', the stage's process); the phase whose "
        "figure jumps is where a large graph's memory goes",
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
    "RETURN s.id AS subject, s.label AS subject_label, f.property AS property, o.id AS object, "
    "o.label AS object_label, f.statement AS statement ORDER BY f.property, o.id, s.id LIMIT $limit"
)
STATEMENTS_CYPHER = (
    "MATCH (t:Statement) WHERE t.key IN $ids RETURN t.key AS id, t.label AS label, "
    "t.statement_id AS statement_id, t.rank AS rank, t.qualifiers AS qualifiers, t.evidence_id AS evidence_id"
)
"""What the FACT edges found say beyond their ends: their ``Statement`` nodes, by primary key."""


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
MEMBERS_IN_PLACE_CYPHER = (
    "MATCH (e:Entity)-[g:FACT]->(k:Entity) WHERE g.property = 'P31' AND k.id IN $classes "
    "AND EXISTS { MATCH (e)-[f:FACT]->(c:Entity) WHERE f.property = $place_property AND c.id = $place } "
    "RETURN DISTINCT e.id AS id, e.label AS label ORDER BY id LIMIT $limit"
)
"""Instances of the classes (P31) in a place by one place property (P17 country, P30 continent, P131
located in): the question plan's superlative set. Fixed text, every value a parameter. No FACT edge is
a deprecated statement (the build leaves them out), so none is filtered here."""
SUBJECTS_OF_CYPHER = (
    "MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE o.key = $key AND f.property = $property "
    "RETURN DISTINCT s.id AS id, s.label AS label ORDER BY id LIMIT $limit"
)
"""A property followed backwards: the entities whose ``property`` names ``id`` (which state has X as its
capital)."""
FACT_RELATIONS_CYPHER = (
    "MATCH (t:Statement) RETURN t.property AS name, t.label AS label, count(*) AS n ORDER BY n DESC, name"
)
LINK_RELATIONS_CYPHER = (
    "MATCH ()-[l:LINKS_TO]->() WHERE l.relation IS NOT NULL "
    "RETURN l.source_kind AS kind, l.relation AS name, count(*) AS n ORDER BY n DESC, name"
)
EGO_FACTS_CYPHER = (
    "MATCH (x:Entity)-[f:FACT]->(y:Entity) "
    "WHERE x.key = $key AND ($any_relation OR f.property IN $relations) AND y.key <> x.key "
    "RETURN x.id AS source, f.property AS relation, y.id AS target, y.label AS target_label, "
    "f.statement AS statement ORDER BY x.id, f.property, y.id LIMIT $limit"
)
EGO_LINKS_CYPHER = (
    "MATCH (x:Entity)<-[:ABOUT]-(p:Page)-[l:LINKS_TO]->(q:Page)-[:ABOUT]->(y:Entity) "
    "WHERE x.key = $key AND l.relation IS NOT NULL AND ($any_relation OR l.relation IN $relations) "
    "AND y.key <> x.key "
    "RETURN x.id AS source, l.relation AS relation, l.relation AS label, y.id AS target, "
    "y.label AS target_label, l.source_kind AS kind, l.source_index AS source_index, "
    "l.row_index AS row_index "
    "ORDER BY x.id, l.source_index, l.row_index, y.id LIMIT $limit"
)
"""The graph-critic mode's walk, one hop from the topic entities along the chosen relations: statements by
property (FACT) and page links by column header or infobox key (LINKS_TO). Fixed text; the entities and
relations are parameters, never spliced in."""
PAGE_EVIDENCE_CYPHER = (
    "MATCH (x:Entity)<-[:ABOUT]-(p:Page)-[:HAS_EVIDENCE]->(e:Evidence) WHERE x.key IN $keys "
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
            f"MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE s.key = $key {_FACT_RETURN}",
            {"key": node_key(entity_id), "limit": limit},
        )
        into = []
        if len(out) < limit:
            into = self.query(
                f"MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE o.key = $key {_FACT_RETURN}",
                {"key": node_key(entity_id), "limit": limit - len(out)},
            )
        said = self.statements([row["statement"] for row in [*out, *into]])
        facts = []
        for direction, rows in (("out", out), ("in", into)):
            for row in rows:
                statement = said[row.pop("statement")]
                facts.append(Fact(direction=direction, **row, **statement))
        return facts

    def statements(self, ids: list[int]) -> dict[int, dict[str, Any]]:
        """Statement node id -> its label, statement id, rank, qualifiers and KG evidence id."""
        if not ids:
            return {}
        rows = self.query(STATEMENTS_CYPHER, {"ids": list(dict.fromkeys(ids))})
        return {row.pop("id"): row for row in rows}

    def evidence_for_entity(self, entity_id: str, limit: int = 50) -> list[str]:
        """Evidence ids mentioning the entity (literal statements too): its own statements and page first."""
        rows = self.query(
            "MATCH (x:Entity)-[m:MENTIONED_IN]->(e:Evidence) WHERE x.key = $key RETURN e.id AS id "
            "ORDER BY CASE m.role WHEN 'subject' THEN 0 WHEN 'page' THEN 1 WHEN 'object' THEN 2 ELSE 3 END, "
            "e.id LIMIT $limit",
            {"key": node_key(entity_id), "limit": limit},
        )
        return [row["id"] for row in rows]

    def lead_evidence(self, entity_ids: list[str]) -> list[tuple[str, str]]:
        """(entity id, evidence id) of the lead-section windows of the entities' own pages, in one query.

        A hop from evidence to the pages it links lands here: a page's lead says what its subject is.
        """
        if not entity_ids:
            return []
        rows = self.query(
            "MATCH (x:Entity)-[m:MENTIONED_IN]->(e:Evidence) "
            "WHERE x.key IN $keys AND m.role = 'page' AND e.lead RETURN x.id AS entity_id, e.id AS id",
            {"keys": [node_key(i) for i in dict.fromkeys(entity_ids)]},
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
            "MATCH (p:Page)-[l:LINKS_TO]->(q:Page) WHERE p.key = $key "
            "AND ($kind IS NULL OR l.source_kind = $kind) AND ($relation IS NULL OR l.relation = $relation) "
            "RETURN q.title AS title, l.source_kind AS source_kind, l.relation AS relation, "
            "l.anchor AS anchor, l.source_index AS source_index, l.row_index AS row_index "
            "ORDER BY l.source_kind, l.source_index, l.row_index, q.title LIMIT $limit",
            {"key": node_key(title), "kind": source_kind, "relation": relation, "limit": limit},
        )
        return [PageLink(**row) for row in rows]

    def pages_via_table_cells(self, title: str, limit: int = 200) -> list[str]:
        """Pages the page's table cells link to (its LINKS_TO edges from tables), by title.

        Not through its table rows' evidence to the entities they mention: ``MENTIONED_IN`` is stored
        from entity to evidence only (``SCHEMA``), so that walk would scan every mention; a cell's link
        is a LINKS_TO edge of its own."""
        rows = self.query(
            "MATCH (p:Page)-[l:LINKS_TO]->(q:Page) WHERE p.key = $key AND l.source_kind = $kind "
            "RETURN DISTINCT q.title AS title ORDER BY title LIMIT $limit",
            {"key": node_key(title), "kind": "table", "limit": limit},
        )
        return [row["title"] for row in rows]

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

    def members_in_place(
        self, classes: list[str], place: str, place_property: str, limit: int
    ) -> tuple[list[tuple[str, str | None]], dict[str, Any]]:
        """(id, label) of the instances of ``classes`` whose ``place_property`` names ``place``, at most
        ``limit``, with the parameters ``MEMBERS_IN_PLACE_CYPHER`` ran with."""
        if not classes:
            raise ValueError("a set in a place needs at least one class")
        params = {"classes": list(classes), "place": place, "place_property": place_property, "limit": limit}
        rows = self.query(MEMBERS_IN_PLACE_CYPHER, params)
        return [(row["id"], row["label"]) for row in rows], params

    def subjects_of(self, entity_id: str, property: str, limit: int = 50) -> list[tuple[str, str | None]]:
        """(id, label) of the entities whose ``property`` statement (not deprecated) names ``entity_id``."""
        params = {"key": node_key(entity_id), "property": property, "limit": limit}
        rows = self.query(SUBJECTS_OF_CYPHER, params)
        return [(row["id"], row["label"]) for row in rows]

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
                "key": node_key(entity_id),
                "any_relation": relations is None,
                "relations": list(relations or [""]),
                "limit": limit + 1,
            }
            facts = self.query(EGO_FACTS_CYPHER, params)
            links = self.query(EGO_LINKS_CYPHER, params)
            capped = capped or len(facts) > limit or len(links) > limit
            said = self.statements([r["statement"] for r in facts[:limit]])
            for r in facts[:limit]:
                said_here = said[r.pop("statement")]
                label, evidence_id = said_here["label"], said_here["evidence_id"]
                edges.append(EgoEdge(kind="property", label=label, evidence_id=evidence_id, **r))
            edges += [EgoEdge(**r) for r in links[:limit]]
        return edges, capped

    def page_evidence(self, entity_ids: list[str], limit: int) -> list[tuple[str, str]]:
        """(entity id, evidence id) of the rows on the entities' own pages: passages, table rows, infobox
        fields — a topic entity's documents."""
        if not entity_ids:
            return []
        keys = [node_key(entity_id) for entity_id in dict.fromkeys(entity_ids)]
        rows = self.query(PAGE_EVIDENCE_CYPHER, {"keys": keys, "limit": limit})
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
