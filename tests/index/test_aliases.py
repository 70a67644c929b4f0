"""The entity-linking table and its Tantivy lookup, on the real sample ingest."""

from __future__ import annotations

import polars as pl
import pytest

from index.aliases import AliasIndex, alias_table, build_alias_index, entity_records, normalize_mention


@pytest.fixture(scope="module")
def tables(sample_lexicon, sample_ingest):
    return entity_records(sample_lexicon, sample_ingest.out_dir), alias_table(
        sample_lexicon, sample_ingest.out_dir
    )


@pytest.fixture(scope="module")
def alias_index(tables, tmp_path_factory) -> AliasIndex:
    entities, aliases = tables
    out = tmp_path_factory.mktemp("aliases") / "index"
    stats = build_alias_index(aliases, entities, out)
    assert stats.aliases == aliases.num_rows
    return AliasIndex(out)


def test_priors_are_distributions_over_each_mention(tables):
    _, aliases = tables
    frame = pl.from_arrow(aliases)
    sums = frame.group_by("alias_norm").agg(pl.col("prior").sum())
    assert (sums["prior"] - 1.0).abs().max() < 1e-9
    assert frame.filter(pl.col("source") == "anchor")["count"].max() > 1  # anchors are counted


def test_every_source_of_names_is_present(tables, sample_lexicon):
    _, aliases = tables
    sources = set(pl.from_arrow(aliases)["source"].unique())
    assert {"label", "alias", "title", "redirect", "anchor"} <= sources
    redirect, target = next(iter(sample_lexicon.redirects.items()))
    rows = pl.from_arrow(aliases).filter(pl.col("alias_norm") == normalize_mention(redirect))
    assert sample_lexicon.entity_for_title(target) in rows["entity_id"].to_list()


def test_entities_have_popularity_in_unit_range(tables):
    entities, _ = tables
    frame = pl.from_arrow(entities)
    assert frame["popularity"].min() >= 0 and frame["popularity"].max() <= 1
    belgium = frame.filter(pl.col("entity_id") == "Q31").row(0, named=True)
    assert belgium["label"] == "Belgium" and belgium["page_title"] == "Belgium"
    assert belgium["sitelinks"] > 100 and belgium["inlinks"] > 0


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
