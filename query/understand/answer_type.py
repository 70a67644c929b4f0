"""What kind of thing answers a question, read from its wh-phrase.

"Who" asks for a person, "when" for a date, "how many" for a number; "which *city*" and "what is the
*population*" name the type with a noun (``TYPE_NOUNS``). The wh-phrase's tokens are kept out of the
relation phrase and the mentions; a type noun after a copula stays in the relation ("population").
"""

from __future__ import annotations

from dataclasses import dataclass

from query.lexicon import (
    COPULAS,
    DO_WORDS,
    FUNCTION_WORDS,
    HOW_NUMBER,
    LEAD_WORDS,
    TYPE_ADJECTIVES,
    TYPE_NOUNS,
    WH_WORDS,
)
from query.understand.tokens import Token, singular
from schemas.query import AnswerType


@dataclass
class WhPhrase:
    answer_type: AnswerType
    phrase: str | None = None
    tokens: frozenset[int] = frozenset()  # the wh-phrase: out of relation and mentions
    type_tokens: frozenset[int] = frozenset()  # the answer-type noun: out of mentions


def type_noun(word: str) -> AnswerType | None:
    """The answer type a noun names, singular or plural ("cities" -> place); None for other words."""
    return TYPE_NOUNS.get(word) or TYPE_NOUNS.get(singular(word))


def wh_phrase(tokens: list[Token]) -> WhPhrase:
    """What kind of thing answers the question, read from its wh-phrase ("which *city*", "how many")."""
    n = len(tokens)
    index = _wh_index(tokens)
    if index is None:
        if n and tokens[0].lower in COPULAS | DO_WORDS | {"be"}:
            either = any(t.lower == "or" for t in tokens)
            return WhPhrase("entity" if either else "other")  # "Is X or Y the ...?" picks one of them
        return WhPhrase("other")
    wh = tokens[index].lower
    own = frozenset({index})
    if wh in {"who", "whom", "whose"}:
        return WhPhrase("person", tokens=own)
    if wh == "when":
        return WhPhrase("date", tokens=own)
    if wh == "where":
        return WhPhrase("place", tokens=own)
    if wh == "why":
        return WhPhrase("other", tokens=own)
    if wh == "how":
        return _how_phrase(tokens, index)
    nxt = tokens[index + 1] if index + 1 < n else None
    if nxt is not None and nxt.lower in COPULAS:
        return _copula_phrase(tokens, index)
    if nxt is None or nxt.lower in DO_WORDS:
        return WhPhrase("other", tokens=own)
    return _noun_phrase(tokens, index)


def _how_phrase(tokens: list[Token], index: int) -> WhPhrase:
    """ "how many *people*", "how many academic staff", "how much", "how old": a number."""
    n = len(tokens)
    own = frozenset({index})
    nxt = tokens[index + 1] if index + 1 < n else None
    if nxt is None or nxt.lower not in HOW_NUMBER:
        return WhPhrase("other", tokens=own)
    phrase_tokens = own | {index + 1}
    noun = tokens[index + 2] if index + 2 < n else None
    if (
        nxt.lower in {"many", "much"}
        and noun is not None
        and noun.kind == "word"
        and noun.lower not in FUNCTION_WORDS
    ):
        nouns = [index + 2]
        after = tokens[index + 3] if index + 3 < n else None
        if (
            noun.lower.endswith(("ic", "al"))
            and after
            and after.kind == "word"
            and after.lower not in FUNCTION_WORDS
        ):
            nouns.append(index + 3)  # "how many academic staff"
        return WhPhrase("number", " ".join(tokens[i].lower for i in nouns), phrase_tokens, frozenset(nouns))
    return WhPhrase("number", f"how {nxt.lower}", phrase_tokens)


def _wh_index(tokens: list[Token]) -> int | None:
    """The wh-word that asks the question: the first word (after a preposition or two), else a wh-word
    at the end ("was born where ?"), else a "which/what <noun>" or "how many" anywhere."""
    i = 0
    while i < min(2, len(tokens)) and tokens[i].lower in LEAD_WORDS:
        i += 1
    if i < len(tokens) and tokens[i].lower in WH_WORDS:
        return i
    n = len(tokens)
    for j in range(n - 1, max(-1, n - 6), -1):
        if tokens[j].text in WH_WORDS:
            return j
    for j, t in enumerate(tokens[:-1]):
        nxt = tokens[j + 1]
        if t.text in {"which", "what"} and nxt.kind == "word" and nxt.lower not in FUNCTION_WORDS:
            return j
        if t.text == "how" and nxt.lower in HOW_NUMBER:
            return j
    return None


def _noun_phrase(tokens: list[Token], index: int) -> WhPhrase:
    """ "which *city*", "what Colombian *cyclist*": the first type noun in the next few words."""
    run: list[int] = []
    for i in range(index + 1, min(index + 6, len(tokens))):
        t = tokens[i]
        if t.kind != "word":
            if run:
                break
            continue  # "What Kishore Kumar song": names before the noun belong to a mention
        if t.lower in TYPE_ADJECTIVES and not run:
            continue
        if t.lower in FUNCTION_WORDS:
            break
        answer_type = type_noun(t.lower)
        if answer_type is None and t.lower.endswith("ed"):
            break  # "what happened": a verb, no noun
        run.append(i)
        if answer_type is not None:
            return _phrase(tokens, index, run, answer_type, in_relation=False)
    if not run:
        return WhPhrase("other", tokens=frozenset({index}))
    return _phrase(tokens, index, run[:1], "entity", in_relation=False)


def _copula_phrase(tokens: list[Token], index: int) -> WhPhrase:
    """ "what is the *population* of ...": the head noun after the copula; it stays in the relation."""
    run: list[int] = []
    for i in range(index + 2, min(index + 9, len(tokens))):
        t = tokens[i]
        if t.kind != "word" or t.lower in TYPE_ADJECTIVES:
            if run:
                break
            continue
        if t.lower in FUNCTION_WORDS:
            if run or t.lower not in {"the", "a", "an", "s"}:
                break
            continue
        run.append(i)
    if not run:
        return WhPhrase("other", tokens=frozenset({index}))
    typed = [i for i in run if type_noun(tokens[i].lower)]
    head = typed[-1] if typed else run[-1]
    answer_type = type_noun(tokens[head].lower) or "entity"
    return _phrase(tokens, index, run[: run.index(head) + 1], answer_type, in_relation=True)


def _phrase(
    tokens: list[Token], index: int, run: list[int], answer_type: AnswerType, *, in_relation: bool
) -> WhPhrase:
    phrase = " ".join(tokens[i].lower for i in run)
    wh_tokens = frozenset({index}) if in_relation else frozenset({index, *run})
    return WhPhrase(answer_type, phrase, wh_tokens, frozenset(run))
