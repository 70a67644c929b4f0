"""benchmarks/scale/synth.py: a synthetic corpus the project's own ingest reads whole, renamed consistently.

Expected values come from the raw sample dumps and from the generated files parsed here with ``json``
and regular expressions, not from the generator: which sample item or page each copy came from is
recovered from its statement GUIDs and its title, and what should resolve is decided on the sample.
"""

from __future__ import annotations

import bz2
import hashlib
import html
import json
import re
import statistics
from collections import Counter
from pathlib import Path
from types import ModuleType

import polars as pl
import pytest

from ingest.pipeline import IngestInputs, IngestReport, run_ingest
from ingest.wikitext.titles import classify_target
from schemas.settings import HqaSettings
from tests.conftest import ENWIKI_SAMPLE, REPO, WIKIDATA_ITEMS, load_script, raw_entities

ENTITIES = 1_230  # 12 whole blocks of the 100 sample items and a partial one
PAGES = 500  # two whole copies of the 206 sample pages and a partial third
SEED = 7
SCALE = REPO / "benchmarks" / "scale"
_TITLE = re.compile(r"<title>(.*?)</title>\s*<ns>(\d+)</ns>\s*<id>(\d+)</id>")


@pytest.fixture(scope="module")
def names() -> ModuleType:
    return load_script(SCALE / "synth_names.py")


@pytest.fixture(scope="module")
def synth() -> ModuleType:
    return load_script(SCALE / "synth.py")


@pytest.fixture(scope="module")
def corpus(synth: ModuleType, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, object]:
    out = tmp_path_factory.mktemp("synth")
    manifest = synth.generate(synth.CorpusSpec(entities=ENTITIES, pages=PAGES, seed=SEED), out, workers=2)
    return out, manifest


@pytest.fixture(scope="module")
def items(corpus: tuple[Path, object]) -> list[dict]:
    """The generated items, parsed line by line with json (the dump's own layout checked on the way)."""
    out, _ = corpus
    with bz2.open(out / "wikidata-synth-all.json.bz2", "rt", encoding="utf-8") as f:
        lines = f.read().split("\n")
    assert lines[0] == "[" and lines[-2:] == ["]", ""], "not the latest-all.json frame"
    assert all(line.endswith(",") for line in lines[1:-2])
    return [json.loads(line[:-1]) for line in lines[1:-2]]


@pytest.fixture(scope="module")
def pages_xml(corpus: tuple[Path, object]) -> str:
    out, _ = corpus
    return bz2.open(out / "enwiki-synth-pages-articles.xml.bz2", "rt", encoding="utf-8").read()


@pytest.fixture(scope="module")
def ingested(corpus: tuple[Path, object], tmp_path_factory: pytest.TempPathFactory) -> IngestReport:
    out, _ = corpus
    inputs = IngestInputs(
        [out / "wikidata-synth-all.json.bz2"], [out / "enwiki-synth-pages-articles.xml.bz2"]
    )
    target = tmp_path_factory.mktemp("synth-ingest")
    return run_ingest(inputs, target, property_table=HqaSettings().property_table)


@pytest.fixture(scope="module")
def sample_pages() -> list[tuple[str, int]]:
    """(title, namespace) of the sample's pages in file order, straight from its XML."""
    with bz2.open(ENWIKI_SAMPLE, "rt", encoding="utf-8") as f:
        xml = f.read()
    return [(t, int(ns)) for t, ns, _ in _TITLE.findall(xml)]


def _copy_word(name: str) -> str:
    return name.rsplit(" ", 1)[1]


def test_ingest_reads_every_record_and_quarantines_none(ingested: IngestReport, pages_xml: str) -> None:
    by_reader = {s.reader: s for s in ingested.summaries}
    assert {r: s.quarantined for r, s in by_reader.items()} == {"wikidata": 0, "wikipedia": 0}
    assert by_reader["wikidata"].records_read == ENTITIES
    assert by_reader["wikidata"].counts["entities"] == ENTITIES
    assert by_reader["wikipedia"].records_read == PAGES
    main_namespace = sum(ns == "0" for _, ns, _ in _TITLE.findall(pages_xml))
    assert by_reader["wikipedia"].counts["pages"] == main_namespace


