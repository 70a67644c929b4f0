"""Stage 1 of the query engine: the structured intent of a question (after QUASAR).

What kind of thing answers it (the wh-phrase), which spans name entities (quoted text, capitalized
spans, n-grams the alias index knows), the relation phrase and the Wikidata properties it may
express, time constraints (years, dates, cues such as "first" or "before") and a place it is
restricted to. ``RuleIntentExtractor`` does this with rules and the alias index alone: no model, no
training data, a few milliseconds per question. An LLM extractor can replace it behind
``IntentExtractor`` without the later stages noticing.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal, Protocol

from index.aliases import AliasHit, AliasIndex, normalize_mention
from index.reader import IndexReader
from query.understand.properties import STOPWORDS, PropertyLabels, word_set
from schemas.query import AnswerType, Intent, Mention, TimeConstraint, TimeCue


class IntentExtractor(Protocol):
    """Reads a question into an ``Intent``; implementations must be safe for concurrent ``run`` calls."""

    name: str

    def run(self, question: str) -> Intent: ...


class EntityDescriptions(Protocol):
    """Anything that knows an entity's description (``query.understand.linking.EntityTable`` does)."""

    def description(self, entity_id: str) -> str | None: ...


TOKEN = re.compile(r"\d+(?:[,.]\d+)+|\w(?:[\w'\u2019.&\-\u2013]*\w)?", re.UNICODE)
"""Words, with inner dots, hyphens, en dashes and apostrophes kept ("A.F.C", "Chao-chun", "9,566")."""

WH_WORDS = frozenset({"who", "whom", "whose", "what", "which", "when", "where", "how", "why"})
LEAD_WORDS = frozenset(
    {"in", "by", "of", "for", "during", "upon", "on", "at", "from", "to", "with", "and", "so", "but", "as"}
)
COPULAS = frozenset({"is", "was", "are", "were", "s"})
DO_WORDS = frozenset(
    {"did", "does", "do", "has", "have", "had", "can", "could", "will", "would", "should", "may", "might"}
)
NAME_PARTICLES = frozenset(
    {"de", "del", "da", "di", "du", "la", "le", "van", "von", "der", "den", "al", "el", "bin", "ibn"}
)
CONNECTORS = NAME_PARTICLES | {"of", "the", "for", "y"}
"""Lowercase words a capitalized name may contain: "University of Notre Dame", "Tour de France"."""
NGRAM_GAPS = frozenset({"", "&", ":", "-", "\u2013", "."})
ABBREVIATIONS = frozenset({"jr", "sr", "inc", "ltd", "co", "corp", "st", "mt", "dr", "bros", "jnr", "no"})
TYPE_ADJECTIVES = frozenset(
    {"other", "full", "main", "official", "current", "original", "primary", "kind", "type", "sort", "exact"}
)

_PERSON = """person people player actor actress author writer coach manager director singer musician
    artist poet politician president ceo leader founder cyclist driver athlete footballer scientist king
    queen wife husband son daughter father mother spouse composer producer lyricist captain goalkeeper
    partner celebrity personality journalist architect painter inventor winner candidate chancellor
    minister mayor governor senator alumnus teacher professor pitcher quarterback rapper host presenter
    creator designer engineer chairman emperor man woman boy girl child brother sister rider boxer
    wrestler golfer swimmer runner skater dancer comedian novelist philosopher physicist chemist
    mathematician economist historian explorer monarch pope bishop prince princess duke general
    officer soldier pilot astronaut drummer guitarist vocalist bassist pianist conductor referee umpire
    jockey batsman bowler striker defender midfielder forward keeper lawyer judge doctor owner
    """
_PLACE = """place city country state river stadium venue town village nation island valley mountain lake
    region province county location continent capital district airport ground arena park street
    building hometown birthplace department territory municipality neighborhood neighbourhood suburb
    sea ocean border peninsula desert forest station port harbor harbour bridge road highway circuit
    track field court hall church temple palace castle museum theatre theater hospital
    """
