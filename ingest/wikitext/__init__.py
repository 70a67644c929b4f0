"""Wikitext of one article → passage, infobox, table and link rows (see ``article.parse_article``)."""

from ingest.wikitext.article import DEFAULT_MAX_CHARS, ParsedArticle, parse_article
from ingest.wikitext.context import WikitextProblem
from ingest.wikitext.titles import (
    category_name,
    classify_target,
    is_category,
    normalize_title,
    wiki_url_to_title,
)

__all__ = [
    "DEFAULT_MAX_CHARS",
    "ParsedArticle",
    "WikitextProblem",
    "category_name",
    "classify_target",
    "is_category",
    "normalize_title",
    "parse_article",
    "wiki_url_to_title",
]
