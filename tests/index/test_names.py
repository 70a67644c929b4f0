"""The build's name tables against the rules the in-memory lexicon had, on the sample and on odd redirects.

The oracle below is the old ``Lexicon.load`` written out in plain dicts (last non-empty label wins, first
entity per Wikipedia title, last redirect target, first article page, redirects walked at most five hops
and stopping on a self-redirect): every name the tables give must be the one it gives, on the real
sample ingest and on a hand-made ingest of chains longer than five hops, loops and repeats.
"""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from index.duck import MemoryBudget, connect
from index.names import NameStore, build_names
from ingest.parquet_sink import rows_to_table
from schemas.wikidata import Entity
from schemas.wikipedia import Page


class Oracle:
    """The in-memory rules, read straight from the ingest Parquet."""

    def __init__(self, ingest: Path):
        self.labels: dict[str, str] = {}
        self.titles: dict[str, str] = {}  # qid -> enwiki title
        self.title_entities: dict[str, str] = {}
        self.redirects: dict[str, str] = {}
        self.articles: dict[str, tuple] = {}
        for path in sorted((ingest / "entities").glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                if row["label"]:
                    self.labels[row["id"]] = row["label"]
                if row["enwiki_title"]:
                    self.titles[row["id"]] = row["enwiki_title"]
                    self.title_entities.setdefault(row["enwiki_title"], row["id"])
        for path in sorted((ingest / "pages").glob("*.parquet")):
            for row in pq.read_table(path).to_pylist():
                if row["redirect_target"]:
                    self.redirects[row["title"]] = row["redirect_target"]
                elif row["namespace"] == 0:
                    self.articles.setdefault(
                        row["title"], (row["page_id"], row["revision_id"], row["source"])
                    )

    def resolve(self, title: str) -> str:
        for _ in range(5):
            target = self.redirects.get(title)
            if target is None or target == title:
                break
            title = target
        return title

    def entity(self, title: str) -> str:
        resolved = self.resolve(title)
        return self.title_entities.get(resolved) or self.title_entities.get(title) or resolved

    def name(self, entity_id: str) -> str:
        return self.labels.get(entity_id) or self.titles.get(entity_id) or entity_id


def _names(ingest: Path, work: Path) -> NameStore:
    budget = MemoryBudget(memory_mb=256)
    with connect(budget, work / "spill", database=work / "names.duckdb") as con:
        build_names(ingest, work / "names", con)
    return NameStore(work / "names", connect(budget, work / "lookups"))


def _agree(oracle: Oracle, names: NameStore, titles: set[str], ids: set[str]) -> None:
    lexicon = names.lexicon(ids=ids, titles=titles | ids)
    for title in sorted(titles):
        resolved = oracle.resolve(title)
        assert lexicon.resolve_title(title) == resolved, title
        assert lexicon.entity_for_title(title) == oracle.entity(title), title
        # what linking a target does: resolve it, then name the resolved title (which resolves again)
        assert lexicon.entity_for_title(lexicon.resolve_title(title)) == oracle.entity(resolved), title
        assert lexicon.articles.get(title) == oracle.articles.get(title), title
    for entity_id in sorted(ids):
        assert lexicon.name(entity_id) == oracle.name(entity_id), entity_id
        expected_page = oracle.titles.get(entity_id) or (entity_id if entity_id in oracle.articles else None)
        assert lexicon.page_title_for(entity_id) == expected_page, entity_id


def test_the_sample_names_every_title_and_entity_as_the_lexicon_did(sample_ingest, sample_names):
    ingest = sample_ingest.out_dir
    oracle = Oracle(ingest)
    links = {
        t for p in (ingest / "links").glob("*.parquet") for t in pq.read_table(p)["target_title"].to_pylist()
    }
    titles = set(oracle.redirects) | set(oracle.articles) | set(oracle.title_entities) | links
    ids = set(oracle.labels) | set(oracle.titles) | {"Q0-not-ingested"}
    assert len(titles) > 1000 and oracle.redirects  # the sample has redirects to walk
    _agree(oracle, sample_names, titles | {"Nowhere at all"}, ids)


def _page(title: str, target: str | None, page_id: int, source: str = "a.xml") -> dict:
    return {
        "page_id": page_id, "title": title, "namespace": 0, "revision_id": page_id * 10,
        "revision_timestamp": None, "redirect_target": target, "length": 1, "categories": [],
        "source": source,
    }  # fmt: skip


def _entity(qid: str, label: str | None, title: str | None) -> dict:
    return {
        "id": qid, "kind": "item", "label": label, "description": None, "aliases": [], "enwiki_title": title,
        "sitelink_count": 1, "instance_of": [], "datatype": None,
    }  # fmt: skip


@pytest.fixture(scope="module")
def odd_ingest(tmp_path_factory: pytest.TempPathFactory) -> Path:
    ingest = tmp_path_factory.mktemp("odd") / "ingest"
    chain = [_page(f"A{i}", f"A{i + 1}", i) for i in range(1, 8)] + [_page("A8", None, 8)]
    loop = [_page("B1", "B2", 21), _page("B2", "B1", 22), _page("C", "C", 23)]
    twice = [_page("D", "E", 31), _page("E", None, 32), _page("F", None, 33)]
    later = [_page("D", "F", 41), _page("E", None, 42, "b.xml"), _page("A3", None, 43, "b.xml")]
    for name, rows in (("1.all", chain + loop + twice), ("2.all", later)):
        (ingest / "pages").mkdir(parents=True, exist_ok=True)
        pq.write_table(rows_to_table(rows, Page), ingest / "pages" / f"{name}.parquet")
    entities = [
        _entity("Q1", "One", "A6"), _entity("Q2", "Two", "A6"), _entity("Q3", "Three", "E"),
        _entity("Q1", "", None), _entity("Q4", None, "B1"), _entity("Q5", "Five", "A8"),
    ]  # fmt: skip
    (ingest / "entities").mkdir()
    pq.write_table(rows_to_table(entities, Entity), ingest / "entities" / "x.all.parquet")
    return ingest


def test_chains_loops_and_repeats_resolve_as_the_lexicon_did(odd_ingest: Path, tmp_path: Path) -> None:
    oracle = Oracle(odd_ingest)
    names = _names(odd_ingest, tmp_path)
    titles = {f"A{i}" for i in range(1, 9)} | {"B1", "B2", "C", "D", "E", "F", "G"}
    _agree(oracle, names, titles, {"Q1", "Q2", "Q3", "Q4", "Q5", "Q6"})
    # the cases themselves, so a wrong oracle cannot pass unnoticed
    assert oracle.resolve("A1") == "A6" and oracle.entity("A1") == "Q1"  # five hops, then the sitelink
    assert oracle.resolve("B1") == "B2" and oracle.resolve("C") == "C"  # a loop stops, a self-redirect too
    assert oracle.resolve("D") == "F" and oracle.name("Q1") == "One"  # last redirect, last non-empty label
