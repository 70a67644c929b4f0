"""Does a question rank, pick an ordinal, count or compare over rows, and over which quantity?

Rules, no model: a superlative ("the most wins", "the lowest RLIF rank", "the oldest player"), an
ordinal with one ("the second most", "third highest"), a position in the table's own order ("the
second-to-last driver", "the first team listed"), or a count ("how many teams ..."). The result
names what the superlative measures (the words after it, or the quantity a word like "oldest" implies)
and the noun that answers ("which *team*", "the *driver* with ...") so the table-sql mode can pick its
columns by their headers. An LLM can replace this reader behind the same ``TableOp``.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Literal

from query.lexicon import (
    AUXILIARIES,
    DETERMINERS,
    IMPLIED,
    MAX_WORDS,
    MEASURE_STOP,
    MIN_WORDS,
    NOT_RANKING,
    ORDINALS,
    PREPOSITIONS,
    QUANTITY_NOUNS,
    RECENT_WORDS,
    SEARCH_STOPWORDS,
    TARGET_SKIP,
    TIME_NOUNS,
    VALUE_NOUNS,
    Direction,
)

OpKind = Literal["superlative", "position", "count"]
_TOKEN = re.compile(r"[a-z0-9]+(?:['/][a-z0-9]+)*")


@dataclass(frozen=True)
class TableOp:
    """What a question asks of a table's rows (``kind``), which way, and over what.

    ``k`` counts from the top (``from_end`` False) or the bottom; ``measure`` are the words naming the
    ranked quantity ("top 4 finishes"); ``implied`` are header words a superlative like "oldest" points
    to when it names no quantity; ``date_direction`` is its direction over a date or year column;
    ``target`` the noun naming what answers ("team").
    """

    kind: OpKind
    cue: str
    direction: Direction | None = None
    date_direction: Direction | None = None
    k: int = 1
    from_end: bool = False
    measure: tuple[str, ...] = ()
    implied: tuple[str, ...] = field(default=())
    target: tuple[str, ...] = ()


def _words(question: str) -> list[str]:
    """Lower-case words; hyphens split ("second-to-last" → second to last)."""
    return _TOKEN.findall(question.casefold().replace("\u2019", "'").replace("-", " "))


def _phrase_after(words: list[str], start: int) -> tuple[str, ...]:
    """Content words right after a cue, up to a preposition or clause word: "most top 4 finishes"."""
    if start + 1 < len(words) and words[start] in QUANTITY_NOUNS and words[start + 1] == "of":
        start += 2  # "the highest number of goals": the goals
    out: list[str] = []
    for word in words[start : start + 5]:
        if word in MEASURE_STOP or word in AUXILIARIES:
            break
        if word not in SEARCH_STOPWORDS:
            out.append(word)
    return tuple(out)


def _target_before(words: list[str], cue_at: int) -> tuple[str, ...]:
    """The answer noun: after "which"/"what" at the start, or the noun before "with the most …"."""
    for i, word in enumerate(words[:3]):
        if word in ("which", "what") and i + 1 < len(words) and words[i + 1] not in AUXILIARIES:
            noun = words[i + 1]
            return (noun,) if noun not in SEARCH_STOPWORDS else ()
    for i in range(cue_at - 1, max(cue_at - 5, -1), -1):
        if words[i] in TARGET_SKIP:
            continue
        if words[i] not in SEARCH_STOPWORDS and words[i] not in AUXILIARIES:
            return (words[i],)
        break
    return ()


def _ordinal_position(words: list[str], i: int) -> TableOp | None:
    """ "second to last X", "the last X", "the second X to be eliminated": a place in the table's order."""
    word = words[i]
    rest = words[i + 1 :]
    if word in ORDINALS and rest[:2] in (["to", "last"], ["from", "last"]):
        noun = _phrase_after(words, i + 3)
        return TableOp(kind="position", cue=" ".join(words[i : i + 3]), k=ORDINALS[word], from_end=True,
                       target=noun[-1:] or _target_before(words, i))  # fmt: skip
    if word == "last" and i > 0 and words[i - 1] == "the":
        noun = _phrase_after(words, i + 1)
        if noun and noun[0] not in TIME_NOUNS:
            return TableOp(kind="position", cue="the last", k=1, from_end=True, target=noun[-1:])
    if word in ORDINALS and word not in ("first", "1st"):
        noun = _phrase_after(words, i + 1)
        after = i + 1 + len(noun)
        if noun and after < len(words) and words[after] == "to":  # "the second celebrity to be eliminated"
            return TableOp(kind="position", cue=f"{word} … to", k=ORDINALS[word], target=noun[-1:])
    return None


