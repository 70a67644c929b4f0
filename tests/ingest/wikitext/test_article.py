"""parse_article on real sample pages: expected values were read off the raw wikitext by hand."""

from __future__ import annotations

import pytest

from ingest.wikitext import ParsedArticle, parse_article
from schemas.wikipedia import InfoboxField, Link, Passage, TableRow


def _validate_all(article: ParsedArticle) -> None:
    for row in article.passages:
        Passage.model_validate(row)
    for row in article.infobox_fields:
        InfoboxField.model_validate(row)
    for row in article.table_rows:
        TableRow.model_validate(row)
    for row in article.links:
        Link.model_validate(row)


def test_rows_match_the_schema_models(
    einstein: ParsedArticle, production_design: ParsedArticle, prison_break: ParsedArticle
) -> None:
    for article in (einstein, production_design, prison_break):
        assert article.passages and article.links
        _validate_all(article)


def test_einstein_infobox(einstein: ParsedArticle) -> None:
    fields = {row["key"]: row for row in einstein.infobox_fields}
    advisor = fields["doctoral_advisor"]
    assert advisor["template"] == "Infobox scientist"
    assert advisor["infobox_index"] == 0
    assert advisor["value_text"] == "Alfred Kleiner"
    assert advisor["value_links"] == [{"target": "Alfred Kleiner", "anchor": "Alfred Kleiner"}]
    # {{Birth date|df=yes|1879|3|14}}
    assert fields["birth_date"]["value_text"] == "14 March 1879"
    # [[Ulm]], [[Kingdom of Württemberg]], [[German Empire]]
    assert fields["birth_place"]["value_text"] == "Ulm, Kingdom of Württemberg, German Empire"
    # "[[Physics]], [[philosophy]]": anchors as written, targets first-letter uppercased
    assert fields["fields"]["value_text"] == "Physics, philosophy"
    assert [link["target"] for link in fields["fields"]["value_links"]] == ["Physics", "Philosophy"]
    # {{Plainlist|\n* [[Swiss Patent Office]] ([[Bern]]) (1902-1909)\n* [[University of Bern]] ...}}
    assert fields["workplaces"]["value_text"].startswith(
        "Swiss Patent Office (Bern) (1902\u20131909), University of Bern (1908\u20131909), "
        "University of Zurich"
    )
    assert fields["workplaces"]["value_links"][4] == {
        "target": "Karl-Ferdinands-Universität",
        "anchor": "Charles University in Prague",
    }
    # "[[Mileva Marić]]&nbsp;(1903-1919)<br />{{nowrap|[[Elsa Löwenthal]]&nbsp;(1919-1936)}}"
    assert fields["spouse"]["value_text"] == "Mileva Marić (1903\u20131919), Elsa Löwenthal (1919\u20131936)"
    links = [
        row
        for row in einstein.links
        if row["source_kind"] == "infobox" and row["relation"] == "doctoral_advisor"
    ]
    assert [(row["target_title"], row["source_index"]) for row in links] == [("Alfred Kleiner", 0)]


def test_einstein_lead_passage(einstein: ParsedArticle) -> None:
    lead = einstein.passages[0]
    assert lead["section_path"] == []
    assert lead["order"] == 0
    assert lead["text"].startswith("Albert Einstein (14 March 1879 \u2013 18 April 1955) was a German-born")
    assert "general theory of relativity" in lead["text"]
    assert {"target": "General theory of relativity", "anchor": "general theory of relativity"} in lead[
        "links"
    ]
    assert "{{" not in lead["text"] and "[[" not in lead["text"] and "<ref" not in lead["text"]


def test_einstein_sections_and_order(einstein: ParsedArticle) -> None:
    assert [row["order"] for row in einstein.passages] == list(range(len(einstein.passages)))
    paths = [row["section_path"] for row in einstein.passages]
    assert ["Biography", "Early life and education"] in paths
    skipped = {"References", "External links", "See also", "Notes", "Further reading"}
    assert not any(skipped & set(path) for path in paths)
    assert all(len(row["text"]) >= 20 for row in einstein.passages)


def test_einstein_passage_links_are_link_rows(einstein: ParsedArticle) -> None:
    passage_links = [row for row in einstein.links if row["source_kind"] == "passage"]
    by_order = {row["order"]: row["links"] for row in einstein.passages}
    assert len(passage_links) == sum(len(links) for links in by_order.values())
    first = passage_links[0]
    assert first["source_index"] == 0 and first["relation"] is None and first["row_index"] is None
    assert by_order[0][0]["target"] == first["target_title"]


