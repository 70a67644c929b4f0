"""The entity-linking table and its Tantivy lookup, on the real sample ingest."""

from __future__ import annotations

import polars as pl
import pyarrow.parquet as pq
import pytest

from index.aliases import AliasIndex, normalize_mention
from index.duck import MemoryBudget
from index.entities import build_entities


@pytest.fixture(scope="module")
def built(sample_names, sample_ingest, tmp_path_factory):
    out = tmp_path_factory.mktemp("entities")
    stats = build_entities(
        sample_ingest.out_dir,
        sample_names.dir,
        out / "entities.parquet",
        out / "aliases.parquet",
        out / "index",
        sample_names.con,
        MemoryBudget(memory_mb=256),
        out / "work",
    )
    return stats, out


@pytest.fixture(scope="module")
def tables(built):
    _, out = built
    return pq.read_table(out / "entities.parquet"), pq.read_table(out / "aliases.parquet")


@pytest.fixture(scope="module")
def alias_index(built, tables) -> AliasIndex:
    stats, out = built
    assert stats.aliases == tables[1].num_rows and stats.entities == tables[0].num_rows
    return AliasIndex(out / "index")


def test_priors_are_distributions_over_each_mention(tables):
    _, aliases = tables
    frame = pl.from_arrow(aliases)
    sums = frame.group_by("alias_norm").agg(pl.col("prior").sum())
    assert (sums["prior"] - 1.0).abs().max() < 1e-9
    assert frame.filter(pl.col("source") == "anchor")["count"].max() > 1  # anchors are counted
    keys = frame.select("alias_norm", "entity_id")
    assert keys.n_unique() == frame.height  # each (mention, entity) once
    assert frame["alias_norm"].to_list() == sorted(frame["alias_norm"].to_list())


def test_every_source_of_names_is_present(tables, sample_ingest):
    _, aliases = tables
    sources = set(pl.from_arrow(aliases)["source"].unique())
    assert {"label", "alias", "title", "redirect", "anchor"} <= sources
    # expected straight from the ingest: a redirect to an article no entity has a sitelink to names that
    # article's title; the alias table must hold the redirect's name for it
    pages = pl.read_parquet(sample_ingest.out_dir / "pages" / "*.parquet")
    sitelinked = set(
        pl.read_parquet(sample_ingest.out_dir / "entities" / "*.parquet")["enwiki_title"].drop_nulls()
    )
    articles = set(pages.filter(pl.col("redirect_target").is_null() & (pl.col("namespace") == 0))["title"])
    redirecting = set(pages.filter(pl.col("redirect_target").is_not_null())["title"])
    redirect, target = next(
        (r, t)
        for r, t in pages.filter(pl.col("redirect_target").is_not_null())
        .select("title", "redirect_target")
        .rows()
        if t in articles and t not in sitelinked and t not in redirecting and r not in sitelinked
    )
    rows = pl.from_arrow(aliases).filter(pl.col("alias_norm") == normalize_mention(redirect))
    assert target in rows["entity_id"].to_list()


def test_entities_have_popularity_in_unit_range(tables):
    entities, _ = tables
    frame = pl.from_arrow(entities)
    assert frame["popularity"].min() >= 0 and frame["popularity"].max() <= 1
    belgium = frame.filter(pl.col("entity_id") == "Q31").row(0, named=True)
    assert belgium["label"] == "Belgium" and belgium["page_title"] == "Belgium"
    assert belgium["sitelinks"] > 100 and belgium["inlinks"] > 0
    assert frame["entity_id"].n_unique() == frame.height


@pytest.mark.parametrize(
    ("mention", "match"), [("Belgium", "exact"), ("BELGIUM ", "normalized"), ("Belgum", "fuzzy")]
)
def test_lookup_exact_normalized_fuzzy(alias_index, mention, match):
    hits = alias_index.lookup(mention, 5)
    assert hits[0].entity_id == "Q31"
    assert hits[0].match == match


def test_accents_and_punctuation_normalize_away():
    assert normalize_mention("  Zürich,  Switzerland ") == "zurich switzerland"


@pytest.mark.parametrize("mention", ['"', 'Belgium: "(', "AND OR NOT", "*", "", "~^+-"])
def test_query_syntax_in_mentions_does_not_error(alias_index, mention):
    hits = alias_index.lookup(mention, 5)
    assert isinstance(hits, list)
    if mention.startswith("Belgium"):
        assert hits and hits[0].entity_id == "Q31"
