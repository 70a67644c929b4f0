"""The KG lookup mode: when a question names an entity and a property the index holds, the answer is a
statement, not a guess among candidates.

Linked entities (each mention's top candidates, not only the best) by property readings (the intent's
property matches, the answer-type noun read as a property — "which *country*" → P17 —, and inverse or
sub-property readings stored on the same subject — "capital of" → P1376) → their typed statements
(``index.statements``). Among the statements of the best (entity, property) pair:

- deprecated statements never answer;
- a year in the question keeps the statements whose point in time, or start/end interval, covers it;
  no covering statement means the mode declines rather than answer for another year;
- "first" / "last" order the statements by time;
- otherwise preferred rank wins, then the most recent.

Item values answer by label, never by bare id (an unlabelled value is skipped, and the mode declines
when nothing labelled is left), and never with the entity asked about (Belgium's country is Belgium);
quantities answer with the amount and keep the unit apart; dates keep their precision, or give the
year when the question asks for one. The statement's evidence row is the supporting evidence, so
provenance is that of the KG verbalizer.

Questions that ask more than one property of one entity ("the population of the city where X was
born") are left to the other modes: after the entity, the relation, the answer-type noun and the time
are taken out, no more than ``max_residual_words`` content words may remain.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import dataclass
from typing import Protocol

from pydantic import BaseModel, ConfigDict, Field

from index.statements import TypedStatement
from index.verbalize.values import format_amount, format_time
from query.modes.base import Declined, Understanding
from query.retrieve.evidence_store import EvidenceRow
from query.understand.plan_words import YES_NO_START
from query.understand.properties import PropertyLabels, content_words, cue_stems, stem
from schemas.answers import StageTiming
from schemas.query import AnswerCandidate, KgFact, PropertyMatch, QueryResult

NAME = "kg-lookup"


class KgLookupSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    entities_per_mention: int = Field(3, ge=1, description="candidates of each mention looked up")
    min_link_score: float = Field(0.05, ge=0.0, description="weaker entity candidates are not looked up")
    min_property_score: float = Field(
        0.55, ge=0.0, le=1.0, description="property matches below this are not read as the relation"
    )
    max_residual_words: int = Field(
        1, ge=0, description="content words the entity, relation, type and time leave unexplained"
    )
    max_evidence: int = Field(10, ge=1, description="statements of the chosen pair shown as evidence")


INVERSE_READINGS: dict[str, tuple[str, ...]] = {
    "P36": ("P1376",),  # capital ↔ capital of: "Which country is Lisbon the capital of?"
    "P1376": ("P36",),
    "P150": ("P131",),  # contains the administrative territorial entity ↔ located in
    "P131": ("P150",),
}
"""Properties whose reading on the same subject answers the question when the asked one is absent."""

SUB_PROPERTY_READINGS: dict[str, tuple[str, ...]] = {
    "P17": ("P131",),  # country: a region is located in its country when no P17 is stated
    "P571": ("P1619",),  # inception: date of official opening
}
"""Narrower or neighbouring properties read when the asked one has no statement on the subject."""

_RANK_ORDER = {"preferred": 0, "normal": 1, "deprecated": 2}
GENERIC_WORDS = frozenset(stem(w) for w in ("year", "date", "time", "located", "situated", "lie", "lies"))
"""Words that ask for a value's form or place, not for another property ("In which *year* …")."""


class StatementLookup(Protocol):
    """What the mode needs of the statement store (``index.statements.StatementStore``)."""

    def lookup(
        self, subjects: Sequence[str], properties: Sequence[str] | None = None
    ) -> list[TypedStatement]: ...


class EvidenceLookup(Protocol):
    def get(self, evidence_ids: list[str]) -> list[EvidenceRow]: ...


@dataclass(frozen=True)
class _Reading:
    property: str
    score: float
    via: str  # how the property was read: 'relation', 'answer type', 'inverse of P36', …


@dataclass(frozen=True)
class _Subject:
    entity_id: str
    label: str
    mention: str
    score: float


