"""Safe Tantivy queries from user text: users type questions, not Tantivy query syntax.

Every character that means something to Tantivy's parser (quotes, colons, parentheses, +, -, ^, ~,
*, brackets) is removed and words are lowercased (so AND/OR/NOT are plain words, not operators).
The parser then only ever sees a list of words and cannot fail or be steered by the input.
"""

from __future__ import annotations

import re

WORD = re.compile(r"\w+", re.UNICODE)


def safe_query_text(text: str) -> str:
    """The words of ``text``, lowercased and space-joined; '' when there are none."""
    return " ".join(WORD.findall(text.lower()))