def test_ids_titles_and_labels_are_unique(items: list[dict], pages_xml: str) -> None:
    ids = [item["id"] for item in items]
    assert len(ids) == ENTITIES and len(set(ids)) == ENTITIES
    assert all(re.fullmatch(r"Q\d+", i) for i in ids)
    labels = [item["labels"]["en"]["value"] for item in items]
    assert len(set(labels)) == ENTITIES
    statement_ids = [c["id"] for item in items for claims in item["claims"].values() for c in claims]
    assert len(set(statement_ids)) == len(statement_ids)
    pages = _TITLE.findall(pages_xml)
    assert len(pages) == PAGES
    assert len({t for t, _, _ in pages}) == PAGES and len({i for _, _, i in pages}) == PAGES


def _template_statements() -> dict[str, tuple[str, dict]]:
    """Statement GUID -> (sample item id, the statement) over the sample dump."""
    return {
        c["id"].split("$", 1)[1]: (qid, c)
        for qid, item in raw_entities(WIKIDATA_ITEMS).items()
        for claims in item["claims"].values()
        for c in claims
    }


def _item_value(snak: dict) -> str | None:
    value = snak.get("datavalue", {})
    return value["value"]["id"] if value.get("type") == "wikibase-entityid" else None


def test_item_values_point_to_the_same_copy_or_stay_dangling(items: list[dict]) -> None:
    sample = raw_entities(WIKIDATA_ITEMS)
    templates = _template_statements()
    corpus = {item["id"]: item for item in items}
    inside = dangling = 0
    for item in items:
        word = _copy_word(item["labels"]["en"]["value"])
        for claims in item["claims"].values():
            for claim in claims:
                _, source = templates[claim["id"].split("$", 1)[1]]
                assert claim["id"].split("$")[0].upper() == item["id"]
                was, now = _item_value(source["mainsnak"]), _item_value(claim["mainsnak"])
                if was is None or was not in sample:
                    assert now == was  # other values, and ids outside the sample, are kept as they are
                    dangling += was is not None
                    continue
                expected_label = sample[was]["labels"]["en"]["value"] + " " + word
                if now in corpus:
                    inside += 1
                    assert corpus[now]["labels"]["en"]["value"] == expected_label
                else:  # only the last, partial block lacks some targets
                    assert int(now[1:]) - int(items[0]["id"][1:]) >= ENTITIES
                assert claim["qualifiers"] if "qualifiers" in source else "qualifiers" not in claim
    # the sample's statements point inside it 165 times in 12,599: copies keep that rate of the kept ones
    assert inside > 0 and dangling > 10 * inside


def test_whole_copies_keep_qualifiers_references_and_ranks(items: list[dict]) -> None:
    sample = raw_entities(WIKIDATA_ITEMS)
    templates = _template_statements()
    whole = 0
    for item in items:
        guids = [c["id"].split("$", 1)[1] for claims in item["claims"].values() for c in claims]
        source = sample[templates[guids[0]][0]]
        if len(item["labels"]) != len(source["labels"]):
            continue
        whole += 1
        assert sum(len(c) for c in item["claims"].values()) == sum(len(c) for c in source["claims"].values())
        for prop, claims in item["claims"].items():
            for mine, theirs in zip(claims, source["claims"][prop], strict=True):
                assert mine["rank"] == theirs["rank"]
                assert len(mine.get("references", [])) == len(theirs.get("references", []))
                assert mine["mainsnak"]["datatype"] == theirs["mainsnak"]["datatype"]
                assert list(mine.get("qualifiers", {})) == list(theirs.get("qualifiers", {}))
    assert whole >= 3


def test_statement_counts_follow_a_dump_spread_not_the_samples(items: list[dict]) -> None:
    counts = [sum(len(c) for c in item["claims"].values()) for item in items]
    sample_counts = [sum(len(c) for c in e["claims"].values()) for e in raw_entities(WIKIDATA_ITEMS).values()]
    assert statistics.median(sample_counts) > 50  # the sample: countries and cities
    assert 4 <= statistics.median(counts) <= 6  # median 5 asked
    assert sum(c <= 10 for c in counts) / len(counts) > 0.7
    assert max(counts) > 100 and max(counts) <= max(
        sample_counts
    )  # the long tail, up to the sample's largest
    with_p31 = [item for item in items if "P31" in item["claims"]]
    sample_p31 = sum("P31" in e["claims"] for e in raw_entities(WIKIDATA_ITEMS).values())
    assert len(with_p31) / len(items) >= sample_p31 / 100 - 0.02  # a small item keeps its instance-of


