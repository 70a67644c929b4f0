"""Which spans of a question name entities: quoted text, n-grams the alias index knows, capitalized runs.

Quoted spans come first; then word n-grams the alias index knows, longest and best-known first; then
runs of capitalized words it does not know, merged around the known names inside them (the rules of
``_merge_unknown``). The wh-phrase, the answer-type noun and time expressions are kept out. The
location is the first mention after "in", "at" or "from" that is a place.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal, Protocol

from index.aliases import AliasHit, AliasIndex, normalize_mention
from query.lexicon import (
    CONNECTORS,
    DEMONYM_ENDINGS,
    DEMONYMS,
    FUNCTION_WORDS,
    MONTH_NUMBERS,
    NAME_ABBREVIATIONS,
    NAME_PARTICLES,
    NON_PLACE_WORDS,
    PLACE_DESCRIPTION_WORDS,
    WH_WORDS,
    word_set,
)
from query.understand.plan_words import PROPERTY_WORDS
from query.understand.tokens import Token, ends_abbreviation
from schemas.query import Mention

_QID_NAME = re.compile(r"Q\d+")
NGRAM_GAPS = frozenset({"", "&", ":", "-", "\u2013", "."})
"""What may stand between two words of a known n-gram ("Tom & Jerry", "BlazBlue : Calamity Trigger")."""
_FUNCTION = FUNCTION_WORDS | WH_WORDS


class EntityDescriptions(Protocol):
    """Anything that knows an entity's description (``query.understand.linking.EntityTable`` does)."""

    def description(self, entity_id: str) -> str | None: ...


@dataclass(frozen=True)
class Span:
    """A candidate mention: tokens [first, last], whether the alias index knows it, and its best hit."""

    first: int
    last: int
    source: Literal["quote", "known", "caps"]
    hit: AliasHit | None = None

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def overlaps(self, other: Span) -> bool:
        return self.first <= other.last and other.first <= self.last


