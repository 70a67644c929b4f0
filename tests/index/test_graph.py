"""Kùzu graph build and reads on the real sample ingest, with evidence rows made here from real records.

The verbalizer is built separately, so the evidence below is a small hand-made set over real
statements and table rows: enough to check that every edge lands where the ids say.
"""

from __future__ import annotations

import itertools
import subprocess
import sys
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from index import layout
from index.duck import MemoryBudget, connect
from index.evidence_reader import EvidenceReader, write_duplicates
from index.graph import (
    COPY_COLUMNS,
    NODE_KEY_SQL,
    NODE_TABLES,
    REL_TABLES,
    SCHEMA,
    GraphIndex,
    GraphStats,
    node_key,
)
from index.graph_build import build_graph, write_apart
from index.graph_tables import WriteRequest, WriteResult
from index.kuzu_store import NODE_GROUP_ROWS, GraphMemoryError, GraphStore
from index.lexicon import Lexicon
from index.names import ENTITIES, NameStore, build_names
from ingest.parquet_sink import rows_to_table
from ingest.pipeline import IngestReport
from schemas.evidence import EntityRecord, Evidence, Provenance

TRICKY = "O'Brien \"quoted\" \\ back\\slash' OR 1=1 //"


@dataclass
class Built:
    stats: GraphStats
    path: Path
    work_dir: Path
    statements: list[str]  # every Cypher statement the build sent
    qualified: dict  # an item-valued statement with a time qualifier
    plain: dict  # an item-valued statement with KG evidence
    literal: dict  # a time-valued statement: reachable only through MENTIONED_IN
    table_page: str
    table_target: str
    table_row: int


def read_table(ingest_dir: Path, table: str) -> pl.DataFrame:
    return pl.concat(
        [pl.read_parquet(f) for f in sorted((ingest_dir / table).glob("*.parquet"))], how="vertical_relaxed"
    )


def _entity_records(names: NameStore) -> list[dict]:
    """Every named entity as a record (the graph's input: the entities stage makes these in a build)."""
    rows = pl.read_parquet(names.dir / ENTITIES).to_dicts()
    return [
        EntityRecord(
            entity_id=r["id"],
            label=r["label"] or r["enwiki_title"] or r["id"],
            description=r["description"],
            page_title=r["page_title"],
            sitelinks=r["sitelinks"] or 0,
            inlinks=0,
            popularity=0.0,
        ).model_dump()
        for r in rows
    ]


def _version_with(evidence: list[dict], folder: Path) -> EvidenceReader:
    """A build folder holding just this evidence (and its duplicates list), as the graph stage reads it."""
    (folder / layout.EVIDENCE).mkdir(parents=True)
    pq.write_table(rows_to_table(evidence, Evidence), folder / layout.EVIDENCE / "evidence.parquet")
    with connect(MemoryBudget(memory_mb=256), folder / "spill") as con:
        write_duplicates(folder / layout.EVIDENCE, folder / layout.EVIDENCE_DUPLICATES, con)
    return EvidenceReader(folder)


def _kg_evidence(statement: dict, lexicon: Lexicon) -> dict:
    items = [statement["value_item"]] if statement["value_kind"] == "item" else []
    items += [q["value_item"] for q in statement["qualifiers"] if q["value_item"]]
    return Evidence(
        evidence_id=f"kg-{statement['statement_id']}",
        source_type="kg",
        text=f"{lexicon.name(statement['subject'])} {lexicon.property_name(statement['property'])} …",
        title=lexicon.name(statement["subject"]),
        page_title=lexicon.page_title_for(statement["subject"]),
        entity_ids=[statement["subject"], *items],
        link_targets=[],
        provenance=Provenance(source="sample", statement_id=statement["statement_id"]),
    ).model_dump()


