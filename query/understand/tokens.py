"""The words of a question as the understanding rules see them: tokens with offsets, and content words.

A token keeps its character offsets (a mention must point back into the question), its spelling's
verdict (capitalized, a number, a plain word) and the punctuation before it, which tells a sentence's
end from an abbreviation's period. ``content_words`` is the other view: a phrase's words as the alias
index normalizes them, without function words, which relation phrases, property names and entity
descriptions are matched on.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from index.aliases import normalize_mention
from query.lexicon import FUNCTION_WORDS, NAME_ABBREVIATIONS

TOKEN = re.compile(r"\d+(?:[,.]\d+)+|\w(?:[\w'\u2019.&\-\u2013]*\w)?", re.UNICODE)
"""Words, with inner dots, hyphens, en dashes and apostrophes kept ("A.F.C", "Chao-chun", "9,566")."""

TokenKind = Literal["cap", "num", "word"]


@dataclass(frozen=True)
class Token:
    """A word of the question with its character offsets and what its spelling says about it."""

    text: str
    lower: str
    start: int
    end: int
    kind: TokenKind
    gap: str  # non-space characters between the previous token and this one
    initial: bool  # first word of a sentence, so capitalized whatever it is


def tokenize(question: str) -> list[Token]:
    """The words of a question, in order; punctuation is kept only as each word's ``gap``."""
    tokens: list[Token] = []
    prev_end = 0
    for m in TOKEN.finditer(question):
        text, end = m.group(), m.end()
        if len(text) > 3 and text[-2:].lower() in ("'s", "\u2019s"):
            text, end = text[:-2], end - 2  # a possessive: "Aristotle's father" names Aristotle
        gap = question[prev_end : m.start()].strip()
        initial = not tokens or "!" in gap or "?" in gap or ("." in gap and not ends_abbreviation(tokens[-1]))
        if text[0].isdigit():
            kind: TokenKind = "num"
        elif text[0].isupper() or any(c.isupper() for c in text[1:]):
            kind = "cap"  # "Belgium", "iPhone"
        else:
            kind = "word"
        tokens.append(Token(text, text.lower(), m.start(), end, kind, gap, initial))
        prev_end = end
    return tokens


def ends_abbreviation(token: Token) -> bool:
    """Whether a period after this token ends an abbreviation ("Jr.", "U.S.") rather than a sentence."""
    return (
        token.lower in NAME_ABBREVIATIONS
        or "." in token.text
        or (token.kind == "cap" and len(token.text) == 1)
    )


def singular(word: str) -> str:
    """A lower-case English plural made singular by rule ("cities" -> "city"; "status" stays)."""
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def content_words(text: str) -> list[str]:
    """The words of ``text`` as the alias index normalizes them, without ``FUNCTION_WORDS``, in order.

    Not ``query.text.search_words``: that one folds tokens for matching evidence, keeps numbers apart
    from words and drops another stopword list; this one is what relation phrases, property names and
    entity descriptions are compared on (stemmed by the caller when it needs to).
    """
    return [w for w in normalize_mention(text).split() if w not in FUNCTION_WORDS]