def _in_a_name(question: str, word: str) -> bool:
    """True when ``word`` is capitalized inside the question: part of a name ("Best Foreign Language
    Film", "Most Valuable Player", "Top Gear"), not a superlative."""
    return any(
        m.start() > 0 and m.group(0)[0].isupper()
        for m in re.finditer(rf"\b{re.escape(word)}\b", question, flags=re.IGNORECASE)
    )


def table_op(question: str) -> TableOp | None:
    """The row operation ``question`` asks for, or None when it asks none of the kinds above.

    A ranking or a place wins over a count: in "How many titles did the player with the most points
    win?" the table picks the player and the count is a value on the player's page (the hop)."""
    words = _words(question)
    ranked = _ranking(question, words)
    if ranked is not None:
        return ranked
    for i in range(len(words) - 1):
        if words[i] == "how" and words[i + 1] == "many" and (counted := _phrase_after(words, i + 2)):
            return TableOp(kind="count", cue="how many", measure=counted, target=counted[:1])
    return None


def asks_a_value(question: str) -> bool:
    """True when a "how many" asks for a number stated about one thing, not for a count of rows:
    "How many seats does the stadium have", "How many people live in the city …", "How many
    times has the team won …". The counted words are followed by a verb whose subject is another
    noun phrase ("does the …", "live in the …"); in a count of rows they are the subject themselves
    ("How many teams from Leeds took part", "How many players were born in 1983"). A "how many"
    inside the sentence ("… won how many titles") asks for a value too. Rules written on the tuning
    fold's count questions, most of which are values on a linked page (benchmarks/table_sql_ottqa.py)."""
    before = re.split(r"\bhow\s+many\b", question, maxsplit=1, flags=re.I)[0].strip()
    if before and not before.endswith(","):
        return True  # "The player seeded 5th won how many titles", "a population of how many people"
    words = _words(question)
    i = next((j for j in range(len(words) - 1) if words[j : j + 2] == ["how", "many"]), None)
    counted = _phrase_after(words, i + 2) if i is not None else ()
    if not counted:
        return False
    if counted[0] in VALUE_NOUNS:
        return True  # "how many people live in …", "how many times has …", "how many years after …"
    after = words[i + 2 :]
    at = after.index(counted[-1]) + 1
    rest = after[at : at + 4]
    if not rest or rest[0] in MEASURE_STOP:
        return False  # "how many teams from Leeds", "how many clubs of the league"
    if len(rest) > 1 and rest[0] in AUXILIARIES and rest[1] in DETERMINERS:
        return True  # "does the grandstand", "is the school"
    if len(rest) > 2 and rest[1] in PREPOSITIONS and rest[2] in DETERMINERS:
        return True  # "live in the city"
    # "are located in the city", "were held for this competition"
    return len(rest) == 4 and rest[0] in AUXILIARIES and rest[2] in PREPOSITIONS and rest[3] in DETERMINERS


def _ranking(question: str, words: list[str]) -> TableOp | None:
    """A superlative or a place in the table's order, the first the question states."""
    for i, word in enumerate(words):
        position = _ordinal_position(words, i)
        if position is not None:
            return position
        k, at = 1, i
        if word in ORDINALS and i + 1 < len(words):
            nxt = words[i + 1]
            if nxt not in MAX_WORDS and nxt not in MIN_WORDS and nxt not in IMPLIED:
                continue  # "the first game": a time, not a ranking
            k, at = ORDINALS[word], i + 1
        cue_word = words[at]
        cue = " ".join(words[i : at + 1])
        following = words[at + 1] if at + 1 < len(words) else ""
        if (cue_word, following) in NOT_RANKING or _in_a_name(question, cue_word):
            continue
        if cue_word == "most" and following in RECENT_WORDS:  # "most recently": the latest
            cue_word, cue, at = "latest", f"{cue} {following}", at + 1
        if cue_word in IMPLIED:
            implied, amount, dated = IMPLIED[cue_word]
            noun = _phrase_after(words, at + 1)
            return TableOp(kind="superlative", cue=cue, direction=amount, date_direction=dated, k=k,
                           implied=implied, target=noun[-1:] or _target_before(words, i))  # fmt: skip
        if cue_word in MAX_WORDS or cue_word in MIN_WORDS:
            measure = _phrase_after(words, at + 1)
            if not measure:
                continue  # "which is the largest?": no quantity named to rank by
            direction: Direction = "max" if cue_word in MAX_WORDS else "min"
            return TableOp(kind="superlative", cue=cue, direction=direction, date_direction=direction, k=k,
                           measure=measure, target=_target_before(words, i))  # fmt: skip
    return None