class MentionFinder:
    """Finds mentions with exact alias look-ups; holds no mutable state, so threads may share it."""

    def __init__(self, aliases: AliasIndex, entities: EntityDescriptions | None = None, max_ngram: int = 6):
        self.aliases = aliases
        self.entities = entities
        self.max_ngram = max_ngram

    def spans(self, question: str, tokens: list[Token], blocked: set[int] | frozenset[int]) -> list[Span]:
        """Quoted spans, then known n-grams (longest, best-known first), then unknown capitalized spans."""
        quoted = _quoted_spans(question, tokens)
        taken = set(blocked) | {i for s in quoted for i in range(s.first, s.last + 1)}
        caps = _caps_spans(tokens, taken)
        looked_up: dict[tuple[int, int], AliasHit | None] = {}
        known = self._known_ngrams(question, tokens, taken, looked_up)
        for span in caps:  # names longer than max_ngram: "European Organisation for the Exploitation of ..."
            for first, last in _pieces(tokens, span):
                if (first, last) not in looked_up:
                    looked_up[(first, last)] = self._hit(question, tokens[first : last + 1])
                    hit = looked_up[(first, last)]
                    if hit is not None:
                        known.append(Span(first, last, "known", hit))
        chosen: list[Span] = list(quoted)
        for span in sorted(known, key=lambda s: (-s.size, -(s.hit.score if s.hit else 0.0), s.first)):
            if not any(span.overlaps(c) for c in chosen):
                chosen.append(span)
        for span in caps:
            if looked_up.get((span.first, span.last)) is None:
                chosen = _merge_unknown(span, chosen, tokens)
        return sorted(chosen, key=lambda s: s.first)

    def _known_ngrams(
        self,
        question: str,
        tokens: list[Token],
        taken: set[int],
        looked_up: dict[tuple[int, int], AliasHit | None],
    ) -> list[Span]:
        """Word n-grams the alias index knows, starting with a name word ("Dancing with the Stars").

        Lowercase-only phrases ("television series") are concepts, not names: they stay in the
        relation and the keywords.
        """
        spans = []
        # a question written all in lower case ("cerro trilile, how high is it?") names things in lower
        # case too: there, words the alias index knows as a Wikidata item's name are a mention (a single
        # word only when it is no property's everyday word, and written as the item's label)
        lower_case = not any(t.kind == "cap" for t in tokens)
        for i, first in enumerate(tokens):
            if i in taken or not (lower_case or first.kind != "word" or first.lower in NAME_PARTICLES):
                continue
            for j in range(i, min(i + self.max_ngram, len(tokens))):
                if j in taken or (j > i and tokens[j].gap not in NGRAM_GAPS):
                    break
                words = tokens[i : j + 1]
                spoken = lower_case and (len(words) >= 2 or not says_property(words[0].text))
                if (
                    _edge_word(words[0])
                    or _edge_word(words[-1])
                    or not (spoken or any(t.kind == "cap" for t in words))
                ):
                    continue
                hit = self._hit(question, words)
                if hit is not None and spoken and not any(t.kind == "cap" for t in words):
                    named = _QID_NAME.fullmatch(hit.entity_id) and (
                        len(words) >= 2
                        or normalize_mention(hit.label or "") == words[0].lower
                        or self._place_alias(hit, words[0].lower)  # "china": People's Republic of China
                    )
                    hit = hit if named else None
                looked_up[(i, j)] = hit
                if hit is not None:
                    spans.append(Span(i, j, "known", hit))
        return spans

    def _place_alias(self, hit: AliasHit, word: str) -> bool:
        """Whether a lower-case word is an exact alias of a place: a country or city named in lower case
        by its short name ("china"), not its label; a word that is another thing's alias stays a word."""
        if normalize_mention(hit.alias or "") != word or self.entities is None:
            return False
        description = self.entities.description(hit.entity_id)
        return bool(description and PLACE_DESCRIPTION_WORDS & set(normalize_mention(description).split()))

    def _hit(self, question: str, words: list[Token]) -> AliasHit | None:
        """The best exact or normalized alias hit for these words, if any."""
        hits = self.aliases.lookup(question[words[0].start : words[-1].end], k=1, fuzzy=False)
        if not hits:
            return None
        if len(words) == 1 and words[0].initial and words[0].kind == "cap" and hits[0].match != "exact":
            return None  # "Taking place at ...": a capitalized first word is no name unless written so
        return hits[0]

    def mention(self, question: str, tokens: list[Token], span: Span) -> Mention:
        start, end = tokens[span.first].start, tokens[span.last].end
        last = tokens[span.last]
        if (
            span.source != "quote"
            and question[end : end + 1] == "."
            and (last.lower in NAME_ABBREVIATIONS or "." in last.text)
        ):
            end += 1  # "Jr.", "Inc.", "U.S."
        return Mention(text=question[start:end], start=start, end=end)

    def location(self, question: str, tokens: list[Token], spans: list[Span]) -> str | None:
        """The first mention after "in"/"at"/"from" (optionally "the") that looks like a place."""
        for span in spans:
            before = [t.lower for t in tokens[max(0, span.first - 2) : span.first]]
            if before[-1:] == ["the"]:
                before = before[:-1]
            if before[-1:] not in (["in"], ["at"], ["from"]) or tokens[span.first].kind == "num":
                continue
            if span.size == 1 and _demonym(tokens[span.first]):
                continue  # "in Danish first division": an adjective, not the place
            if self._is_place(span, tokens):
                return _text(question, tokens, span)
        return None

    def _is_place(self, span: Span, tokens: list[Token]) -> bool:
        description = None
        if span.hit is not None and self.entities is not None:
            description = self.entities.description(span.hit.entity_id)
        if description:
            return bool(PLACE_DESCRIPTION_WORDS & set(normalize_mention(description).split()))
        words = {t.lower for t in tokens[span.first : span.last + 1]}  # no description: a short known name
        return span.hit is not None and span.size <= 3 and not words & NON_PLACE_WORDS


