"""Small text helpers the query stages share: tokens, content words, stopwords."""

from __future__ import annotations

import re
import unicodedata

_STOPWORD_TEXT = """a an the of in on at to for from by with and or but is are was were be been being
has have had do does did what which who whom whose when where why how that this these those it its as into
than then there their they he she his her him i you we our your not no yes if so such also can could would
should will shall may might must about over under after before during since until between among per via
many much more most some any each other all both either neither one ones name named called"""
STOPWORDS = frozenset(_STOPWORD_TEXT.split())

_TOKEN = re.compile(r"[0-9]+(?:[.,][0-9]+)*|[^\W\d_]+", re.UNICODE)


def fold(text: str) -> str:
    """Lowercased, accents removed: 'Zürich' and 'zurich' compare equal.

    Stage one folds every pool row's text for every question, so plain ASCII (most of it) skips the
    per-character pass: it made up a third of a question's time on the sample index.
    """
    if text.isascii():
        return text.lower()
    decomposed = unicodedata.normalize("NFKD", text)
    if decomposed.isascii():
        return decomposed.lower()
    return "".join(c for c in decomposed if not unicodedata.combining(c)).lower()


def tokens(text: str) -> list[str]:
    return _TOKEN.findall(fold(text))


def content_words(text: str) -> list[str]:
    """Tokens that carry meaning: no stopwords, no one-letter words."""
    return [t for t in tokens(text) if t not in STOPWORDS and (len(t) > 1 or t.isdigit())]