_ORGANIZATION = """team club company band university party organization organisation school college
    network channel studio label firm agency league group institution ministry manufacturer developer
    publisher broadcaster airline franchise association federation sponsor newspaper corporation
    business brand employer army unit division squad orchestra choir government council committee
    """
_NUMBER = """number population count amount percentage percent capacity area elevation height length
    size total attendance age distance weight duration rank ranking revenue budget margin width depth
    salary price cost income gdp density
    """
_OTHER = """name nickname title genre position role style color colour meaning language nationality
    sport use motto slogan term word reason cause purpose
    """
_ENTITY = """song film movie book album show series game award work event tournament competition
    championship prize product vehicle aircraft ship program programme single novel play character
    opera painting magazine entity thing
    """
TYPE_NOUNS: dict[str, AnswerType] = {
    **{w: "entity" for w in _ENTITY.split()},
    **{w: "other" for w in _OTHER.split()},
    **{w: "number" for w in _NUMBER.split()},
    **{w: "organization" for w in _ORGANIZATION.split()},
    **{w: "place" for w in _PLACE.split()},
    **{w: "person" for w in _PERSON.split()},
    "year": "year",
    "decade": "year",
    "season": "year",
    "date": "date",
    "day": "date",
    "birthday": "date",
    "month": "date",
}
"""Nouns naming what answers a question ("which *city*", "what is the *population*")."""

HOW_NUMBER = frozenset(
    {"many", "much", "old", "long", "tall", "far", "big", "large", "high", "often", "deep", "wide", "heavy"}
)
PLACE_WORDS = word_set(
    """country city town village capital state province region county municipality island district
    commune continent territory monarchy republic nation kingdom borough neighbourhood neighborhood
    suburb archipelago peninsula department prefecture oblast canton settlement metropolis comune parish
    """
)
DEMONYM_ENDINGS = ("ish", "ian", "ese", "ean", "ino")
DEMONYMS = frozenset({"dutch", "french", "czech", "greek", "thai", "swiss", "irish", "welsh", "scots"})
NON_PLACE_WORDS = word_set(
    """cup series league championship championships university college school fc club games award prize
    tour season party company team festival olympics war battle band album film song"""
)

_MONTH_NAMES = [
    "january", "february", "march", "april", "may", "june",
    "july", "august", "september", "october", "november", "december",
]  # fmt: skip
MONTHS = {name: i + 1 for i, name in enumerate(_MONTH_NAMES)}
MONTHS.update({name[:3]: i + 1 for i, name in enumerate(_MONTH_NAMES)})
MONTHS["sept"] = 9
_MONTH = r"(?P<month>" + "|".join(sorted(MONTHS, key=len, reverse=True)) + r")\.?"
DATE_PATTERNS = [
    re.compile(
        r"\b(?P<day>\d{1,2})(?:st|nd|rd|th)?\s+(?:of\s+)?" + _MONTH + r"\s*,?\s+(?P<year>\d{4})\b", re.I
    ),
    re.compile(r"\b" + _MONTH + r"\s+(?P<day>\d{1,2})(?:st|nd|rd|th)?\s*,?\s*(?P<year>\d{4})\b", re.I),
    re.compile(r"\b(?P<year>\d{4})-(?P<month>\d{2})-(?P<day>\d{2})\b"),
]
MONTH_YEAR = re.compile(r"\b" + _MONTH + r"\s+\d{4}\b", re.I)
"""A month and a year ("Sept 2017"): a time, so never part of a mention; it adds no full date."""
YEAR = re.compile(
    r"(?<![\w,.])(?P<year>1\d{3}|20\d{2})(?:\s*[\u2013\-/]\s*(?P<to>\d{2}|\d{4}))?(?![\w,]|\.\d)"
)
CUES: dict[str, TimeCue] = {
    "first": "first",
    "earliest": "first",
    "last": "last",
    "latest": "last",
    "recent": "last",
    "recently": "last",
    "before": "before",
    "prior": "before",
    "after": "after",
    "during": "during",
    "since": "since",
    "until": "until",
    "till": "until",
}
_CUE_BLOCKERS = {"first": {"name"}, "last": {"name"}}
_COUNT_NOUN_EXCEPTIONS = frozenset({"season", "census", "series", "class"})