def _text(question: str, tokens: list[Token], span: Span) -> str:
    return question[tokens[span.first].start : tokens[span.last].end]


def _edge_word(token: Token) -> bool:
    """Words a mention may not start or end with."""
    return (
        token.lower in FUNCTION_WORDS or token.lower in WH_WORDS or not any(c.isalnum() for c in token.text)
    )


def _quoted_spans(question: str, tokens: list[Token]) -> list[Span]:
    spans = []
    for m in re.finditer(r"``\s*(.+?)\s*''|\"([^\"]+)\"|“([^”]+)”", question):
        start, end = next((m.start(g), m.end(g)) for g in (1, 2, 3) if m.group(g) is not None)
        inside = [i for i, t in enumerate(tokens) if start <= t.start and t.end <= end]
        if inside:
            spans.append(Span(inside[0], inside[-1], "quote"))
    return spans


def _caps_spans(tokens: list[Token], taken: set[int]) -> list[Span]:
    """Runs of capitalized words and numbers with lowercase connectors inside ("University of Notre
    Dame"); "and" separates two names here ("Steve Slavkin and Thomas Hill"), while a known name with
    "and" in it is found among the n-grams."""
    spans: list[Span] = []
    i = 0
    while i < len(tokens):
        if i in taken or tokens[i].kind == "word":
            i += 1
            continue
        j = i
        while j + 1 < len(tokens) and _continues_caps(tokens[j], tokens[j + 1]) and j + 1 not in taken:
            j += 1
        spans.extend(_trim_caps(tokens, i, j))
        i = j + 1
    return spans


def _continues_caps(prev: Token, token: Token) -> bool:
    if token.initial or (token.kind == "word" and token.lower not in CONNECTORS):
        return False
    return token.gap in {"", "&"} or (token.gap == "." and ends_abbreviation(prev))


def _trim_caps(tokens: list[Token], i: int, j: int) -> list[Span]:
    while i <= j and (tokens[i].lower in CONNECTORS or (tokens[i].initial and tokens[i].lower in _FUNCTION)):
        i += 1
    while j >= i and tokens[j].lower in CONNECTORS:
        j -= 1
    while j > i and tokens[j].kind == "num" and tokens[j - 1].lower in CONNECTORS:
        j -= 1  # "F-A of 0-2": a score, not part of the name
        while j >= i and tokens[j].lower in CONNECTORS:
            j -= 1
    if i > j:
        return []
    words = tokens[i : j + 1]
    if not any(t.kind == "cap" for t in words):
        return []
    if len(words) == 1 and words[0].lower in FUNCTION_WORDS:
        return []  # "I", "A"
    if all(t.lower.rstrip(".") in MONTH_NUMBERS for t in words if t.kind == "cap"):
        return []  # "Sept 2017" is a time, not a name
    return [Span(i, j, "caps")]


def _pieces(tokens: list[Token], span: Span) -> list[tuple[int, int]]:
    """The span and its parts between connectors, longest first: candidates for a known name."""
    inner = [k for k in range(span.first + 1, span.last) if tokens[k].lower in CONNECTORS]
    starts = [span.first, *(k + 1 for k in inner if tokens[k + 1].lower not in CONNECTORS)]
    ends = [span.last, *(k - 1 for k in inner if tokens[k - 1].lower not in CONNECTORS)]
    pieces = [
        (a, b) for a in starts for b in ends if a <= b and any(t.kind == "cap" for t in tokens[a : b + 1])
    ]
    return sorted(set(pieces), key=lambda p: (p[0] - p[1], p[0]))