def _table_evidence(row: dict, lexicon: Lexicon) -> dict:
    targets = [lexicon.resolve_title(link["target"]) for cell in row["cells"] for link in cell["links"]]
    entities = dict.fromkeys([lexicon.entity_for_title(row["page_title"])])
    entities.update(dict.fromkeys(lexicon.entity_for_title(t) for t in targets))
    return Evidence(
        evidence_id=f"table-{row['table_id']}-{row['row_index']}",
        source_type="table",
        text=" | ".join(f"{c['header']}: {c['text']}" for c in row["cells"]),
        title=row["page_title"],
        page_title=row["page_title"],
        entity_ids=list(entities),
        link_targets=list(dict.fromkeys(targets)),
        provenance=Provenance(source="sample", table_id=row["table_id"], row_index=row["row_index"]),
    ).model_dump()


@pytest.fixture(scope="module")
def lexicon(sample_ingest: IngestReport, sample_names: NameStore) -> Lexicon:
    """The names of every id and title of the sample ingest (small enough to hold here)."""
    ingest = sample_ingest.out_dir
    statements = read_table(ingest, "statements")
    ids = (
        set(statements["subject"]) | set(statements["property"]) | set(statements["value_item"].drop_nulls())
    )
    ids |= set(read_table(ingest, "entities")["id"])
    titles = set(read_table(ingest, "pages")["title"]) | set(read_table(ingest, "links")["target_title"])
    return sample_names.lexicon(ids=ids, titles=titles | ids)


@pytest.fixture(scope="module")
def built(
    sample_ingest: IngestReport,
    sample_names: NameStore,
    lexicon: Lexicon,
    tmp_path_factory: pytest.TempPathFactory,
) -> Built:
    ingest_dir = sample_ingest.out_dir
    tmp = tmp_path_factory.mktemp("graph")
    statements = read_table(ingest_dir, "statements").filter(pl.col("rank") != "deprecated")
    items = statements.filter(
        (pl.col("value_kind") == "item") & pl.col("subject").is_in(list(lexicon.labels))
    )
    has_time_qualifier = pl.col("qualifiers").list.eval(pl.element().struct.field("value_kind") == "time")
    qualified = items.filter(has_time_qualifier.list.any()).row(0, named=True)
    plain = items.filter(pl.col("qualifiers").list.len() == 0).row(0, named=True)
    literal = statements.filter(pl.col("value_kind") == "time").row(0, named=True)

    links = read_table(ingest_dir, "links").filter(pl.col("source_kind") == "table")
    links = links.filter(pl.col("target_title").is_in(list(lexicon.articles)))
    link = links.row(0, named=True)
    table_rows = read_table(ingest_dir, "table_rows").filter(pl.col("page_title") == link["source_title"])

    evidence = [_kg_evidence(s, lexicon) for s in (qualified, plain, literal)]
    evidence += [_table_evidence(row, lexicon) for row in table_rows.iter_rows(named=True)]
    reader = _version_with(evidence, tmp / "version")
    entities_path = tmp / "entities.parquet"
    pq.write_table(rows_to_table(_entity_records(sample_names), EntityRecord), entities_path)

    sent: list[str] = []
    original = GraphStore.execute

    def spy(self: GraphStore, cypher: str, params: dict | None = None) -> list[dict]:
        sent.append(cypher)
        return original(self, cypher, params)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(GraphStore, "execute", spy)
        stats = build_graph(
            ingest_dir,
            reader,
            entities_path,
            sample_names,
            tmp / "graph.kuzu",
            tmp / "work",
            MemoryBudget(memory_mb=256),
        )
    return Built(
        stats=stats,
        path=tmp / "graph.kuzu",
        work_dir=tmp / "work",
        statements=sent,
        qualified=qualified,
        plain=plain,
        literal=literal,
        table_page=link["source_title"],
        table_target=link["target_title"],
        table_row=link["row_index"],
    )


@pytest.fixture(scope="module")
def graph(built: Built):
    with GraphIndex.open(built.path) as index:
        yield index


