"""Wikipedia XML ingest on the real sample dumps: pages, redirects, tables, and broken input."""

from __future__ import annotations

import bz2
import re
import time
import xml.etree.ElementTree as ET
from pathlib import Path

import polars as pl
import pytest

from ingest.shard_output import ErrorRateExceeded
from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia
from ingest.wikipedia.xml_pages import RawPage, iter_raw_pages, parse_page
from tests.conftest import ENWIKI_SAMPLE, ENWIKI_TABLES

NS = "{http://www.mediawiki.org/xml/export-0.10/}"


def _dump_pages(path: Path) -> list[dict]:
    """Pages read with ElementTree over the whole document: the independent reference."""
    pages = []
    with bz2.open(path) as f:
        for _, elem in ET.iterparse(f):
            if elem.tag == f"{NS}page":
                redirect = elem.find(f"{NS}redirect")
                pages.append(
                    {
                        "id": int(elem.findtext(f"{NS}id")),
                        "title": elem.findtext(f"{NS}title"),
                        "ns": int(elem.findtext(f"{NS}ns")),
                        "redirect": None if redirect is None else redirect.get("title"),
                        "text": elem.findtext(f"{NS}revision/{NS}text") or "",
                    }
                )
                elem.clear()
    return pages


@pytest.fixture(scope="module")
def sample_out(tmp_path_factory: pytest.TempPathFactory) -> Path:
    out = tmp_path_factory.mktemp("wikipedia")
    ingest_wikipedia(ENWIKI_SAMPLE, out, WikipediaIngestOptions(workers=2))
    ingest_wikipedia(ENWIKI_TABLES, out, WikipediaIngestOptions(workers=1))
    return out


def test_pages_and_redirects_match_the_dump(sample_out: Path) -> None:
    reference = [p for p in _dump_pages(ENWIKI_SAMPLE) if p["ns"] == 0]
    pages = pl.read_parquet(sample_out / "pages" / "enwiki-2016-sample-pages-articles.all.parquet")
    assert pages["page_id"].to_list() == [p["id"] for p in reference]
    redirects = {p["title"]: p["redirect"] for p in reference if p["redirect"]}
    assert len(redirects) == 99  # the file has 100 redirects; one is in namespace 4
    got = dict(
        pages.filter(pl.col("redirect_target").is_not_null()).select("title", "redirect_target").iter_rows()
    )
    assert got == redirects  # sample targets are already in normal form
    einstein = pages.filter(pl.col("title") == "Albert Einstein").to_dicts()[0]
    text = next(p["text"] for p in reference if p["title"] == "Albert Einstein")
    assert einstein["length"] == len(text)
    assert einstein["revision_timestamp"].startswith("2016-")
    assert set(re.findall(r"\[\[Category:([^|\]]+)", text)[:5]) <= set(einstein["categories"])


def test_redirects_are_not_parsed(sample_out: Path) -> None:
    pages = pl.read_parquet(sample_out / "pages")
    redirect_ids = set(pages.filter(pl.col("redirect_target").is_not_null())["page_id"])
    passages = pl.read_parquet(sample_out / "passages")
    assert redirect_ids and not redirect_ids & set(passages["page_id"])


def test_einstein_infobox_fields(sample_out: Path) -> None:
    fields = pl.read_parquet(sample_out / "infobox_fields").filter(pl.col("page_title") == "Albert Einstein")
    assert fields["template"].unique().to_list() == ["Infobox scientist"]
    by_key = {r["key"]: r for r in fields.to_dicts()}
    assert by_key["doctoral_advisor"]["value_text"] == "Alfred Kleiner"
    assert [link["target"] for link in by_key["doctoral_advisor"]["value_links"]] == ["Alfred Kleiner"]
    assert "Ulm" in by_key["birth_place"]["value_text"]
    assert "1879" in by_key["birth_date"]["value_text"]


def test_rowspan_cells_repeat_in_every_spanned_row(sample_out: Path) -> None:
    # the page is in both sample dumps; take the table-markup dump's copy
    rows = pl.read_parquet(sample_out / "table_rows" / "enwiki-table-markup.all.parquet").filter(
        pl.col("page_title") == "Academy Award for Best Production Design"
    )
    table = rows.filter(pl.col("table_index") == 1).sort("row_index").to_dicts()
    assert [c["header"] for c in table[0]["cells"]] == ["Year", "Interior decorator", "Film"]
    # In the wikitext the 1927/28 year cell has rowspan=5 over its own row and the four nominee rows,
    # and William Cameron Menzies has rowspan=2 over The Dove and Tempest.
    first_year = [
        [c["text"] for c in r["cells"]] for r in table if r["cells"][0]["text"].startswith("1927/28")
    ]
    assert first_year == [
        ["1927/28 (1st)", "William Cameron Menzies", "The Dove"],
        ["1927/28 (1st)", "William Cameron Menzies", "Tempest"],
        ["1927/28 (1st)", "Harry Oliver", "Seventh Heaven"],
        ["1927/28 (1st)", "Rochus Gliese", "Sunrise"],
    ]
    assert {len(r["cells"]) for r in table} == {3}
    film_links = [link["target"] for link in table[0]["cells"][2]["links"]]
    assert film_links == ["The Dove (1927 film)"]
    # '[[Richard Day (art director)|Richard Day]] <br /> [[Paul Groesse]]' keeps the two names apart
    forties = rows.filter(pl.col("table_index") == 3).sort("row_index").to_dicts()
    pride = next(r for r in forties if r["cells"][2]["text"] == "Pride and Prejudice")
    assert pride["cells"][1]["text"] == "Richard Day, Paul Groesse"
    assert [x["target"] for x in pride["cells"][1]["links"]] == ["Richard Day (art director)", "Paul Groesse"]