def _merge_unknown(span: Span, chosen: list[Span], tokens: list[Token]) -> list[Span]:
    """Add a capitalized span the alias index does not know, around the known names inside it.

    The whole span replaces the known names inside it when they are fragments of it: an unknown word
    sticks to a known one ("Bradford A.F.C", not "Bradford"), two known names touch ("Rob" +
    "Davison"), or only single known words are joined by connectors ("Kingdom of Poland"). Otherwise
    the known names stay and the rest becomes mentions of its own: a year before a name is dropped
    ("1995 Sevens Grand Prix Series"), a leading demonym is split off ("Argentinian" + "Primera B
    Metropolitana"), a part behind a connector stands alone ("CEO" + "European Organisation for ...").
    A known name crossing the span's border always wins.
    """
    overlapping = [c for c in chosen if c.overlaps(span)]
    if not overlapping:
        return [*chosen, span]
    if any(c.first < span.first or c.last > span.last or c.source == "quote" for c in overlapping):
        return chosen
    owner = {i: n for n, c in enumerate(overlapping) for i in range(c.first, c.last + 1)}
    rest = [
        piece
        for run in _runs([i for i in range(span.first, span.last + 1) if i not in owner])
        for piece in _trim_caps(tokens, run[0], run[-1])
    ]
    # single known words joined by connectors ("Kingdom of Poland"), unless the first is a property's
    # everyday word ("GDP of Laos": the GDP asked of Laos)
    fragments = (
        len(overlapping) > 1
        and all(c.size == 1 for c in overlapping)
        and not says_property(tokens[min(c.first for c in overlapping)].text)
    )
    for i in range(span.first, span.last):
        a, b = owner.get(i), owner.get(i + 1)
        if a is not None and b is not None and a != b:
            fragments = True  # two known names touch
        elif (a is None) != (b is None):
            loose = tokens[i] if a is None else tokens[i + 1]
            demonym = a is None and i == span.first and _demonym(loose)
            # "Name Tajikistan's code", "Of Russia's oblasts": the question's opening verb or preposition,
            # capitalized only because it opens the question, is not a word of the name
            command = a is None and i == span.first == 0 and loose.lower in OPENING_WORDS
            if loose.kind == "cap" and not demonym and not command:
                fragments = True  # an unknown word sticks to a known one
    if fragments and not _value_before_possessor(span, overlapping, tokens):
        return [*(c for c in chosen if c not in overlapping), span]
    return [*chosen, *rest]


_COPULAS = frozenset(
    word_set("is was are were") | {f"{c}n{q}t" for c in ("is", "was", "are", "were") for q in "'\u2019"}
)


def _value_before_possessor(span: Span, known: list[Span], tokens: list[Token]) -> bool:
    """ "Is Paris France's capital?", "Was Latin Hegel's mother tongue?": after an opening copula, a name
    followed by a possessor's name is two names, the value asked and its possessor, not one (the known
    names keep their words; the rest of the span is a name of its own)."""
    after = tokens[span.last + 1] if span.last + 1 < len(tokens) else None
    return (
        span.first == 1
        and tokens[0].lower in _COPULAS
        and after is not None
        and after.gap in ("'s", "\u2019s")
        and any(k.first > span.first or k.last < span.last for k in known)
    )


OPENING_WORDS = frozenset(
    word_set("name tell give list show find state say count of among in across within")
    | {
        f"{aux}n{q}t"
        for aux in ("is", "are", "was", "were", "does", "do", "did", "has", "have")
        for q in "'\u2019"
    }
    | {"can't", "can\u2019t"}
)
"""Verbs, prepositions and negated auxiliaries a question may open with, capitalized only because they
open it ("Name New Mexico's …", "Among Russia's oblasts …", "Isn't Lausanne …")."""


def says_property(word: str) -> bool:
    """Whether a word is, by itself, an everyday name of a property ("GDP", "HDI", "population")."""
    return any(entry.pattern.fullmatch(word.lower()) for entry in PROPERTY_WORDS)


def _demonym(token: Token) -> bool:
    return token.lower in DEMONYMS or token.lower.endswith(DEMONYM_ENDINGS)


def _runs(indices: list[int]) -> list[list[int]]:
    runs: list[list[int]] = []
    for i in indices:
        if runs and runs[-1][-1] == i - 1:
            runs[-1].append(i)
        else:
            runs.append([i])
    return runs