def test_bulk_load_uses_copy_and_every_edge_lands(
    built: Built, graph: GraphIndex, lexicon: Lexicon, sample_names: NameStore
) -> None:
    writes = [s for s in built.statements if not s.startswith(("MATCH", "CALL show_tables"))]
    assert all(s.startswith(("CREATE NODE TABLE", "CREATE REL TABLE", "COPY ")) for s in writes), writes
    assert sum(s.startswith("COPY ") for s in writes) == len(NODE_TABLES) + len(REL_TABLES)  # none sliced
    counts = graph.counts()
    assert counts["Statement"] == counts["FACT"] == built.stats.nodes["Statement"]  # a node per FACT edge
    for table in REL_TABLES:  # COPY fails on a missing endpoint, so equal counts mean every endpoint exists
        rows = pl.read_parquet(built.work_dir / f"{table}.parquet").height
        assert counts[table] == rows == built.stats.edges[table] > 0, table
    assert counts["Page"] >= len(lexicon.articles)
    assert counts["Entity"] >= pq.ParquetFile(sample_names.dir / ENTITIES).metadata.num_rows
    assert built.stats.edges_per_second > 0
    # the peak RSS after each phase, in the order the phases ran: the writes' in their own process, then
    # the COPYs' in this one (a process's peak never falls)
    peaks = built.stats.peak_rss_mb
    copies = [f"copy {name}" for name in (*NODE_TABLES, *REL_TABLES)]
    phases = list(peaks)
    assert phases[:2] == ["write qualifiers", "write colon_titles"] and phases[-len(copies) :] == copies
    writes = phases[: -len(copies)]
    assert writes[-3:] == ["write Entity", "write MENTIONED_IN", "write HAS_EVIDENCE"]
    assert all(p.startswith("write ") for p in writes)
    for group in (writes, copies):
        values = [peaks[name] for name in group]
        assert all(0 < a <= b for a, b in itertools.pairwise(values)), peaks
    result = WriteResult.model_validate_json((built.work_dir / "write-result.json").read_text())
    assert result.peak_rss_mb == {name: peaks[name] for name in writes}  # what the write process said


def test_a_write_phase_that_fails_in_its_process_says_so(tmp_path: Path) -> None:
    """The writes run in a child process: its failure must surface here as an error that says where to
    look, not as a missing file later."""
    request = WriteRequest(
        ingest_dir=tmp_path / "ingest",
        evidence_dir=tmp_path / "no-such-version",
        entity_records=tmp_path / "entities.parquet",
        names_dir=tmp_path / "names",
        unit_table=None,
        work_dir=tmp_path / "work",
        budget=MemoryBudget(memory_mb=256),
    )
    with pytest.raises(RuntimeError, match=r"failed in their own process \(exit status 1"):
        write_apart(request)


def test_item_statement_is_a_fact_with_its_label_and_evidence(
    built: Built, graph: GraphIndex, lexicon: Lexicon
) -> None:
    plain = built.plain
    facts = {f.statement_id: f for f in graph.facts(plain["subject"], limit=10_000)}
    fact = facts[plain["statement_id"]]
    assert (fact.direction, fact.object, fact.property) == ("out", plain["value_item"], plain["property"])
    assert fact.label == lexicon.property_name(plain["property"]) != plain["property"]
    assert fact.evidence_id == f"kg-{plain['statement_id']}"
    incoming = graph.facts(plain["value_item"], limit=10_000)
    assert any(f.statement_id == plain["statement_id"] and f.direction == "in" for f in incoming)


def test_qualifiers_read_as_text(built: Built, graph: GraphIndex, lexicon: Lexicon) -> None:
    q = built.qualified
    fact = next(f for f in graph.facts(q["subject"], limit=10_000) if f.statement_id == q["statement_id"])
    time_qualifier = next(x for x in q["qualifiers"] if x["value_kind"] == "time")
    assert f"{lexicon.property_name(time_qualifier['property'])}: " in fact.qualifiers
    assert str(abs(time_qualifier["value_year"])) in fact.qualifiers