def test_einstein_categories(einstein: ParsedArticle) -> None:
    assert "1879 births" in einstein.categories
    assert "Nobel laureates in Physics" in einstein.categories
    assert not any(name.startswith("Category:") for name in einstein.categories)
    assert einstein.problems == []


def test_production_design_rowspan_repeats_year(production_design: ParsedArticle) -> None:
    # ===1920s===: "| rowspan=5 ... | [[1928 in film|1927/28]] <br /> {{small|[[1st Academy Awards|(1st)]]}}"
    # on a row of its own, then four nominee rows.
    rows = [row for row in production_design.table_rows if row["table_index"] == 1]
    assert rows[0]["section_path"] == ["Best Interior Decoration", "1920s"]
    assert rows[0]["table_id"] == "Academy_Award_for_Best_Production_Design_1"
    assert [cell["header"] for cell in rows[0]["cells"]] == ["Year", "Interior decorator", "Film"]
    table = [[cell["text"] for cell in row["cells"]] for row in rows]
    assert table[:4] == [
        ["1927/28 (1st)", "William Cameron Menzies", "The Dove"],
        ["1927/28 (1st)", "William Cameron Menzies", "Tempest"],
        ["1927/28 (1st)", "Harry Oliver", "Seventh Heaven"],
        ["1927/28 (1st)", "Rochus Gliese", "Sunrise"],
    ]
    # "| rowspan=7 ... 1928/29": six nominee rows; Menzies spans Alibi and The Awakening.
    assert [row[0] for row in table[4:10]] == ["1928/29 (2nd)"] * 6
    assert table[7] == ["1928/29 (2nd)", "William Cameron Menzies", "The Awakening"]
    assert [row["row_index"] for row in rows] == list(range(len(rows)))
    year_links = rows[1]["cells"][0]["links"]
    assert [link["target"] for link in year_links] == ["1928 in film", "1st Academy Awards"]


def test_production_design_table_links(production_design: ParsedArticle) -> None:
    links = [
        row
        for row in production_design.links
        if row["source_kind"] == "table" and row["source_index"] == 1 and row["row_index"] == 0
    ]
    assert ("The Dove (1927 film)", "Film", "The Dove") in {
        (row["target_title"], row["relation"], row["anchor_text"]) for row in links
    }


def test_prison_break_stacked_header(prison_break: ParsedArticle) -> None:
    # "! ... rowspan="2"|Actor !! rowspan="2"|Character !! colspan="5"|Appearances", then S1..S5.
    rows = [row for row in prison_break.table_rows if row["table_index"] == 0]
    headers = [cell["header"] for cell in rows[0]["cells"]]
    assert headers == ["Actor", "Character"] + [f"Appearances / S{season}" for season in range(1, 6)]
    by_actor = {row["cells"][0]["text"]: [cell["text"] for cell in row["cells"]] for row in rows}
    # "| colspan="5" {{CMain}}": the colspan sits before a template that supplies the cell's pipe.
    assert by_actor["Dominic Purcell"] == ["Dominic Purcell", "Lincoln Burrows"] + ["Main"] * 5
    assert by_actor["Robin Tunney"] == ["Robin Tunney", "Veronica Donovan", "Main", "Main", "", "", ""]
    assert by_actor["Peter Stormare"][2:4] == ["Main", "Recurring"]
    actor_link = next(
        row
        for row in prison_break.links
        if row["source_kind"] == "table" and row["target_title"] == "Dominic Purcell"
    )
    assert actor_link["relation"] == "Actor" and actor_link["row_index"] == 0


def test_caption_is_clean_text(sample_pages: dict[str, tuple[int, str]]) -> None:
    page_id, text = sample_pages["Alabama"]
    article = parse_article(page_id, "Alabama", text)
    captions = {row["caption"] for row in article.table_rows}
    # "|+ style="font-size:100%" | Religious affiliation in Alabama (2014)<ref>[http://...]</ref>"
    assert "Religious affiliation in Alabama (2014)" in captions
    assert article.problems == []


@pytest.mark.parametrize("fraction", [i / 20 for i in range(1, 20)])
def test_truncated_pages_never_raise(sample_pages: dict[str, tuple[int, str]], fraction: float) -> None:
    """Cutting a real page anywhere leaves unclosed markup; it must be reported, not raised."""
    page_id, text = sample_pages["Albert Einstein"]
    cut = text[: int(len(text) * fraction)]
    article = parse_article(page_id, "Albert Einstein", cut)
    _validate_all(article)
    for problem in article.problems:
        assert 0 <= problem.char_offset < len(cut)
        assert len(problem.excerpt) <= 300