def test_links_carry_their_source_location(sample_out: Path) -> None:
    links = pl.read_parquet(sample_out / "links")
    kinds = set(links["source_kind"])
    assert kinds == {"passage", "infobox", "table"}
    advisor = links.filter(
        (pl.col("source_title") == "Albert Einstein") & (pl.col("relation") == "doctoral_advisor")
    )
    assert advisor["target_title"].to_list() == ["Alfred Kleiner"]
    table_links = links.filter(pl.col("source_kind") == "table")
    assert table_links["row_index"].null_count() == 0 and table_links["relation"].null_count() == 0


def _cut_dump(tmp_path: Path, fraction: float) -> Path:
    data = ENWIKI_SAMPLE.read_bytes()
    cut = tmp_path / "cut.xml.bz2"
    cut.write_bytes(data[: int(len(data) * fraction)])
    return cut


def test_xml_that_breaks_off_keeps_all_complete_pages(tmp_path: Path) -> None:
    cut = _cut_dump(tmp_path, 0.5)
    summary = ingest_wikipedia(cut, tmp_path / "out", WikipediaIngestOptions(workers=1, max_error_rate=None))
    readable = bz2.BZ2Decompressor().decompress(cut.read_bytes())
    complete_ids = [
        int(m)
        for m in re.findall(
            rb"<page>\s*<title>[^<]*</title>\s*<ns>0</ns>\s*<id>(\d+)</id>",
            readable[: readable.rfind(b"</page>")],
        )
    ]
    pages = pl.read_parquet(tmp_path / "out" / "pages")
    assert pages["page_id"].to_list() == complete_ids
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine")
    assert set(quarantine["error_type"]) == {"IncompletePage", "TruncatedArchive"}
    incomplete = quarantine.filter(pl.col("error_type") == "IncompletePage").to_dicts()[0]
    assert incomplete["byte_offset"] == readable.rfind(b"<page>")
    assert summary.records_written == len(complete_ids)


def test_malformed_page_is_quarantined_and_its_neighbours_kept(tmp_path: Path) -> None:
    xml = bz2.decompress(ENWIKI_SAMPLE.read_bytes())
    start = xml.index(b"<title>Albert Einstein</title>")
    broken = (
        xml[:start]
        + b"<title>Albert Einstein</titel>"
        + xml[start + len(b"<title>Albert Einstein</title>") :]
    )
    dump = tmp_path / "broken.xml"
    dump.write_bytes(broken)
    ingest_wikipedia(dump, tmp_path / "out", WikipediaIngestOptions(workers=1, max_error_rate=0.05))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").to_dicts()
    assert [q["error_type"] for q in quarantine] == ["MalformedPage"]
    assert quarantine[0]["byte_offset"] == broken.rfind(b"<page>", 0, start)
    titles = set(pl.read_parquet(tmp_path / "out" / "pages")["title"])
    assert "Albert Einstein" not in titles and {"Albania", "Afghanistan"} <= titles


def test_a_page_without_its_closing_or_opening_tag_costs_only_itself(tmp_path: Path) -> None:
    """Issue 17, found by tests/fuzz: a page that lost its '</page>' swallowed the next page (both
    quarantined as one malformed page), and a page whose '<page>' was damaged vanished without a trace."""
    xml = bz2.decompress(ENWIKI_SAMPLE.read_bytes())
    unclosed = xml.index(b"</page>", xml.index(b"<title>Albert Einstein</title>"))
    xml = xml[:unclosed] + xml[unclosed + len(b"</page>") :]
    opened = xml.rindex(b"<page>", 0, xml.index(b"<title>AfghanistanPeople</title>"))
    xml = xml[:opened] + b"<pag>" + xml[opened + len(b"<page>") :]
    dump = tmp_path / "tags.xml"
    dump.write_bytes(xml)
    summary = ingest_wikipedia(dump, tmp_path / "out", WikipediaIngestOptions(workers=1, max_error_rate=None))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine").sort("byte_offset").to_dicts()
    assert [(q["error_type"], q["record_id"]) for q in quarantine] == [
        ("IncompletePage", "AfghanistanPeople"),
        ("IncompletePage", "Albert Einstein"),
    ]
    stray_close = xml.index(b"</page>", opened)
    assert [q["byte_offset"] for q in quarantine] == [stray_close, xml.rindex(b"<page>", 0, unclosed)]
    assert "no <page> before it" in quarantine[0]["error"] and "no </page>" in quarantine[1]["error"]
    expected = {p["title"] for p in _dump_pages(ENWIKI_SAMPLE) if p["ns"] == 0}
    titles = set(pl.read_parquet(tmp_path / "out" / "pages")["title"])
    assert titles == expected - {"Albert Einstein", "AfghanistanPeople"}
    assert "Afghanistan" in titles  # the page after the unclosed one
    assert summary.records_read == summary.records_written + summary.records_skipped + 2