def test_literal_statement_reachable_from_its_entity(built: Built, graph: GraphIndex) -> None:
    literal = built.literal
    assert f"kg-{literal['statement_id']}" in graph.evidence_for_entity(literal["subject"], limit=1000)


def test_two_hops_from_a_page_through_a_table_cell(built: Built, graph: GraphIndex, lexicon: Lexicon) -> None:
    target = lexicon.resolve_title(built.table_target)
    via_link = graph.query(
        "MATCH (p:Page)-[l:LINKS_TO]->(q:Page)-[:ABOUT]->(x:Entity) "
        "WHERE p.title = $title AND l.source_kind = 'table' AND l.row_index = $row RETURN q.title AS title",
        {"title": built.table_page, "row": built.table_row},
    )
    assert target in {r["title"] for r in via_link}
    via_evidence = graph.query(
        "MATCH (p:Page)-[:HAS_EVIDENCE]->(e:Evidence)<-[m:MENTIONED_IN]-(:Entity)<-[:ABOUT]-(q:Page) "
        "WHERE p.title = $title AND m.role = 'link' RETURN DISTINCT q.title AS title",
        {"title": built.table_page},
    )
    assert target in {r["title"] for r in via_evidence}
    assert target in graph.pages_via_table_cells(built.table_page)
    cells = graph.linked_pages(built.table_page, source_kind="table")
    assert target in {c.title for c in cells} and all(c.source_kind == "table" for c in cells)


def test_one_way_edges_are_loaded_in_their_start_nodes_order(built: Built) -> None:
    """MENTIONED_IN and HAS_EVIDENCE are stored from entity or page to evidence only, and each COPY slice
    must start at neighbouring node groups: their files run in the order of the Entity and Page files
    (the order Kùzu numbers those nodes in), and hold every mention and every row's page."""
    for name, nodes, evidence_edges in (
        ("MENTIONED_IN", "Entity", "mentions"),
        ("HAS_EVIDENCE", "Page", "in_page"),
    ):
        order = {
            key: row
            for row, key in enumerate(pq.read_table(built.work_dir / f"{nodes}.parquet")["key"].to_pylist())
        }
        edges = pq.read_table(built.work_dir / f"{name}.parquet")
        starts = [order[key] for key in edges["from_key"].to_pylist()]
        assert starts == sorted(starts) and len(set(starts)) > 1, name
        original = pq.read_table(built.work_dir / f"{evidence_edges}.parquet")
        turned = sorted(zip(edges["to_key"].to_pylist(), edges["from_key"].to_pylist(), strict=True))
        assert turned == sorted(
            zip(original["from_key"].to_pylist(), original["to_key"].to_pylist(), strict=True)
        )


def test_quotes_and_backslashes_are_only_values(graph: GraphIndex) -> None:
    assert graph.linked_pages(TRICKY) == []
    assert graph.facts(TRICKY) == []
    assert graph.pages_via_table_cells(TRICKY) == []
    assert graph.query("MATCH (p:Page) WHERE p.title = $t RETURN p.title", {"t": TRICKY}) == []


def test_readers_share_the_database_across_processes(built: Built, graph: GraphIndex) -> None:
    code = (
        "import sys; from index.graph import GraphIndex\n"
        "with GraphIndex.open(sys.argv[1]) as g: print(g.counts()['FACT'])"
    )
    with GraphIndex.open(built.path) as second:
        assert second.counts() == graph.counts()
        child = subprocess.run(
            [sys.executable, "-c", code, str(built.path)], capture_output=True, text=True, check=True
        )
    assert int(child.stdout) == built.stats.edges["FACT"]