TokenKind = Literal["cap", "num", "word"]
_FUNCTION = STOPWORDS | WH_WORDS


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


@dataclass(frozen=True)
class _Span:
    """A candidate mention: tokens [first, last], whether the alias index knows it, and its best hit."""

    first: int
    last: int
    source: Literal["quote", "known", "caps"]
    hit: AliasHit | None = None

    @property
    def size(self) -> int:
        return self.last - self.first + 1

    def overlaps(self, other: _Span) -> bool:
        return self.first <= other.last and other.first <= self.last


@dataclass
class _WhPhrase:
    answer_type: AnswerType
    phrase: str | None = None
    tokens: frozenset[int] = frozenset()  # the wh-phrase: out of relation and mentions
    type_tokens: frozenset[int] = frozenset()  # the answer-type noun: out of mentions


def tokenize(question: str) -> list[Token]:
    """The words of a question, in order; punctuation is kept only as each word's ``gap``."""
    tokens: list[Token] = []
    prev_end = 0
    for m in TOKEN.finditer(question):
        text, end = m.group(), m.end()
        if len(text) > 3 and text[-2:].lower() in ("'s", "\u2019s"):
            text, end = text[:-2], end - 2  # a possessive: "Aristotle's father" names Aristotle
        gap = question[prev_end : m.start()].strip()
        initial = not tokens or "!" in gap or "?" in gap or ("." in gap and not _abbreviation(tokens[-1]))
        if text[0].isdigit():
            kind: TokenKind = "num"
        elif text[0].isupper() or any(c.isupper() for c in text[1:]):
            kind = "cap"  # "Belgium", "iPhone"
        else:
            kind = "word"
        tokens.append(Token(text, text.lower(), m.start(), end, kind, gap, initial))
        prev_end = end
    return tokens


def _abbreviation(token: Token) -> bool:
    """Whether a period after this token ends an abbreviation ("Jr.", "U.S.") rather than a sentence."""
    return token.lower in ABBREVIATIONS or "." in token.text or (token.kind == "cap" and len(token.text) == 1)


def _singular(word: str) -> str:
    if len(word) > 4 and word.endswith("ies"):
        return word[:-3] + "y"
    if len(word) > 3 and word.endswith("s") and not word.endswith(("ss", "us", "is")):
        return word[:-1]
    return word


def _type_noun(word: str) -> AnswerType | None:
    return TYPE_NOUNS.get(word) or TYPE_NOUNS.get(_singular(word))