def test_an_oversized_page_without_its_end_does_not_swallow_the_next_page() -> None:
    """Issue 17 (the fix above): the skip over an oversized page ran on to the next page's '</page>'."""
    big = b"<page><title>Big</title><text>" + b"x" * 500
    small = b"<page><title>Small</title><ns>0</ns><id>7</id></page>\n"
    pages = list(iter_raw_pages([big[:300], big[300:] + b"\n" + small], max_page_bytes=200))  # type: ignore[arg-type]
    assert [(p.offset, p.complete, p.oversized) for p in pages] == [
        (0, False, True),
        (len(big) + 1, True, False),
    ]
    assert parse_page(pages[1]).title == "Small"


@pytest.mark.parametrize("tag", [b"<page>", b"</page>"])
def test_a_run_of_stray_tags_is_cut_in_linear_time(tag: bytes) -> None:
    """Found by tests/fuzz: 200,000 stray '</page>' (or unclosed '<page>') each rescanned the buffer
    up to the next tag, and a 1.5 MB page took minutes to cut."""
    data = (
        b"<page><title>A</title><id>1</id></page>\n"
        + tag * 200_000
        + b"\n<page><title>B</title><id>2</id></page>"
    )
    chunks = [data[i : i + (1 << 20)] for i in range(0, len(data), 1 << 20)]
    started = time.perf_counter()
    pages = list(iter_raw_pages(chunks, max_page_bytes=1 << 20))  # type: ignore[arg-type]
    assert time.perf_counter() - started < 10  # about 0.3 s; the quadratic cut took minutes
    assert len(pages) == 200_002 and pages[-1].complete and parse_page(pages[-1]).title == "B"


def test_an_id_holding_elements_is_a_malformed_page_not_a_shorter_id() -> None:
    """Issue 17, found by tests/fuzz: '<id>4<a/>36</id>' was read as page id 4."""
    with pytest.raises(ValueError, match="<id> holds elements where text belongs"):
        parse_page(RawPage(0, b"<page><title>T</title><ns>0</ns><id>4<a/>36</id></page>"))
    assert parse_page(RawPage(0, b"<page><title>T</title><ns>0</ns><id>436</id></page>")).page_id == 436


def test_broken_wikitext_is_reported_and_the_rest_of_the_page_kept(tmp_path: Path) -> None:
    xml = bz2.decompress(ENWIKI_TABLES.read_bytes())
    # Cut the closing '|}' of the first table of one page and leave an infobox unclosed.
    target = xml.index(b"<title>Economy of Estonia</title>")
    close = xml.index(b"|}", target)
    text_start = xml.index(b'<text xml:space="preserve">', target) + len(b'<text xml:space="preserve">')
    broken = (
        xml[:text_start] + b"{{Infobox broken\n| key = value\n" + xml[text_start:close] + xml[close + 2 :]
    )
    dump = tmp_path / "broken.xml"
    dump.write_bytes(broken)
    summary = ingest_wikipedia(dump, tmp_path / "out", WikipediaIngestOptions(workers=1, max_error_rate=None))
    quarantine = pl.read_parquet(tmp_path / "out" / "quarantine")
    assert quarantine.height >= 2 and set(quarantine["record_id"]) == {"Economy of Estonia"}
    assert all(t.startswith("Wikitext:") for t in quarantine["error_type"])
    assert quarantine["char_offset"].null_count() == 0
    passages = pl.read_parquet(tmp_path / "out" / "passages").filter(
        pl.col("page_title") == "Economy of Estonia"
    )
    assert passages.height > 5, "the good paragraphs of the broken page are still written"
    assert summary.counts["pages"] == 5


def test_error_rate_limit(tmp_path: Path) -> None:
    cut = _cut_dump(tmp_path, 0.1)
    with pytest.raises(ErrorRateExceeded, match="quarantined"):
        ingest_wikipedia(cut, tmp_path / "out", WikipediaIngestOptions(workers=1, max_error_rate=0.0))
    assert (tmp_path / "out" / "quarantine").is_dir()