def test_threads_query_one_index_at_once(built: Built, graph: GraphIndex) -> None:
    subjects = [built.plain["subject"], built.qualified["subject"], built.literal["subject"]] * 8
    expected = {s: graph.facts(s, limit=10_000) for s in set(subjects)}
    with ThreadPoolExecutor(max_workers=4) as pool:
        results = list(pool.map(lambda s: graph.facts(s, limit=10_000), subjects))
    assert all(r == expected[s] for s, r in zip(subjects, results, strict=True))


def test_store_refuses_to_overwrite_and_names_bad_tables(built: Built) -> None:
    with pytest.raises(FileExistsError):
        GraphStore.create(built.path)
    with GraphStore.open(built.path) as store, pytest.raises(ValueError, match="table name"):
        store.count("Page) RETURN 1 //")


def test_links_to_other_namespaces_are_skipped_and_counted(
    sample_ingest: IngestReport, sample_names: NameStore, tmp_path: Path
) -> None:
    links = read_table(sample_ingest.out_dir, "links").head(50)
    odd = links.head(2).with_columns(target_title=pl.Series(["Category:Physics", "Template:Infobox person"]))
    ingest, entities = tmp_path / "ingest", tmp_path / "entities.parquet"
    (ingest / "links").mkdir(parents=True)
    pl.concat([links, odd]).write_parquet(ingest / "links" / "x.parquet")
    pq.write_table(rows_to_table(_entity_records(sample_names), EntityRecord), entities)
    budget = MemoryBudget(memory_mb=256)
    with connect(budget, tmp_path / "spill", database=tmp_path / "names.duckdb") as con:
        build_names(ingest, tmp_path / "names", con)
    names = NameStore(tmp_path / "names", connect(budget, tmp_path / "spill2"))
    reader = _version_with([], tmp_path / "version")
    stats = build_graph(ingest, reader, entities, names, tmp_path / "g.kuzu", tmp_path / "work", budget)
    assert stats.links_skipped == 2
    assert stats.edges["LINKS_TO"] == 50
    assert stats.edges["FACT"] == stats.edges["MENTIONED_IN"] == 0


def _entity_nodes(path: Path, rows: int) -> Path:
    """Entity nodes as the graph build writes them (COPY column order), ``rows`` distinct ids."""
    ids = [f"Q{900_000_000 + i}" for i in range(rows)]
    table = pa.table(
        {
            "key": [node_key(i) for i in ids],
            "id": ids,
            "label": [f"Synthetic item {i}" for i in range(rows)],
            "description": ["an item made for a memory test"] * rows,
            "page_title": [None] * rows,
            "popularity": [float(i % 97) for i in range(rows)],
        }
    )
    pq.write_table(table, path)
    return path


def test_a_copy_past_the_buffer_pool_names_the_table_and_the_setting(tmp_path: Path) -> None:
    """Kùzu's COPY needs a buffer pool that grows with the table; past it the load fails with a message
    naming the table, its rows, the pool and the setting to raise. The same file loads whole when the pool
    is large enough."""
    nodes = _entity_nodes(tmp_path / "Entity.parquet", 200_000)
    with GraphStore.create(tmp_path / "small.kuzu", buffer_pool_mb=16) as store:
        store.ddl(SCHEMA)
        with pytest.raises(GraphMemoryError) as failed:
            store.copy_from("Entity", nodes)
    message = str(failed.value)
    assert "200,000 rows into Entity" in message
    assert "16 MB buffer pool" in message
    assert "index.memory_mb" in message
    with GraphStore.create(tmp_path / "large.kuzu", buffer_pool_mb=256) as store:
        store.ddl(SCHEMA)
        store.copy_from("Entity", nodes)
        assert store.count("Entity") == 200_000