class RuleIntentExtractor:
    """Rules over tokens plus exact alias look-ups; holds no mutable state, so threads may share it."""

    name = "rules"

    def __init__(
        self,
        aliases: AliasIndex,
        properties: PropertyLabels,
        *,
        entities: EntityDescriptions | None = None,
        max_ngram: int = 6,
        max_properties: int = 5,
    ):
        if max_ngram < 1:
            raise ValueError(f"max_ngram must be at least 1, got {max_ngram}")
        if max_properties < 0:
            raise ValueError(f"max_properties must be 0 or more, got {max_properties}")
        self.aliases = aliases
        self.properties = properties
        self.entities = entities
        self.max_ngram = max_ngram
        self.max_properties = max_properties

    @classmethod
    def from_reader(
        cls,
        reader: IndexReader,
        property_table: Path,
        *,
        entities: EntityDescriptions | None = None,
        **kwargs,
    ) -> RuleIntentExtractor:
        return cls(reader.aliases, PropertyLabels.load(property_table), entities=entities, **kwargs)

    def to_dict(self) -> dict:
        return {"name": self.name, "max_ngram": self.max_ngram, "max_properties": self.max_properties}

    def run(self, question: str) -> Intent:
        tokens = tokenize(question)
        dates, date_spans = _dates(question)
        time_spans = date_spans + [(m.start(), m.end()) for m in MONTH_YEAR.finditer(question)]
        time_tokens = {i for i, t in enumerate(tokens) if any(s <= t.start < e for s, e in time_spans)}
        wh = _wh_phrase(tokens)
        blocked = wh.tokens | wh.type_tokens | time_tokens
        spans = self._mentions(question, tokens, blocked)
        mentions = [self._mention(question, tokens, s) for s in spans]
        in_mention = {i for s in spans for i in range(s.first, s.last + 1)}
        years, year_tokens = _years(question, tokens, date_spans)
        years = list(dict.fromkeys([*years, *(int(d[:4]) for d in dates)]))
        cues, cue_tokens = _cues(tokens, in_mention)
        skip = wh.tokens | in_mention | time_tokens | year_tokens | cue_tokens
        relation_words = [
            w for i, t in enumerate(tokens) if i not in skip for w in _content(t.text) if not w.isdigit()
        ]
        relation = " ".join(relation_words) or None
        properties = (
            self.properties.match(relation, self.max_properties, answer_type=wh.answer_type)
            if relation and self.max_properties
            else []
        )
        keywords = list(dict.fromkeys(w for t in tokens if t.lower not in WH_WORDS for w in _content(t.text)))
        return Intent(
            question=question,
            answer_type=wh.answer_type,
            answer_type_phrase=wh.phrase,
            mentions=mentions,
            relation=relation,
            properties=properties,
            time=TimeConstraint(years=years, dates=dates, cues=cues),
            location=self._location(question, tokens, spans),
            keywords=keywords,
            extractor=self.name,
        )

    # -- mentions -------------------------------------------------------------------------------

    def _mentions(
        self, question: str, tokens: list[Token], blocked: set[int] | frozenset[int]
    ) -> list[_Span]:
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
                        known.append(_Span(first, last, "known", hit))
        chosen: list[_Span] = list(quoted)
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
    ) -> list[_Span]:
        """Word n-grams the alias index knows, starting with a name word ("Dancing with the Stars").

        Lowercase-only phrases ("television series") are concepts, not names: they stay in the
        relation and the keywords.
        """
        spans = []
        for i, first in enumerate(tokens):
            if i in taken or not (first.kind != "word" or first.lower in NAME_PARTICLES):
                continue
            for j in range(i, min(i + self.max_ngram, len(tokens))):
                if j in taken or (j > i and tokens[j].gap not in NGRAM_GAPS):
                    break
                words = tokens[i : j + 1]
                if _edge_word(words[0]) or _edge_word(words[-1]) or not any(t.kind == "cap" for t in words):
                    continue
                hit = self._hit(question, words)
                looked_up[(i, j)] = hit
                if hit is not None:
                    spans.append(_Span(i, j, "known", hit))
        return spans

    def _hit(self, question: str, words: list[Token]) -> AliasHit | None:
        """The best exact or normalized alias hit for these words, if any."""
        hits = self.aliases.lookup(question[words[0].start : words[-1].end], k=1, fuzzy=False)
        if not hits:
            return None
        if len(words) == 1 and words[0].initial and hits[0].match != "exact":
            return None  # "Taking place at ...": a capitalized first word is no name unless written so
        return hits[0]

    def _mention(self, question: str, tokens: list[Token], span: _Span) -> Mention:
        start, end = tokens[span.first].start, tokens[span.last].end
        last = tokens[span.last]
        if (
            span.source != "quote"
            and question[end : end + 1] == "."
            and (last.lower in ABBREVIATIONS or "." in last.text)
        ):
            end += 1  # "Jr.", "Inc.", "U.S."
        return Mention(text=question[start:end], start=start, end=end)

    # -- location -------------------------------------------------------------------------------

    def _location(self, question: str, tokens: list[Token], spans: list[_Span]) -> str | None:
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

    def _is_place(self, span: _Span, tokens: list[Token]) -> bool:
        description = None
        if span.hit is not None and self.entities is not None:
            description = self.entities.description(span.hit.entity_id)
        if description:
            return bool(PLACE_WORDS & set(normalize_mention(description).split()))
        words = {t.lower for t in tokens[span.first : span.last + 1]}  # no description: a short known name
        return span.hit is not None and span.size <= 3 and not words & NON_PLACE_WORDS


