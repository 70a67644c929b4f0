"""What a question asks of the row a table-sql ranking picked: a named column's cell, the row's subject,
a date, or a full name.

"What is the second-to-last *club*" asks for the club column's cell; "which *natural park* has the largest
area" over "… / Natural Parks" asks for the row's subject; "*When* was the oldest player born?" for the
date the rows were ranked by; "the *full name* of the youngest player" for the name the lead of the row's
page opens with. Rules over the question's words: no model, microseconds.
"""

from __future__ import annotations

import re

from query.text import STOPWORDS, fold
from query.understand.table_ops import IMPLIED, ORDINALS, TableOp

SKIP_HEAD = frozenset(
    "is was are were the a an to from last of most least highest lowest largest smallest".split()  # noqa: SIM905
)
"""Words between "which/what" and the noun a question asks for."""
BE = frozenset(["is", "was", "are", "were"])
ROW_VERBS = frozenset({"won", "win", "wins", "scored", "holds", "held", "finished", "played"})
"""Verbs after "which <noun>" that are not stop words: "which team *won* the most"."""
_FULL_NAME = re.compile(r"\bfull (?:name|title)\b", re.I)
_DATE_ASKED = re.compile(r"^\s*when\b|\b(?:birth\s*date|date of birth|birthday)\b", re.I)


def head_noun(question: str, op: TableOp) -> str | None:
    """The noun a question asks for: "What is the second-to-last *club*", "Which *team*"; for "who",
    the answer noun of the operation ("who was the oldest *player*")."""
    words = [w for w in question.casefold().replace("-", " ").replace("?", " ").split() if w]
    if not words:
        return None
    if words[0] == "who":  # "who was the oldest player" is the row; "who founded the town …" is not
        return op.target[0] if op.target and words[1:2] and words[1] in BE else None
    if words[0] not in ("which", "what"):
        return None
    for word in words[1:9]:
        if word in SKIP_HEAD or word in ORDINALS or word in IMPLIED:
            continue
        return word
    return None


def asks_a_date(question: str) -> bool:
    """ "When was …", "What is the birthdate of …": the answer is a date, not a row's subject."""
    return _DATE_ASKED.search(question) is not None


def asks_full_name(question: str) -> bool:
    return _FULL_NAME.search(question) is not None


def names_the_rows(question: str, head: str, title: str) -> bool:
    """ "Which *natural park* has the largest area?" over "… / Natural Parks": the question's noun is
    what the table lists, so the row's subject cell is the answer. The noun is the head with the word
    after it when that is not a verb ("protected landscape", "natural park"), matched at a word start of
    the title, so "park" alone does not match "Parker"."""
    words = [w for w in fold(question).replace("-", " ").split() if w.isalpha()]
    if head not in words:
        return False
    at = words.index(head)
    after = words[at + 1] if at + 1 < len(words) else ""
    phrase = [head, after] if after and after not in STOPWORDS and after not in ROW_VERBS else [head]
    return re.search(rf"(?<!\w){re.escape(' '.join(phrase))}", fold(title)) is not None