def test_a_table_too_large_for_one_copy_loads_in_slices(tmp_path: Path) -> None:
    """One COPY holds the whole table until it commits; fed a node group at a time, with a checkpoint
    after each, the same file loads into a pool it does not fit in whole, every row and key intact."""
    rows = 8 * NODE_GROUP_ROWS + 12_345  # a last slice shorter than the others
    nodes = _entity_nodes(tmp_path / "Entity.parquet", rows)
    with GraphStore.create(tmp_path / "whole.kuzu", buffer_pool_mb=48) as store:
        store.ddl(SCHEMA)
        with pytest.raises(GraphMemoryError):
            store.copy_from("Entity", nodes)
    with GraphStore.create(tmp_path / "sliced.kuzu", buffer_pool_mb=48) as store:
        store.ddl(SCHEMA)
        store.copy_from("Entity", nodes, slice_rows=NODE_GROUP_ROWS)
        assert store.count("Entity") == rows
        last = f"Q{900_000_000 + rows - 1}"
        found = store.execute(
            "MATCH (e:Entity) WHERE e.id IN $ids RETURN e.id AS id ORDER BY id", {"ids": ["Q900000000", last]}
        )
        assert [r["id"] for r in found] == ["Q900000000", last]
    assert not list(tmp_path.glob(".*slice*"))  # each slice file removed after its COPY


def test_node_keys_are_the_same_number_in_the_build_and_the_reader(tmp_path: Path) -> None:
    """The build keys nodes in DuckDB and a reader in Python; a key computed apart must be the same
    number, or every point lookup misses. Expected: MD5's bytes 8-15 read little-endian, shifted right
    by one, from hashlib directly."""
    import hashlib

    texts = ["Q31", "Belgium", "", TRICKY, "Zürich (Kanton)", "東京", "a" * 5_000]
    with connect(MemoryBudget(memory_mb=256, threads=1), tmp_path) as con:
        con.execute(NODE_KEY_SQL)
        in_sql = [con.execute("SELECT node_key(?)", [text]).fetchone()[0] for text in texts]
    by_hand = [int.from_bytes(hashlib.md5(t.encode()).digest()[8:16], "little") // 2 for t in texts]
    assert in_sql == by_hand == [node_key(t) for t in texts]
    assert all(0 <= key < 2**63 for key in by_hand)


def test_a_copy_loads_only_its_columns_and_names_a_duplicate_key(tmp_path: Path) -> None:
    """A rel file of the build carries its ends as ids too (later tables are made from them); the COPY
    loads the schema's columns only. Two nodes with one key fail the COPY with an error that says what a
    key is, not Kùzu's bare message."""
    ids = ["Q1", "Q2", "Q3"]
    pq.write_table(
        pa.table(
            {
                "key": [node_key(i) for i in ids],
                "id": ids,
                "label": ["one", "two", "three"],
                "description": [None] * 3,
                "page_title": [None] * 3,
                "popularity": [0.0] * 3,
            }
        ),
        tmp_path / "Entity.parquet",
    )
    pq.write_table(
        pa.table(
            {
                "from_key": [node_key("Q1")],
                "to_key": [node_key("Q3")],
                "property": ["P17"],
                "statement": [0],
                "from": ["Q1"],
                "to": ["Q3"],
            }
        ),
        tmp_path / "FACT.parquet",
    )
    with GraphStore.create(tmp_path / "g.kuzu") as store:
        store.ddl(SCHEMA)
        store.copy_from("Entity", tmp_path / "Entity.parquet", columns=COPY_COLUMNS["Entity"])
        store.copy_from("FACT", tmp_path / "FACT.parquet", columns=COPY_COLUMNS["FACT"])
        rows = store.execute(
            "MATCH (s:Entity)-[f:FACT]->(o:Entity) WHERE s.key = $key RETURN o.id AS id, o.label AS label",
            {"key": node_key("Q1")},
        )
        assert rows == [{"id": "Q3", "label": "three"}]
        assert not list(tmp_path.glob(".*slice*"))
        with pytest.raises(ValueError, match="share one primary key") as failed:
            store.copy_from("Entity", tmp_path / "Entity.parquet", columns=COPY_COLUMNS["Entity"])
        assert "Entity" in str(failed.value)
