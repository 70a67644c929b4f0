"""Broken wikitext: problems are reported with their offsets and the good parts still come out."""

from __future__ import annotations

import pytest

import ingest.wikitext.tables as tables_module
from ingest.wikitext import parse_article
from ingest.wikitext.nesting import MAX_DEPTH, too_deep

GOOD_1 = "The first paragraph is perfectly fine and links to [[Paris]]."
GOOD_2 = "The second paragraph is fine as well and mentions [[Lyon|a city]]."
GOOD_3 = "A third paragraph follows the broken table."

BROKEN = f"""{GOOD_1}

{{{{Infobox person
| name = Broken
| birth_place = [[Nowhere]]

{GOOD_2}

{{| class="wikitable"
! A !! B
|-
| 1 || 2

{GOOD_3}
"""


def test_unclosed_template_and_table_are_reported_with_offsets() -> None:
    article = parse_article(1, "Broken", BROKEN)
    problems = {problem.kind: problem for problem in article.problems}
    assert set(problems) == {"unclosed_template", "unclosed_table"}
    assert problems["unclosed_template"].char_offset == BROKEN.index("{{Infobox")
    assert problems["unclosed_table"].char_offset == BROKEN.index('{| class="wikitable"')
    assert problems["unclosed_table"].excerpt.startswith('{| class="wikitable"')
    texts = [passage["text"] for passage in article.passages]
    assert GOOD_1.replace("[[Paris]]", "Paris") in texts
    assert GOOD_2.replace("[[Lyon|a city]]", "a city") in texts
    assert GOOD_3 in texts
    assert not any("{{" in text or "| name" in text or "{|" in text for text in texts)
    assert {"target": "Lyon", "anchor": "a city"} in article.passages[1]["links"]


def test_page_longer_than_max_chars_is_cut_and_reported() -> None:
    text = f"{GOOD_1}\n\n{GOOD_2}\n\n" + "Filler sentence number one. " * 50
    cut = len(GOOD_1) + 2 + len(GOOD_2) + 10
    article = parse_article(2, "Long", text, max_chars=cut)
    assert [(problem.kind, problem.char_offset) for problem in article.problems] == [("too_long", cut)]
    assert [passage["text"] for passage in article.passages][:2] == [
        GOOD_1.replace("[[Paris]]", "Paris"),
        GOOD_2.replace("[[Lyon|a city]]", "a city"),
    ]


def test_table_parser_failure_is_reported_and_other_tables_kept(monkeypatch: pytest.MonkeyPatch) -> None:
    first = '{| class="wikitable"\n! Name !! Value\n|-\n| poison || 1\n|}'
    second = '{| class="wikitable"\n! Name !! Value\n|-\n| [[Alpha]] || 2\n|}'
    text = f"{GOOD_1}\n\n{first}\n\n{second}\n\n{GOOD_3}\n"
    real_parse = tables_module.wikitextparser.parse

    def failing_parse(source: str) -> object:
        if "poison" in source:
            raise ValueError("boom")
        return real_parse(source)

    monkeypatch.setattr(tables_module.wikitextparser, "parse", failing_parse)
    article = parse_article(3, "Tables", text)
    assert [(p.kind, p.char_offset) for p in article.problems] == [("table_parse_error", text.index(first))]
    assert "boom" in article.problems[0].message
    assert [(row["table_index"], [cell["text"] for cell in row["cells"]]) for row in article.table_rows] == [
        (1, ["Alpha", "2"])
    ]
    assert article.table_rows[0]["cells"][0]["links"] == [{"target": "Alpha", "anchor": "Alpha"}]
    assert GOOD_3 in [passage["text"] for passage in article.passages]