class KgLookupMode:
    name = NAME

    def __init__(
        self,
        statements: StatementLookup | None,
        evidence: EvidenceLookup,
        properties: PropertyLabels,
        index_version: str,
        settings: KgLookupSettings | None = None,
    ):
        self.statements = statements
        self.evidence = evidence
        self.properties = properties
        self.index_version = index_version
        self.settings = settings or KgLookupSettings()

    # -- what the question asks ------------------------------------------------------------------------

    def subjects(self, understanding: Understanding) -> list[_Subject]:
        out: dict[str, _Subject] = {}
        for link in understanding.links:
            for cand in link.candidates[: self.settings.entities_per_mention]:
                if cand.score >= self.settings.min_link_score and cand.entity_id not in out:
                    out[cand.entity_id] = _Subject(cand.entity_id, cand.label, link.mention.text, cand.score)
        return sorted(out.values(), key=lambda s: -s.score)

    def readings(self, understanding: Understanding) -> list[_Reading]:
        """Properties the question may ask for, best first, each once."""
        intent = understanding.intent
        found: dict[str, _Reading] = {}

        def offer(match: PropertyMatch, via: str, factor: float = 1.0) -> None:
            score = match.score * factor
            if score >= self.settings.min_property_score and score > found.get(match.property, _NONE).score:
                found[match.property] = _Reading(match.property, score, via)

        for match in intent.properties:
            offer(match, "relation")
        if intent.answer_type_phrase:
            for match in self.properties.match(intent.answer_type_phrase, 3, answer_type=intent.answer_type):
                if match.score >= 0.95:  # the noun is a property's name: "which country", "what capital"
                    offer(match, "answer type")
        for reading in list(found.values()):
            for table, via in ((INVERSE_READINGS, "inverse"), (SUB_PROPERTY_READINGS, "narrower")):
                for other in table.get(reading.property, ()):
                    if other not in found:
                        label = self.properties.label(other) or other
                        offer(
                            PropertyMatch(property=other, label=label, matched=label, score=reading.score),
                            f"{via} reading of {reading.property}",
                            0.9,
                        )
        return sorted(found.values(), key=lambda r: -r.score)

    def residual(self, understanding: Understanding, reading: _Reading) -> list[str]:
        """Content words neither the entity mentions, the property read, the type noun nor the time
        explain: 'largest', 'city' in "the population of the largest city of …"."""
        intent = understanding.intent
        explained = set(GENERIC_WORDS) | {str(y) for y in intent.time.years}
        for text in [m.text for m in intent.mentions] + [intent.answer_type_phrase or ""]:
            explained.update(stem(w) for w in content_words(text))
        label = self.properties.label(reading.property) or ""
        names = [label, *(m.matched for m in intent.properties if m.property == reading.property)]
        explained.update(stem(w) for name in names for w in content_words(name))
        explained |= cue_stems(label)
        return [w for w in content_words(understanding.question) if stem(w) not in explained]

    # -- the mode --------------------------------------------------------------------------------------

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        if self.statements is None:
            return 0.0, "the index has no typed statements (built before the statements stage): rebuild it"
        if YES_NO_START.match(understanding.question):
            return 0.0, "a yes/no question: a value looked up is not its answer"
        subjects = self.subjects(understanding)
        if not subjects:
            return 0.0, "no entity linked in the question"
        readings = self.readings(understanding)
        if not readings:
            return 0.0, "the question names no Wikidata property"
        best = readings[0]
        extra = self.residual(understanding, best)
        if len(extra) > self.settings.max_residual_words:
            words = ", ".join(repr(w) for w in extra)
            return 0.0, f"the question says more than one entity and one property ({words})"
        return (
            round(min(0.99, 0.5 + 0.5 * best.score), 4),
            f"entity {subjects[0].label!r} ({subjects[0].entity_id}) and property "
            f"{self.properties.label(best.property) or best.property} ({best.property}, {best.via})",
        )

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        started = time.perf_counter()
        estimate, why = self.estimate(understanding)
        if estimate <= 0.0:
            return Declined(self.name, why)
        subjects = self.subjects(understanding)
        readings = self.readings(understanding)
        assert self.statements is not None  # estimate said so
        found = self.statements.lookup([s.entity_id for s in subjects], [r.property for r in readings])
        by_pair: dict[tuple[str, str], list[TypedStatement]] = {}
        for st in found:
            by_pair.setdefault((st.subject, st.property), []).append(st)
        reasons: list[str] = []
        pairs = sorted(
            ((s, r) for s in subjects for r in readings if (s.entity_id, r.property) in by_pair),
            key=lambda p: -(p[0].score * p[1].score),
        )
        for subject, reading in pairs:
            chosen, why_not = self.choose(by_pair[(subject.entity_id, reading.property)], understanding)
            if chosen:
                ms = (time.perf_counter() - started) * 1000
                return self.result(understanding, subject, reading, chosen, estimate, ms)
            reasons.append(f"{subject.label} ({subject.entity_id}) / {reading.property}: {why_not}")
        if not pairs:
            asked = ", ".join(f"{r.property}" for r in readings[:3])
            names = ", ".join(f"{s.label} ({s.entity_id})" for s in subjects[:3])
            return Declined(self.name, f"no statement of {asked} for {names}")
        return Declined(self.name, "; ".join(reasons[:3]))

    def choose(
        self, statements: list[TypedStatement], understanding: Understanding
    ) -> tuple[list[TypedStatement], str]:
        """The statements that answer, best first, or ([], why none does)."""
        live = [s for s in statements if s.rank != "deprecated" and s.value_kind != "none"]
        if not live:
            return [], "only deprecated or no-value statements"
        labelled = [s for s in live if s.value_kind != "item" or s.value_item_label]
        if not labelled:
            ids = ", ".join(sorted({s.value_item or "" for s in live}))
            return [], f"the value ({ids}) has no label in the index"
        if understanding.intent.answer_type in ("date", "year"):
            # "On what date was X born?": a birth *name* is not a date, however close its property
            dated = [s for s in labelled if s.value_kind == "time"]
            if not dated:
                return [], f"a {understanding.intent.answer_type} is asked; no value is one"
            labelled = dated
        # Belgium's country is Belgium: a value that is the subject itself never answers a question about it
        labelled = [s for s in labelled if s.value_item != s.subject]
        if not labelled:
            return [], "the only value is the entity asked about itself"
        time_ = understanding.intent.time
        if time_.years:
            covering = [s for s in labelled if any(_covers(s, y) for y in time_.years)]
            if not covering:
                years = ", ".join(str(y) for y in time_.years)
                return [], f"no statement's time qualifiers cover {years}"
            labelled = covering
        if "first" in time_.cues or "last" in time_.cues:
            timed = [s for s in labelled if _when(s) is not None]
            if not timed:
                return [], "'first'/'last' asked, but no statement has a time qualifier"
            timed.sort(key=lambda s: _when(s) or 0, reverse="last" in time_.cues)
            return timed, ""
        labelled.sort(key=lambda s: (_RANK_ORDER.get(s.rank, 3), -(_when(s) or -(10**6))))
        return labelled, ""

    # -- the result ------------------------------------------------------------------------------------

    def result(
        self,
        understanding: Understanding,
        subject: _Subject,
        reading: _Reading,
        chosen: list[TypedStatement],
        estimate: float,
        ms: float,
    ) -> QueryResult:
        intent = understanding.intent
        best = chosen[0]
        answer, unit = answer_value(best, intent.answer_type)
        shown = chosen[: self.settings.max_evidence]
        rows = {r.evidence_id: r for r in self.evidence.get([s.evidence_id for s in shown if s.evidence_id])}
        evidence = [
            rows[s.evidence_id].scored(1.0 if i == 0 else 0.5 / i, retrieved_by=[NAME])
            for i, s in enumerate(shown)
            if s.evidence_id in rows
        ]
        values: dict[str, AnswerCandidate] = {}
        for s in chosen:
            text, _ = answer_value(s, intent.answer_type)
            if text not in values:
                values[text] = AnswerCandidate(
                    text=text,
                    entity_id=s.value_item if s.value_kind == "item" else None,
                    kind=_KIND.get(s.value_kind, "name"),
                    support=1.0,
                    type_match=1.0,
                    score=round(estimate if not values else estimate / (1 + len(values)), 4),
                    evidence_ids=[s.evidence_id] if s.evidence_id else [],
                )
        timings = dict(understanding.timings)
        timings["kg_lookup"] = ms
        return QueryResult(
            question=understanding.question,
            answer=answer,
            answer_entity_id=best.value_item if best.value_kind == "item" else None,
            unknown=False,
            confidence=estimate,
            evidence=evidence,
            supporting_evidence_ids=[best.evidence_id] if best.evidence_id in rows else [],
            candidates=list(values.values()),
            intent=intent,
            links=understanding.links,
            timings=[StageTiming(stage=k, ms=round(v, 3)) for k, v in timings.items()],
            reader=self.name,
            index_version=self.index_version,
            unit=unit,
            facts=[_fact(s) for s in shown],
        )


