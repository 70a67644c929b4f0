"""What one evidence row offers as answer candidates: its structured values, entities and prose literals.

A KG statement offers its value and qualifier values, a table row or infobox its cell values, every row
the entities it links (by label), and a passage the dates, years, numbers with what they count, places
and capitalized names it writes. Each candidate is a ``Draft``: its text, its kind, and where it came
from; ``query.read.scoring`` turns them into features.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from dataclasses import dataclass

from query.lexicon import COUNT_WORDS, MONTH_ALTERNATION, SEARCH_STOPWORDS
from query.retrieve.evidence_store import EvidenceRow

# full dates, also as released text writes them ("November 15 , 1962"), and partial ones ("11 May",
# "September 1998")
_DATE = re.compile(
    rf"\b(?:\d{{1,2}} (?:{MONTH_ALTERNATION})(?: \d{{4}})?|(?:{MONTH_ALTERNATION}) \d{{1,2}}(?: ?, ?\d{{4}})?"
    rf"|(?:{MONTH_ALTERNATION}) \d{{4}}|\d{{4}}-\d{{2}}-\d{{2}})\b"
)
_SCALE = r"(?: (?:million|billion|trillion|thousand|hundred))?"
_QUANTITY = re.compile(
    rf"\b\d+(?:st|nd|rd|th)(?: [a-z]+\b)?|(?:\$ ?)?(?<![\w.])\d[\d,.]*{_SCALE}(?: ?%| [a-z]+\b)?"
)
"""A number with what it counts: '$ 130 million', '20%', '52 years', '10th place' (the word is kept
as a second candidate beside the bare number, the scorer decides)."""
_NUMBER_WORD = re.compile(r"\b(?:" + "|".join(COUNT_WORDS) + r")\b", re.IGNORECASE)
_PLACE = re.compile(r"\b[A-Z][\w'.-]+(?: [A-Z][\w'.-]+)* ?, [A-Z][\w'.-]+(?: [A-Z][\w'.-]+)*")
"""'Roanoke , Virginia': a place and the region it is in."""
_YEAR = re.compile(r"\b(?:1[0-9]{3}|20[0-9]{2})\b")
_NUMBER = re.compile(r"(?<![\w.])\d{1,3}(?:,\d{3})+(?:\.\d+)?(?![\w])|(?<![\w.])\d+(?:\.\d+)?(?![\w])")
_NAME = re.compile(r"\b[A-Z][\w'.-]*(?:(?<![a-z][a-z]\.)\s+(?:of|the|de|von|van|and|&)?\s*[A-Z][\w'.-]*)*")
"""Capitalized words in a row; a word that ends a sentence ("Thessaloniki. His") ends the name, while
initials and short abbreviations ("Vaughn Jr. Smith", "St. Louis") do not."""
SENTENCE_END = re.compile(r"(?<=[.!?;])\s+")
_CELL = re.compile(r"(?:^|, )([^:,]{1,60}): ")
_PAREN = re.compile(r"\s*\([^)]*\)$")


@dataclass
class Draft:
    text: str
    kind: str
    entity_id: str | None = None
    header: str | None = None  # the column header or infobox key of a structured value
    structured: bool = False  # a cell, infobox or KG value rather than a span found in prose


_BARE_ID = re.compile(r"[QPL][1-9]\d*")


def body(row: EvidenceRow) -> str:
    """The evidence text without its 'Page / Section: ' context prefix."""
    prefix, sep, rest = row.text.partition(": ")
    return rest if sep and (prefix == row.title or prefix.startswith(row.title + " /")) else row.text


def literal_kind(value: str) -> str:
    if _DATE.fullmatch(value):
        return "date"
    if _YEAR.fullmatch(value):
        return "year"
    if _NUMBER.fullmatch(value):
        return "number"
    return "name"


def kg_values(row: EvidenceRow) -> list[str]:
    """'Belgium, population, 11,150,516, point in time: 1 January 2014' → value and qualifier values."""
    parts = row.text.split(", ")
    if len(parts) < 3:
        return []
    rest = ", ".join(parts[2:])
    value, *qualifiers = re.split(r", (?=[a-z][\w ()-]*: )", rest)
    return [value] + [q.split(": ", 1)[1] for q in qualifiers if ": " in q]


def cell_values(text: str) -> list[tuple[str, str]]:
    """(header, value) pairs: 'Year: 1995 (68th), Film: Heat' → [('Year', '1995 (68th)'), …]."""
    heads = list(_CELL.finditer(text))
    values = []
    for i, head in enumerate(heads):
        end = heads[i + 1].start() if i + 1 < len(heads) else len(text)
        value = text[head.end() : end].strip()
        if value:
            values.append((head.group(1).strip(), value))
    return values


def extract(row: EvidenceRow, label_of: Callable[[str], str | None]) -> list[Draft]:
    """Every answer candidate one evidence row offers."""
    drafts: list[Draft] = []
    text = body(row)
    values: list[tuple[str | None, str]] = []
    if row.source_type == "kg":
        values = [(None, v) for v in kg_values(row)]
    elif row.source_type == "table":
        values = list(cell_values(text))
    elif row.source_type == "infobox":
        key, sep, value = text.partition(": ")
        values = [(key, value) if sep else (None, text)]
    for header, value in values:
        drafts.append(
            Draft(_PAREN.sub("", value).strip(), literal_kind(value), header=header, structured=True)
        )
        drafts += [Draft(m.group(0), "date", header=header) for m in _DATE.finditer(value)]
        drafts += [Draft(m.group(0), "year", header=header) for m in _YEAR.finditer(value)]
    for entity_id in row.entity_ids:
        label = label_of(entity_id) or (None if re.fullmatch(r"Q\d+", entity_id) else entity_id)
        if label:
            drafts.append(Draft(_PAREN.sub("", label).strip(), "entity", entity_id))
    if row.source_type == "text":
        drafts += prose_candidates(text)
    for draft in drafts:
        draft.text = draft.text.strip(" .,;:")
    # a statement whose item has no label in the slice says its bare id: that is never an answer
    return [d for d in drafts if d.text and len(d.text) <= 80 and not _BARE_ID.fullmatch(d.text)]


def prose_candidates(text: str) -> list[Draft]:
    """Dates, years, numbers with what they count, and names found in a passage.

    A name is also offered without its first word ("CEO Penelope Endersby" → "Penelope Endersby") and
    with a year before it ("2016 Summer Olympics"); a single capitalized word counts too ("Somme").
    """
    drafts = [Draft(m.group(0), "date") for m in _DATE.finditer(text)]
    drafts += [Draft(m.group(0), "year") for m in _YEAR.finditer(text)]
    for m in _NUMBER.finditer(text):
        if not _YEAR.fullmatch(m.group(0)):
            drafts.append(Draft(m.group(0), "number"))
    for m in _QUANTITY.finditer(text):
        words = m.group(0).split()
        if words[-1] in SEARCH_STOPWORDS:
            words = words[:-1]
        if words and not _NUMBER.fullmatch(" ".join(words)):
            drafts.append(Draft(" ".join(words), "number"))
    drafts += [Draft(m.group(0), "number") for m in _NUMBER_WORD.finditer(text)]
    drafts += [Draft(m.group(0), "name") for m in _PLACE.finditer(text)]
    for m in _NAME.finditer(text):
        name = m.group(0).strip()
        words = name.split()
        if words[0].lower() in SEARCH_STOPWORDS and len(words) > 1:
            words = words[1:]  # a sentence-initial "The", "In", "His"
        if len(words) == 1 and words[0].lower() in SEARCH_STOPWORDS:
            continue
        drafts.append(Draft(" ".join(words), "name"))
        if len(words) >= 3:
            drafts.append(Draft(" ".join(words[1:]), "name"))
        year = re.search(r"\b(?:1[0-9]{3}|20[0-9]{2}) $", text[max(0, m.start() - 5) : m.start()])
        if year:
            drafts.append(Draft(year.group(0) + name, "name"))
    return drafts
