"""Which Wikidata properties a relation phrase may express: "population" -> P1082, "born" -> P569/P19.

The property table (labels, aliases, datatypes) is read once; a phrase is matched against every label
and alias by content words, with a light stemmer and a short hand-written list of verb -> noun cues
for the verbs questions use where Wikidata has nouns ("directed" -> director, "died" -> date of death).

Scores lie in [0, 1]:
  - 1.0 / 0.95: the whole phrase is the label / an alias (after normalization);
  - 0.55-0.9:   every content word of a name occurs in the phrase, more the larger the share of the
                phrase the name covers (a cue counts as a one-word name, plus 0.05);
  - below 0.45: some words of a name occur in the phrase.
Then times a datatype factor (external ids and media rarely answer questions) and, when the caller
knows the answer type, a small penalty for datatypes that cannot hold it (a date is not an item).
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path

from index.aliases import normalize_mention
from ingest.wikidata.properties import read_bundled_properties
from query.lexicon import IRREGULAR_STEMS, VERB_CUES
from query.understand.tokens import content_words, singular
from schemas.query import AnswerType, PropertyMatch

_DOUBLED = re.compile(r"([bdfgkmnprt])\1$")


def stem(word: str) -> str:
    """A light English stemmer (plural, -ed, -ing, final e), so 'directed' and 'directing' meet."""
    w = word.lower()
    if w in IRREGULAR_STEMS:
        return IRREGULAR_STEMS[w]
    w = singular(w)
    if len(w) > 5 and w.endswith("ing"):
        w = _DOUBLED.sub(r"\1", w[:-3])
    elif len(w) > 4 and w.endswith("ed"):
        w = _DOUBLED.sub(r"\1", w[:-2])
    if len(w) > 3 and w.endswith("e"):
        w = w[:-1]
    return w


_CUES: dict[str, tuple[str, ...]] = {}
for _word, _labels in VERB_CUES.items():
    _CUES[stem(_word)] = tuple(dict.fromkeys(_CUES.get(stem(_word), ()) + _labels))


def cue_stems(label: str) -> frozenset[str]:
    """Stemmed question words that stand for the property labelled ``label`` ('found' for 'inception')."""
    return frozenset(word for word, labels in _CUES.items() if label in labels)


_DATATYPE_FACTOR = {
    "wikibase-item": 1.0,
    "quantity": 1.0,
    "time": 1.0,
    "string": 0.9,
    "monolingualtext": 0.9,
    "globe-coordinate": 0.9,
    "external-id": 0.5,
}
_OTHER_DATATYPE_FACTOR = 0.7
_DATATYPE_FOR_ANSWER: dict[str, tuple[str, ...]] = {
    "date": ("time",),
    "year": ("time",),
    "number": ("quantity",),
    "person": ("wikibase-item",),
    "place": ("wikibase-item", "globe-coordinate"),
    "organization": ("wikibase-item",),
    "entity": ("wikibase-item",),
}
ANSWER_TYPE_MISMATCH = 0.85
CUE_BONUS = 0.05  # a hand-written cue outranks an alias that merely shares the word ("directs")


@dataclass(frozen=True)
class _Name:
    property: str
    label: str
    name: str  # the label or alias as written
    is_label: bool
    words: frozenset[str]  # stemmed content words


@dataclass(frozen=True)
class _Property:
    label: str
    datatype: str | None
    rank: int  # numeric part of the id: older (smaller) properties are the general ones


class PropertyLabels:
    """The property table, indexed by normalized name and by stemmed word; read-only after loading."""

    def __init__(self, rows: list[dict]):
        self._properties: dict[str, _Property] = {}
        self._by_norm: dict[str, list[_Name]] = {}
        self._by_word: dict[str, list[_Name]] = {}
        self._by_label: dict[str, str] = {}
        self._names: dict[str, list[_Name]] = {}
        self._squeezed: dict[str, str] = {}  # a name of several words written as one → its property
        for row in rows:
            pid = row["id"]
            self._properties[pid] = _Property(row["label"], row.get("datatype"), _id_rank(pid))
            self._by_label.setdefault(normalize_mention(row["label"]), pid)
            names = [(row["label"], True), *((a, False) for a in row.get("aliases") or [])]
            for name, is_label in names:
                norm = normalize_mention(name)
                if not norm:
                    continue
                entry = _Name(
                    pid, row["label"], name, is_label, frozenset(stem(w) for w in content_words(name))
                )
                self._by_norm.setdefault(norm, []).append(entry)
                if " " in norm:
                    self._squeezed.setdefault(norm.replace(" ", ""), pid)
                self._names.setdefault(pid, []).append(entry)
                for w in entry.words:
                    self._by_word.setdefault(w, []).append(entry)

    @classmethod
    def load(cls, path: Path) -> PropertyLabels:
        """Read the bundled TSV (id, label, datatype, aliases joined by '|', description) once."""
        path = Path(path)
        if not path.exists():
            raise FileNotFoundError(
                f"property table {path} not found: it ships as data/wikidata-properties.tsv.gz"
            )
        return cls(read_bundled_properties(path))

    def __len__(self) -> int:
        return len(self._properties)

    def label(self, property_id: str) -> str | None:
        prop = self._properties.get(property_id)
        return prop.label if prop else None

    def datatype(self, property_id: str) -> str | None:
        prop = self._properties.get(property_id)
        return prop.datatype if prop else None

    def names(self, property_id: str) -> list[tuple[str, bool, frozenset[str]]]:
        """The property's label and aliases: (name as written, is the label, its stemmed content words)."""
        return [(n.name, n.is_label, n.words) for n in self._names.get(property_id, [])]

    def written_together(self, phrase: str) -> str | None:
        """The property one of whose names of several words the phrase writes as one ("PMCID": PMC ID)."""
        return self._squeezed.get(normalize_mention(phrase).replace(" ", ""))

    def named(self, phrase: str) -> str | None:
        """The property whose whole label (else whole alias) the phrase is, after normalization; the
        older property when several share it."""
        names = self._by_norm.get(normalize_mention(phrase), [])
        for wanted in (True, False):
            found = sorted({n.property for n in names if n.is_label == wanted}, key=_id_rank)
            if found:
                return found[0]
        return None

    def match(self, phrase: str, k: int = 5, *, answer_type: AnswerType | None = None) -> list[PropertyMatch]:
        """Up to k properties the phrase may express, best first; [] when nothing matches."""
        if k < 1:
            return []
        norm = normalize_mention(phrase)
        words = [stem(w) for w in content_words(phrase)]
        if not norm or not words:
            return []
        phrase_words = set(words)
        in_order = list(dict.fromkeys(words))  # not the set: which name of a property a tie keeps must
        # not follow the hash seed (it decides what words the matched name explains downstream)
        best: dict[str, tuple[float, str]] = {}

        def offer(name: _Name, score: float) -> None:
            if score > best.get(name.property, (0.0, ""))[0]:
                best[name.property] = (score, name.name)

        for name in self._by_norm.get(norm, []):
            offer(name, 1.0 if name.is_label else 0.95)
        seen: set[int] = set()
        for w in in_order:
            for name in self._by_word.get(w, []):
                if id(name) in seen:
                    continue
                seen.add(id(name))
                offer(name, _overlap_score(name, phrase_words))
        for w in in_order:
            for label in _CUES.get(w, ()):
                pid = self._by_label.get(label)
                if pid is not None:
                    cue = _Name(pid, label, label, True, frozenset({w}))
                    offer(cue, min(1.0, CUE_BONUS + _overlap_score(cue, phrase_words)))
        ranked = []
        for pid, (score, matched) in best.items():
            prop = self._properties[pid]
            final = score * _datatype_factor(prop.datatype, answer_type)
            ranked.append((-final, _datatype_rank(prop.datatype), prop.rank, pid, matched, final))
        ranked.sort()
        return [
            PropertyMatch(
                property=pid, label=self._properties[pid].label, matched=matched, score=round(final, 4)
            )
            for _, _, _, pid, matched, final in ranked[:k]
        ]


def _overlap_score(name: _Name, phrase_words: set[str]) -> float:
    if not name.words:
        return 0.0
    shared = len(name.words & phrase_words)
    if shared == len(name.words):
        return 0.55 + 0.35 * min(1.0, len(name.words) / len(phrase_words))
    return 0.45 * (shared / len(name.words)) * (0.5 + 0.5 * shared / len(phrase_words))


def _datatype_factor(datatype: str | None, answer_type: AnswerType | None) -> float:
    factor = _DATATYPE_FACTOR.get(datatype or "", _OTHER_DATATYPE_FACTOR)
    wanted = _DATATYPE_FOR_ANSWER.get(answer_type or "")
    if wanted and datatype not in wanted:
        factor *= ANSWER_TYPE_MISMATCH
    return factor


def _datatype_rank(datatype: str | None) -> int:
    return 0 if _DATATYPE_FACTOR.get(datatype or "", _OTHER_DATATYPE_FACTOR) >= 1.0 else 1


def _id_rank(pid: str) -> int:
    digits = pid[1:]
    return int(digits) if digits.isdigit() else 1 << 30
