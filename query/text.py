"""Small text helpers the query stages share: folding, tokens, and the words a search matches on."""

from __future__ import annotations

import re
import unicodedata

from query.lexicon import SEARCH_STOPWORDS

# moved: query.lexicon.SEARCH_STOPWORDS; kept for query/modes/table_sql.py until the lead's refactor lands
STOPWORDS = SEARCH_STOPWORDS

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


def search_words(text: str) -> list[str]:
    """Folded tokens a search matches question and evidence on: no stopwords, no one-letter words, but
    numbers kept ("2015", "5"). Not ``query.understand.tokens.content_words``, which keeps a phrase's
    words as the alias index normalizes them, for relation and property matching."""
    return [t for t in tokens(text) if t not in SEARCH_STOPWORDS and (len(t) > 1 or t.isdigit())]


# moved: query.text.search_words (renamed); kept for query/modes/graph_critic.py and
# query/read/llm_reader.py until the lead's refactor lands
content_words = search_words