def test_closed_table_the_tokenizer_rejects_is_still_read() -> None:
    # An indented table (":{|") is left as plain text by mwparserfromhell; it is closed, so it is
    # read from the page text instead of being reported.
    table = ':{| class="wikitable"\n! Country !! Rank\n|-\n| [[France]] || 3\n|-\n| Spain || 4\n|}'
    text = f"{GOOD_1}\n{table}\n{GOOD_3}\n\n{GOOD_2}"
    article = parse_article(4, "Indented", text)
    assert article.problems == []
    assert [[cell["text"] for cell in row["cells"]] for row in article.table_rows] == [
        ["France", "3"],
        ["Spain", "4"],
    ]
    assert [cell["header"] for cell in article.table_rows[0]["cells"]] == ["Country", "Rank"]
    texts = [passage["text"] for passage in article.passages]
    assert texts[:2] == [GOOD_1.replace("[[Paris]]", "Paris"), GOOD_3]
    assert not any("|" in text for text in texts)


@pytest.mark.parametrize(
    "text",
    [
        "",
        "{{",
        "}}",
        "{|",
        "|}",
        "[[",
        "]]",
        "[[File:x.jpg|thumb|[[a|b]]",
        "<ref>",
        "</ref>",
        "{{{1|",
        "''''",
        "==",
        "== ==\n",
        "{{Infobox|=}}",
        "{|\n|}",
        "{|\n|+\n|}",
        '{|\n| rowspan="99999" | x\n|}',
        "<!--",
        "&bogus;",
    ],
)
def test_odd_inputs_do_not_raise(text: str) -> None:
    parse_article(5, "Odd", text)


def test_a_span_of_thousands_of_digits_is_clipped_not_raised() -> None:
    """Issue 17, found by tests/fuzz: int() refuses strings of over 4300 digits, so a 'rowspan' of
    5000 nines made parse_article raise, and the ingest lost the whole page."""
    table = f'{{| class="wikitable"\n! A !! B\n|-\n| rowspan="{"9" * 5000}" | x || y\n|-\n| z\n|}}'
    article = parse_article(5, "Spans", f"{GOOD_1}\n\n{table}\n\n{GOOD_3}")
    assert [[cell["text"] for cell in row["cells"]] for row in article.table_rows] == [["x", "y"], ["x", "z"]]
    assert [passage["text"] for passage in article.passages][-1] == GOOD_3


@pytest.mark.parametrize(
    ("opener", "construct"), [("{{", "template"), ("{|\n|", "table"), ("[[", "link"), ("<div>", "tag")]
)
def test_markup_nested_deeper_than_any_wiki_renders_is_cut_there(opener: str, construct: str) -> None:
    """Issue 17, found by tests/fuzz: 60,000 unclosed '{{' (or 100,000 nested tables or <div>) kept
    mwparserfromhell busy for minutes, one page stalling an ingest worker. The page is now parsed up to the
    opener that nests deeper than MediaWiki's expansion limit, and the cut is reported there."""
    head = f"{GOOD_1}\n\n{GOOD_2}\n\n"
    text = head + opener * (MAX_DEPTH + 50) + f"\n\n{GOOD_3}\n"
    article = parse_article(6, "Deep", text)
    deep = [problem for problem in article.problems if problem.kind == "too_deep"]
    assert [problem.char_offset for problem in deep] == [len(head) + MAX_DEPTH * len(opener)]
    assert construct in deep[0].message
    texts = [passage["text"] for passage in article.passages]
    assert texts[:2] == [GOOD_1.replace("[[Paris]]", "Paris"), GOOD_2.replace("[[Lyon|a city]]", "a city")]
    assert GOOD_3 not in texts


def test_nesting_as_deep_as_the_limit_or_stray_closers_are_not_cut() -> None:
    balanced = "{{a|" * MAX_DEPTH + "x" + "}}" * MAX_DEPTH
    assert too_deep(balanced) is None
    assert too_deep("}}" * 500 + "]]" * 500 + "|}" * 500 + "{{x}}") is None
    assert too_deep("{{a}}" * 10_000) is None  # many templates, one level deep
    assert too_deep("a<br>b<p>c<li>d<ref name=x/>" * 500) is None  # tags HTML lets stand unclosed
    assert too_deep("[[a|" * (MAX_DEPTH + 1)) == ((MAX_DEPTH) * 4, "link")