# -- helpers --------------------------------------------------------------------------------------


def _text(question: str, tokens: list[Token], span: _Span) -> str:
    return question[tokens[span.first].start : tokens[span.last].end]


def _content(text: str) -> list[str]:
    return [w for w in normalize_mention(text).split() if w not in STOPWORDS]


def _edge_word(token: Token) -> bool:
    """Words a mention may not start or end with."""
    return token.lower in STOPWORDS or token.lower in WH_WORDS or not any(c.isalnum() for c in token.text)


def _quoted_spans(question: str, tokens: list[Token]) -> list[_Span]:
    spans = []
    for m in re.finditer(r"``\s*(.+?)\s*''|\"([^\"]+)\"|“([^”]+)”", question):
        start, end = next((m.start(g), m.end(g)) for g in (1, 2, 3) if m.group(g) is not None)
        inside = [i for i, t in enumerate(tokens) if start <= t.start and t.end <= end]
        if inside:
            spans.append(_Span(inside[0], inside[-1], "quote"))
    return spans


def _caps_spans(tokens: list[Token], taken: set[int]) -> list[_Span]:
    """Runs of capitalized words and numbers with lowercase connectors inside ("University of Notre
    Dame"); "and" separates two names here ("Steve Slavkin and Thomas Hill"), while a known name with
    "and" in it is found among the n-grams."""
    spans: list[_Span] = []
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
    return token.gap in {"", "&"} or (token.gap == "." and _abbreviation(prev))


def _trim_caps(tokens: list[Token], i: int, j: int) -> list[_Span]:
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
    if len(words) == 1 and words[0].lower in STOPWORDS:
        return []  # "I", "A"
    if all(t.lower.rstrip(".") in MONTHS for t in words if t.kind == "cap"):
        return []  # "Sept 2017" is a time, not a name
    return [_Span(i, j, "caps")]


def _pieces(tokens: list[Token], span: _Span) -> list[tuple[int, int]]:
    """The span and its parts between connectors, longest first: candidates for a known name."""
    inner = [k for k in range(span.first + 1, span.last) if tokens[k].lower in CONNECTORS]
    starts = [span.first, *(k + 1 for k in inner if tokens[k + 1].lower not in CONNECTORS)]
    ends = [span.last, *(k - 1 for k in inner if tokens[k - 1].lower not in CONNECTORS)]
    pieces = [
        (a, b) for a in starts for b in ends if a <= b and any(t.kind == "cap" for t in tokens[a : b + 1])
    ]
    return sorted(set(pieces), key=lambda p: (p[0] - p[1], p[0]))


def _merge_unknown(span: _Span, chosen: list[_Span], tokens: list[Token]) -> list[_Span]:
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
    fragments = len(overlapping) > 1 and all(c.size == 1 for c in overlapping)
    for i in range(span.first, span.last):
        a, b = owner.get(i), owner.get(i + 1)
        if a is not None and b is not None and a != b:
            fragments = True  # two known names touch
        elif (a is None) != (b is None):
            loose = tokens[i] if a is None else tokens[i + 1]
            demonym = a is None and i == span.first and _demonym(loose)
            if loose.kind == "cap" and not demonym:
                fragments = True  # an unknown word sticks to a known one
    if fragments:
        return [*(c for c in chosen if c not in overlapping), span]
    return [*chosen, *rest]


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


