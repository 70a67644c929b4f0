"""How markup becomes text, links and infobox fields (small hand-written pages)."""

from __future__ import annotations

from ingest.parquet_sink import rows_to_table
from ingest.wikitext import parse_article
from schemas.wikipedia import Passage

LONG = "This sentence makes the paragraph long enough to be kept."


def _passage_texts(text: str) -> list[str]:
    return [passage["text"] for passage in parse_article(1, "T", text).passages]


def test_inline_templates_keep_their_visible_text() -> None:
    text = (
        "The town lies {{convert|5|km}} away, {{convert|3|to|4|mi}} by road, and is called "
        "{{lang|fr|la ville}} or {{lang-de|die Stadt}}; {{nowrap|it is [[Big]]}}. Founded "
        "{{start date|1901|5|2}}.{{citation needed|date=May 2016}}<ref>{{cite web|url=x}}</ref>"
    )
    assert _passage_texts(text) == [
        "The town lies 5 km away, 3 to 4 mi by road, and is called la ville or die Stadt; "
        "it is Big. Founded May 2, 1901."
    ]


def test_markup_is_stripped_and_lists_stay_lines() -> None:
    text = (
        f"'''Bold''' and ''italic'' text, {LONG}<ref name=a/>\n\n"
        "[[File:X.jpg|thumb|A caption with [[Link]]]]\n"
        "Items are:\n* first [[item]]\n* second item\n\n"
        "Short.\n\n"
        "[[Category:Things]]\n[[fr:Chose]]"
    )
    article = parse_article(1, "T", text)
    assert [passage["text"] for passage in article.passages] == [
        f"Bold and italic text, {LONG}",
        "Items are:\nfirst item\nsecond item",
    ]
    assert article.passages[1]["links"] == [{"target": "Item", "anchor": "item"}]
    assert article.categories == ["Things"]
    assert {row["target_title"] for row in article.links} == {"Item"}


def test_sections_build_the_path_and_reference_sections_are_skipped() -> None:
    text = (
        f"Lead. {LONG}\n== History ==\n{LONG}\n=== Early ===\nEarly. {LONG}\n== Later ==\nLater. {LONG}\n"
        f"== References ==\n{LONG}\n== External links ==\n* [http://x.org Site] {LONG}\n"
        "[[Category:Kept even here]]"
    )
    article = parse_article(1, "T", text)
    assert [(p["section_path"], p["order"]) for p in article.passages] == [
        ([], 0),
        (["History"], 1),
        (["History", "Early"], 2),
        (["Later"], 3),
    ]
    assert article.categories == ["Kept even here"]


def test_links_anchor_trail_fragment_and_non_article_targets() -> None:
    text = (
        f"See [[foo_bar#Early life|early life]], [[Cat]]s, [[Paris, Texas|]], [[#Section|here]], "
        f"[[wikt:word|word]], [[:Category:Physics|physics]] and [[Help:Editing]]. {LONG}"
    )
    article = parse_article(7, "T", text)
    passage = article.passages[0]
    assert passage["text"].startswith("See early life, Cats, Paris, here, word, physics and Help:Editing.")
    assert passage["links"] == [
        {"target": "Foo bar", "anchor": "early life"},
        {"target": "Cat", "anchor": "Cats"},
        {"target": "Paris, Texas", "anchor": "Paris"},
    ]
    assert (article.links[0]["target_title"], article.links[0]["target_fragment"]) == (
        "Foo bar",
        "Early life",
    )
    assert article.links[0]["source_page_id"] == 7
    assert article.categories == []


def test_nested_infobox_gets_its_own_index_and_lists_join() -> None:
    text = (
        "{{Infobox_person <!-- comment -->\n"
        "| name = Jane Doe\n"
        "| occupation = {{ubl|[[Singer]]|Songwriter}}\n"
        "| known_for = {{plainlist|\n* [[Song A]]\n* Song B\n}}\n"
        "| other = one<br />two<br/>three\n"
        "| empty = \n"
        "| module = {{Infobox musical artist|embed=yes\n| genre = [[Rock music|Rock]]}}\n"
        "}}\n"
        f"Jane Doe is a singer. {LONG}"
    )
    article = parse_article(1, "Jane Doe", text)
    fields = {(row["infobox_index"], row["key"]): row for row in article.infobox_fields}
    assert set(fields) == {
        (0, "name"),
        (0, "occupation"),
        (0, "known_for"),
        (0, "other"),
        (1, "embed"),
        (1, "genre"),
    }
    assert fields[(0, "name")]["template"] == "Infobox person"
    assert fields[(1, "genre")]["template"] == "Infobox musical artist"
    assert fields[(0, "occupation")]["value_text"] == "Singer, Songwriter"
    assert fields[(0, "known_for")]["value_text"] == "Song A, Song B"
    assert fields[(0, "other")]["value_text"] == "one, two, three"
    assert fields[(1, "genre")]["value_links"] == [{"target": "Rock music", "anchor": "Rock"}]
    genre_link = next(row for row in article.links if row["target_title"] == "Rock music")
    assert (genre_link["source_kind"], genre_link["source_index"], genre_link["relation"]) == (
        "infobox",
        1,
        "genre",
    )
    assert [passage["text"] for passage in article.passages] == [f"Jane Doe is a singer. {LONG}"]


def test_table_header_defaults_caption_and_row_header_cells() -> None:
    text = (
        "== Results ==\n"
        '{| class="wikitable"\n|+ Results of {{nowrap|the [[Cup]]}}<ref>x</ref>\n'
        "|-\n! Team !! Points\n|-\n! [[Alpha FC]]\n| 10 || {{sort|b|extra}}\n|-\n| || \n|-\n"
        "! Team !! Points\n|-\n| Beta || 7 || {{flagicon|FRA}} {{small|note}}\n|}"
    )
    article = parse_article(1, "T", text)
    rows = article.table_rows
    assert [row["caption"] for row in rows] == ["Results of the Cup"] * 2
    assert [[(c["header"], c["text"]) for c in row["cells"]] for row in rows] == [
        [("Team", "Alpha FC"), ("Points", "10"), ("Column 3", "extra")],
        [("Team", "Beta"), ("Points", "7"), ("Column 3", "note")],
    ]
    assert [row["row_index"] for row in rows] == [0, 1]
    assert rows[0]["section_path"] == ["Results"]
    assert rows[0]["cells"][0]["links"] == [{"target": "Alpha FC", "anchor": "Alpha FC"}]


def test_an_entity_naming_a_surrogate_becomes_the_replacement_character() -> None:
    """Issue 17, found by tests/fuzz: '&#xD800;' rendered as a lone surrogate, which no UTF-8 file
    can hold, so the ingest failed writing the rows of the whole dump."""
    article = parse_article(1, "T", f"{LONG} Odd &#xD800; and &#56319; entities, a fine &eacute;.")
    assert _passage_texts(f"{LONG} Odd &#xD800;.") == [f"{LONG} Odd \ufffd."]
    assert article.passages[0]["text"] == f"{LONG} Odd \ufffd and \ufffd entities, a fine \u00e9."
    assert rows_to_table(article.passages, Passage).num_rows == 1  # what the ingest's sink does with them
