"""Safe Tantivy queries from user text: users type questions, not Tantivy query syntax.

Every character that means something to Tantivy's parser (quotes, colons, parentheses, +, -, ^, ~,
*, brackets, backslashes) is removed and words are lowercased (so AND/OR/NOT are plain words, not
operators). The parser then only ever sees a list of words, each one term, and cannot fail or be
steered by the input: the query is always an OR of single terms over the fields asked for.
Results are cut to k with ties in a fixed order (``top_docs``), so rankings do not depend on how the
index was written.
"""

from __future__ import annotations

import re
from typing import Any

WORD = re.compile(r"[^\W_]+", re.UNICODE)
"""Letters and digits, not the underscore: every character of a word is one the field's tokenizer keeps
inside a token, so each word reaches the parser as exactly one term. With ``\\w`` a word such as
``snake_case`` was split by the tokenizer and parsed into a phrase query: the user's text chose the
query's type."""


def safe_query_text(text: str) -> str:
    """The words of ``text``, lowercased and space-joined; '' when there are none."""
    return " ".join(WORD.findall(text.lower()))


TIE_MARGIN = 64
"""Extra hits read past k so that documents tied with the k-th are all seen before the cut."""


def top_docs(searcher: Any, query: Any, k: int, id_field: str) -> list[tuple[float, dict[str, list[Any]]]]:
    """The best ``k`` documents as (score, stored fields), equal scores ordered by ``id_field``.

    Tantivy breaks score ties by document address, and an index written by several threads places
    documents in segments in whatever order the threads took them, so tied hits (common: field norms
    are quantized, short table rows often score alike) come back in a different order from one build
    of the same evidence to the next. Ordering ties by a stored id makes every ranking a function of
    the evidence alone.
    """
    hits = searcher.search(query, k + TIE_MARGIN).hits
    docs = [(score, searcher.doc(address)) for score, address in hits]
    docs.sort(key=lambda hit: (-hit[0], hit[1][id_field][0]))
    return docs[:k]