def _wh_phrase(tokens: list[Token]) -> _WhPhrase:
    n = len(tokens)
    index = _wh_index(tokens)
    if index is None:
        if n and tokens[0].lower in COPULAS | DO_WORDS | {"be"}:
            either = any(t.lower == "or" for t in tokens)
            return _WhPhrase("entity" if either else "other")  # "Is X or Y the ...?" picks one of them
        return _WhPhrase("other")
    wh = tokens[index].lower
    own = frozenset({index})
    if wh in {"who", "whom", "whose"}:
        return _WhPhrase("person", tokens=own)
    if wh == "when":
        return _WhPhrase("date", tokens=own)
    if wh == "where":
        return _WhPhrase("place", tokens=own)
    if wh == "why":
        return _WhPhrase("other", tokens=own)
    nxt = tokens[index + 1] if index + 1 < n else None
    if wh == "how":
        if nxt is None or nxt.lower not in HOW_NUMBER:
            return _WhPhrase("other", tokens=own)
        phrase_tokens = own | {index + 1}
        noun = tokens[index + 2] if index + 2 < n else None
        if (
            nxt.lower in {"many", "much"}
            and noun is not None
            and noun.kind == "word"
            and noun.lower not in STOPWORDS
        ):
            nouns = [index + 2]
            after = tokens[index + 3] if index + 3 < n else None
            if (
                noun.lower.endswith(("ic", "al"))
                and after
                and after.kind == "word"
                and after.lower not in STOPWORDS
            ):
                nouns.append(index + 3)  # "how many academic staff"
            return _WhPhrase(
                "number", " ".join(tokens[i].lower for i in nouns), phrase_tokens, frozenset(nouns)
            )
        return _WhPhrase("number", f"how {nxt.lower}", phrase_tokens)
    if nxt is not None and nxt.lower in COPULAS:
        return _copula_phrase(tokens, index)
    if nxt is None or nxt.lower in DO_WORDS:
        return _WhPhrase("other", tokens=own)
    return _noun_phrase(tokens, index)


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
        if t.text in {"which", "what"} and nxt.kind == "word" and nxt.lower not in STOPWORDS:
            return j
        if t.text == "how" and nxt.lower in HOW_NUMBER:
            return j
    return None


def _noun_phrase(tokens: list[Token], index: int) -> _WhPhrase:
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
        if t.lower in STOPWORDS:
            break
        answer_type = _type_noun(t.lower)
        if answer_type is None and t.lower.endswith("ed"):
            break  # "what happened": a verb, no noun
        run.append(i)
        if answer_type is not None:
            return _phrase(tokens, index, run, answer_type, in_relation=False)
    if not run:
        return _WhPhrase("other", tokens=frozenset({index}))
    return _phrase(tokens, index, run[:1], "entity", in_relation=False)


def _copula_phrase(tokens: list[Token], index: int) -> _WhPhrase:
    """ "what is the *population* of ...": the head noun after the copula; it stays in the relation."""
    run: list[int] = []
    for i in range(index + 2, min(index + 9, len(tokens))):
        t = tokens[i]
        if t.kind != "word" or t.lower in TYPE_ADJECTIVES:
            if run:
                break
            continue
        if t.lower in STOPWORDS:
            if run or t.lower not in {"the", "a", "an", "s"}:
                break
            continue
        run.append(i)
    if not run:
        return _WhPhrase("other", tokens=frozenset({index}))
    typed = [i for i in run if _type_noun(tokens[i].lower)]
    head = typed[-1] if typed else run[-1]
    answer_type = _type_noun(tokens[head].lower) or "entity"
    return _phrase(tokens, index, run[: run.index(head) + 1], answer_type, in_relation=True)


