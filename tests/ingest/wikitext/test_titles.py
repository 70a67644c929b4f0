"""Link-target normalization must match how MediaWiki resolves titles, or title joins miss."""

from __future__ import annotations

import pytest

from ingest.wikitext.titles import (
    category_name,
    classify_target,
    is_category,
    normalize_title,
    wiki_url_to_title,
)


@pytest.mark.parametrize(
    ("raw", "expected"),
    [
        ("albert_einstein#Early life", ("Albert einstein", "Early life")),
        ("  Foo  bar ", ("Foo bar", None)),
        ("Foo_bar#Early_life", ("Foo bar", "Early life")),
        (":Category:X", ("Category:X", None)),
        ("category:foo", ("Category:Foo", None)),
        ("CATEGORY : foo bar", ("Category:Foo bar", None)),
        ("wp:NPOV", ("Wikipedia:NPOV", None)),
        ("template:Infobox", ("Template:Infobox", None)),
        ("AT&amp;T", ("AT&T", None)),
        ("Caf%C3%A9", ("Café", None)),
        ("Foo#", ("Foo", None)),
        ("iPod", ("IPod", None)),
        ("ß-Test", ("ß-Test", None)),
        ("Ys: The Vanished Omens", ("Ys: The Vanished Omens", None)),
    ],
)
def test_normalize_title(raw: str, expected: tuple[str, str | None]) -> None:
    assert normalize_title(raw) == expected


@pytest.mark.parametrize(
    "raw",
    [
        "fr:Paris",
        ":fr:Paris",
        "wikt:run",
        "w:Foo",
        "commons:Main Page",
        "File:x.jpg",
        "Image:x.png",
        "media:Sound.ogg",
        "#History",
        "#",
        "",
        "   ",
        "Foo[bar]",
        "{{PAGENAME}}",
        "Category:",
    ],
)
def test_normalize_title_rejects_non_articles(raw: str) -> None:
    assert normalize_title(raw) is None


def test_classify_target_tells_categorization_from_category_link() -> None:
    membership = classify_target("Category:1879 births")
    assert (membership.kind, membership.leading_colon) == ("category", False)
    link = classify_target(":Category:1879 births")
    assert (link.kind, link.leading_colon, link.title) == ("category", True, "Category:1879 births")
    assert classify_target("Image:x.png").kind == "media"
    assert classify_target("de:Berlin").kind == "language"
    assert classify_target("wikt:run").kind == "interwiki"


def test_is_category_and_category_name() -> None:
    assert is_category("Category:Physics")
    assert not is_category("Physics")
    assert category_name("Category:1879 births") == "1879 births"


@pytest.mark.parametrize(
    ("url", "expected"),
    [
        ("/wiki/Eek!_The_Cat", "Eek! The Cat"),
        ("/wiki/Caf%C3%A9", "Café"),
        ("/wiki/AC/DC", "AC/DC"),
        ("https://en.wikipedia.org/wiki/Albert_Einstein#Early_life", "Albert Einstein"),
        ("/wiki/Category:Physics", "Category:Physics"),
        ("/wiki/File:X.jpg", None),
        ("/w/index.php?title=Foo", None),
        ("Foo", None),
    ],
)
def test_wiki_url_to_title(url: str, expected: str | None) -> None:
    assert wiki_url_to_title(url) == expected


def test_the_plain_url_fast_path_agrees_with_the_full_resolution() -> None:
    """Every cell link and passage key of the OTT-QA slice, and URLs at the fast path's edges."""
    import gzip
    import json

    from ingest.wikitext.titles import _plain_wiki_path, resolve_wiki_url, wiki_url_titles
    from tests.conftest import OTTQA

    with gzip.open(OTTQA / "tables.json.gz", "rt") as t, gzip.open(OTTQA / "passages.json.gz", "rt") as p:
        tables, passages = json.load(t), json.load(p)
    urls = set(passages) | {
        u for table in tables.values() for row in table["data"] for _, links in row for u in links
    }
    edges = {
        "/wiki/a__b",
        "/wiki/_a",
        "/wiki/a_",
        "/wiki/a b",
        "/wiki/a  b",
        "/wiki/ß",
        "/wiki/édith",
        "/wiki/x\\y",
    }
    edges |= {
        "/wiki/a:b",
        "/wiki/talk:b",
        "/wiki/a%20b",
        "/wiki/a&amp;b",
        "/wiki/a?x=1",
        "/wiki/",
        " /wiki/A",
        "/wiki/A ",
    }
    edges |= {
        "/wiki/a#b",
        "/wiki/[x]",
        "/wiki/.",
        "/wiki/fr:Paris",
        "/wiki/1_E6_m",
        "/wiki/a\tb",
        "/wiki/Foo_(band)",
    }
    fast = [u for u in urls | edges if _plain_wiki_path(u)]
    assert len(fast) > 0.8 * len(urls)  # the fast path is the common case
    expected = {u: resolve_wiki_url(u) for u in urls | edges}
    assert {u: wiki_url_to_title(u) for u in urls | edges} == expected
    assert wiki_url_titles(urls | edges) == expected  # the bulk path too