def test_links_point_into_their_copy_and_resolve_as_in_the_sample(
    ingested: IngestReport, sample_pages: list[tuple[str, int]], names: ModuleType
) -> None:
    out = ingested.out_dir
    links = pl.read_parquet(next((out / "links").glob("*.parquet")))
    titles = set(pl.read_parquet(next((out / "pages").glob("*.parquet")))["title"])
    position = {html.unescape(t): n for n, (t, _) in enumerate(sample_pages)}
    copies = {names.copy_word(c): c for c in range(PAGES // len(sample_pages) + 1)}
    checked = resolved = 0
    for source, target in links.select("source_title", "target_title").iter_rows():
        if classify_target(target).kind != "article":  # Category:, Wikipedia: … links are kept as they are
            continue
        word = _copy_word(source)
        assert target.endswith(" " + word), f"{source} links outside its copy: {target}"
        original = target[: -len(word) - 1]
        expected = original in position and position[original] + copies[word] * len(sample_pages) < PAGES
        assert (target in titles) == expected, f"{source} -> {target}"
        checked += 1
        resolved += expected
    assert checked > 10_000 and resolved > 0


def test_sitelinks_name_the_copies_of_their_pages(
    items: list[dict], pages_xml: str, sample_pages: list[tuple[str, int]], names: ModuleType
) -> None:
    sample_titles = [html.unescape(t) for t, _ in sample_pages]
    sample = raw_entities(WIKIDATA_ITEMS)
    both = [e["sitelinks"]["enwiki"]["title"] for e in sample.values()]
    assert [t for t in both if t in sample_titles] == ["Angola"]  # the one sample item with its article there
    titles = {html.unescape(t) for t, _, _ in _TITLE.findall(pages_xml)}
    sitelinks = Counter(item["sitelinks"]["enwiki"]["title"] for item in items)
    made = [c for c in range(3) if sample_titles.index("Angola") + c * len(sample_pages) < PAGES]
    assert made
    for c in made:
        title = f"Angola {names.copy_word(c)}"
        assert sitelinks[title] == 1 and title in titles


def test_same_seed_same_bytes_whatever_the_workers(synth: ModuleType, tmp_path: Path) -> None:
    spec = synth.CorpusSpec(entities=450, pages=230, seed=3)
    one = synth.generate(spec, tmp_path / "one", workers=1)
    two = synth.generate(spec, tmp_path / "two", workers=2)
    assert one.files == two.files
    for name, info in one.files.items():
        assert hashlib.sha256((tmp_path / "two" / name).read_bytes()).hexdigest() == info.sha256
    other = synth.generate(spec.model_copy(update={"seed": 4}), tmp_path / "other", workers=2)
    assert all(other.files[n].sha256 != one.files[n].sha256 for n in one.files)


def test_plain_output_is_the_same_dump_uncompressed(synth: ModuleType, tmp_path: Path) -> None:
    spec = synth.CorpusSpec(entities=150, pages=50, seed=3)
    packed = synth.generate(spec, tmp_path / "bz2", workers=1)
    plain = synth.generate(spec.model_copy(update={"compression": "none"}), tmp_path / "plain", workers=1)
    for (name, _), (plain_name, info) in zip(packed.files.items(), plain.files.items(), strict=True):
        assert (
            bz2.decompress((tmp_path / "bz2" / name).read_bytes())
            == (tmp_path / "plain" / plain_name).read_bytes()
        )
        assert info.sha256 == hashlib.sha256((tmp_path / "plain" / plain_name).read_bytes()).hexdigest()


def test_manifest_counts_what_was_written(corpus: tuple[Path, object], items: list[dict]) -> None:
    _, manifest = corpus
    counts = Counter(sum(len(c) for c in item["claims"].values()) for item in items)
    assert manifest.items["items"] == ENTITIES
    assert manifest.items["statements"] == sum(k * v for k, v in counts.items())
    assert manifest.items["histogram"] == {str(k): counts[k] for k in sorted(counts)}
    assert manifest.items["statements_median"] == statistics.median(
        [sum(len(c) for c in item["claims"].values()) for item in items]
    )
    assert manifest.pages["pages"] == PAGES


def test_cached_corpus_is_reused_and_a_cut_one_made_again(synth: ModuleType, tmp_path: Path) -> None:
    spec = synth.CorpusSpec(entities=120, pages=30, seed=5)
    folder, first = synth.cached_corpus(spec, tmp_path)
    stamp = (folder / "synth.json").stat().st_mtime_ns
    again, second = synth.cached_corpus(spec, tmp_path)
    assert again == folder and second == first and (folder / "synth.json").stat().st_mtime_ns == stamp
    wikidata = folder / spec.file_names()[0]
    wikidata.write_bytes(wikidata.read_bytes()[:100])  # a copy cut short is not reused
    _, third = synth.cached_corpus(spec, tmp_path)
    assert third.files == first.files and wikidata.stat().st_size == first.files[wikidata.name].bytes