def _phrase(
    tokens: list[Token], index: int, run: list[int], answer_type: AnswerType, *, in_relation: bool
) -> _WhPhrase:
    phrase = " ".join(tokens[i].lower for i in run)
    wh_tokens = frozenset({index}) if in_relation else frozenset({index, *run})
    return _WhPhrase(answer_type, phrase, wh_tokens, frozenset(run))


# -- time -----------------------------------------------------------------------------------------


def _dates(question: str) -> tuple[list[str], list[tuple[int, int]]]:
    found: list[tuple[int, str, tuple[int, int]]] = []
    for pattern in DATE_PATTERNS:
        for m in pattern.finditer(question):
            if any(s < m.end() and m.start() < e for _, _, (s, e) in found):
                continue
            month = m.group("month")
            month_no = int(month) if month.isdigit() else MONTHS[month.lower().rstrip(".")]
            try:
                day = dt.date(int(m.group("year")), month_no, int(m.group("day")))
            except ValueError:
                continue
            found.append((m.start(), day.isoformat(), (m.start(), m.end())))
    found.sort()
    return list(dict.fromkeys(d for _, d, _ in found)), [span for _, _, span in found]


def _years(
    question: str, tokens: list[Token], date_spans: list[tuple[int, int]]
) -> tuple[list[int], set[int]]:
    """Four-digit years 1000-2099, "2009-10" as two years; not numbers in names ("Reno 1868 FC") nor
    counts ("1500 songs")."""
    years: list[int] = []
    used: set[int] = set()
    by_start = {t.start: i for i, t in enumerate(tokens)}
    for m in YEAR.finditer(question):
        if any(s <= m.start() < e for s, e in date_spans):
            continue
        i = by_start.get(m.start())
        if i is None:
            continue
        prev = tokens[i - 1] if i > 0 else None
        nxt = tokens[i + 1] if i + 1 < len(tokens) else None
        if (
            prev is not None
            and prev.kind == "cap"
            and not prev.gap
            and prev.lower not in STOPWORDS
            and prev.lower.rstrip(".") not in MONTHS
        ):
            continue
        if nxt is not None and m.group("to") is None and _count_noun(nxt):
            continue
        year = int(m.group("year"))
        years.append(year)
        to = m.group("to")
        if to:
            end = int(to) if len(to) == 4 else year - year % 100 + int(to)
            if len(to) == 2 and end < year:
                end += 100
            if year < end <= year + 100:
                years.append(end)
        used.update(j for j, t in enumerate(tokens) if m.start() <= t.start < m.end())
    return list(dict.fromkeys(years)), used


def _count_noun(token: Token) -> bool:
    word = token.lower
    return (
        token.kind == "word"
        and len(word) > 3
        and word.endswith("s")
        and not word.endswith("ss")
        and (word not in _COUNT_NOUN_EXCEPTIONS)
    )


def _cues(tokens: list[Token], in_mention: set[int]) -> tuple[list[TimeCue], set[int]]:
    cues: list[TimeCue] = []
    used: set[int] = set()
    for i, t in enumerate(tokens):
        cue = CUES.get(t.lower)
        if cue is None or i in in_mention:
            continue
        nxt = tokens[i + 1].lower if i + 1 < len(tokens) else ""
        prev = tokens[i - 1].lower if i > 0 else ""
        if nxt in _CUE_BLOCKERS.get(t.lower, ()) or (t.lower == "after" and prev == "named"):
            continue
        if t.lower in {"recent", "recently"} and prev != "most":
            continue
        if t.lower == "prior" and nxt != "to":
            continue
        used.add(i)
        if cue not in cues:
            cues.append(cue)
    return cues, used


INTENT_EXTRACTORS: dict[str, type[RuleIntentExtractor]] = {"rules": RuleIntentExtractor}
"""Intent extractors by the name ``EngineConfig.intent`` gives; an LLM extractor registers here."""