_NONE = _Reading("", 0.0, "")
_KIND = {"item": "entity", "quantity": "number", "time": "date"}


def answer_value(statement: TypedStatement, answer_type: str) -> tuple[str, str | None]:
    """(answer text, unit) of a statement's value: a label, an amount without its unit, a date."""
    kind = statement.value_kind
    if kind == "item":
        return statement.value_item_label or "", None
    if kind == "quantity":
        amount = format_amount(statement.value_amount_text, statement.value_amount)
        return amount, statement.value_unit_label if statement.value_unit else None
    if kind == "time":
        precision = statement.value_precision
        if answer_type == "year" and (precision is None or precision > 9):
            precision = 9
        return format_time(statement.value_time, precision, statement.value_year), None
    return statement.value_text or statement.value_string or "", None


def _when(statement: TypedStatement) -> int | None:
    """The year a statement holds from: its point in time, else its start, else its end."""
    for year in (statement.point_in_time_year, statement.start_year, statement.end_year):
        if year is not None:
            return year
    return None


def _covers(statement: TypedStatement, year: int) -> bool:
    if statement.point_in_time_year is not None:
        return statement.point_in_time_year == year
    if statement.start_year is None and statement.end_year is None:
        return False
    start = statement.start_year if statement.start_year is not None else -(10**6)
    end = statement.end_year if statement.end_year is not None else 10**6
    return start <= year <= end


def _fact(statement: TypedStatement) -> KgFact:
    qualifiers = ", ".join(
        f"{q.property_label or q.property}: {q.text}" for q in statement.qualifiers if q.text
    )
    return KgFact(
        statement_id=statement.statement_id,
        subject=statement.subject,
        subject_label=statement.subject_label,
        property=statement.property,
        property_label=statement.property_label,
        rank=statement.rank,
        value=statement.value_text or "",
        value_item=statement.value_item if statement.value_kind == "item" else None,
        qualifiers=qualifiers or None,
        evidence_id=statement.evidence_id,
    )
