"""The plan's operations over the statements and the graph: a lookup at the end of a chain, a count of
distinct values, a comparison of named entities, a superlative over a class in a place, yes/no.

Each returns an ``Outcome`` (an answer, or a refusal — answer None — with the reason) or raises
``CannotExecute`` when the plan cannot be followed with what the index holds (the router then asks the
next mode). Refusing and declining differ: a refusal is an answer ("unknown": the year asked has no
value, the name asked about is in no label), a decline says this mode cannot tell.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from index.statements import TypedStatement
from query.modes.plans import values as v
from query.modes.plans.graph_reads import PlanReads
from query.tabulate.entities import entity_name
from schemas.query import QuestionPlan


class CannotExecute(Exception):
    """The plan cannot be followed over this index; the message says why."""


@dataclass
class Outcome:
    answer: str | None  # None: the engine refrains ("unknown"), for ``note``'s reason
    note: str
    statements: list[TypedStatement] = field(default_factory=list)
    unit: str | None = None
    entity_id: str | None = None


@dataclass(frozen=True)
class Subject:
    entity_id: str
    label: str
    fuzzy: bool = False  # linked by a look-alike name ("English" → English Wikipedia), not its own


def follow(reads: PlanReads, start: Subject, hop_properties: list[str]) -> Subject:
    """One hop of a chain: the entity the first of ``hop_properties`` the subject holds names (``^P``:
    backwards, the entity whose P names the subject)."""
    for prop in hop_properties:
        if prop.startswith("^"):
            found = reads.backwards(start.entity_id, prop[1:])
            if len(found) == 1:
                return Subject(found[0][0], entity_name(found[0][1]))
            if len(found) > 1:
                raise CannotExecute(f"{len(found)} entities have {start.label} as {prop[1:]}")
            continue
        statements = v.current(reads.of(start.entity_id, [prop]))
        items = [s for s in statements if s.value_kind == "item" and s.value_item]
        if items:
            target = items[0]
            return Subject(target.value_item or "", entity_name(target.value_item_label))
    raise CannotExecute(f"{start.label} has no {' / '.join(hop_properties)} statement to follow")


def lookup(reads: PlanReads, subject: Subject, properties: list[str], plan: QuestionPlan) -> Outcome:
    found = reads.of(subject.entity_id, properties)
    by_prop = {p: [s for s in found if s.property == p] for p in properties}
    prop = next((p for p in properties if v.live(by_prop[p])), None)
    if prop is None:
        return Outcome(
            None, f"{subject.label} ({subject.entity_id}) has no statement of {', '.join(properties)}"
        )
    statements = by_prop[prop]
    years = plan.constraints.years
    if years:
        chosen = v.in_year(statements, years[0])
        if not chosen:
            near = v.nearest_year(statements, years[0])
            said = f"; {v.value_text(near)} in {near.point_in_time_year}" if near is not None else ""
            return Outcome(
                None, f"no {years[0]} value of {prop} for {subject.label}{said}", [near] if near else []
            )
    else:
        chosen = v.current(statements)
    chosen = [s for s in chosen if s.value_item != subject.entity_id] or chosen
    unnamed = [s for s in chosen if s.value_kind == "item" and not s.value_item_label]
    if unnamed and len(unnamed) == len(chosen):  # the text may name what the dumps cannot: let it
        ids = ", ".join(sorted({s.value_item or "" for s in unnamed}))
        raise CannotExecute(f"the {prop} value ({ids}) of {subject.label} has no label in the index")
    chosen = [s for s in chosen if s not in unnamed]
    chosen.sort(key=lambda s: s.value_language not in (None, "en"))  # a demonym in English first
    best = chosen[0]
    unit = best.value_unit_label if best.value_kind == "quantity" and best.value_unit else None
    item = best.value_item if best.value_kind == "item" else None
    return Outcome(v.value_text(best), f"{subject.label} {prop} = {v.value_text(best)}", chosen, unit, item)


def count(reads: PlanReads, subject: Subject, properties: list[str]) -> Outcome:
    """Distinct best-rank values of the subject's property, leaving out those with an end time."""
    for prop in properties:
        statements = v.best_rank(reads.of(subject.entity_id, [prop]))
        ongoing = [s for s in statements if s.end_time is None]
        distinct = {s.value_item or s.value_text: s for s in ongoing}
        if distinct:
            names = ", ".join(v.value_text(s) for s in distinct.values())
            note = f"{len(distinct)} distinct {prop} values of {subject.label} without an end time: {names}"
            return Outcome(str(len(distinct)), note, list(distinct.values()))
    return Outcome(None, f"{subject.label} has no {' / '.join(properties)} statement to count")


def _values(
    reads: PlanReads, subjects: list[Subject], prop: str, year: int | None
) -> dict[str, tuple[v.Measure, TypedStatement]]:
    found = reads.of_many([s.entity_id for s in subjects], [prop])
    out = {}
    for subject in subjects:
        own = [s for s in found if s.subject == subject.entity_id]
        chosen = v.in_year(own, year) if year is not None else v.current(own)
        measured = [(m, s) for s in chosen if (m := v.measure(s)) is not None]
        if measured:
            out[subject.entity_id] = measured[0]
    return out


def rank(reads: PlanReads, subjects: list[Subject], properties: list[str], plan: QuestionPlan) -> Outcome:
    """The subject with the largest (``pick`` max) or smallest value of the first property they all
    hold, by the ordinal asked; both values and their statements are kept."""
    pick = plan.constraints.pick or "max"
    year = plan.constraints.years[0] if plan.constraints.years else None
    labels = {s.entity_id: s.label for s in subjects}
    for prop in properties:
        measured = _values(reads, subjects, prop, year)
        if len(measured) < 2 or (plan.operation == "compare" and len(measured) < len(subjects)):
            continue
        units = {m.unit for m, _ in measured.values()}
        if len(units) > 1:
            raise CannotExecute(
                f"the {prop} values are in units that do not convert: {sorted(map(str, units))}"
            )
        ordered = sorted(measured.items(), key=lambda kv: kv[1][0].number, reverse=pick == "max")
        k = plan.constraints.ordinal - 1
        if k >= len(ordered):
            raise CannotExecute(f"only {len(ordered)} members have a {prop} value")
        winner, (best, _) = ordered[k]
        if any(m.number == best.number for e, (m, _) in ordered if e != winner):
            return Outcome(None, f"a tie on {prop}: no single answer", [s for _, (_, s) in ordered])
        shown = ordered if plan.operation == "compare" else ordered[:5]
        said = "; ".join(f"{labels[e]}: {_with_unit(s)}" for e, (_, s) in shown)
        note = f"{pick} of {prop} over {len(measured)} of {len(subjects)}: {said}"
        return Outcome(labels[winner], note, [s for _, (_, s) in shown], None, winner)
    raise CannotExecute(f"too few of the {len(subjects)} entities hold {' / '.join(properties)}")


def threshold(reads: PlanReads, subject: Subject, properties: list[str], plan: QuestionPlan) -> Outcome:
    c = plan.constraints
    year = c.years[0] if c.years else None
    for prop in properties:
        measured = _values(reads, [subject], prop, year)
        if subject.entity_id not in measured:
            continue
        value, statement = measured[subject.entity_id]
        limit = v.threshold_measure(c.threshold or 0.0, c.threshold_unit, value)
        holds = {
            ">": value.number > limit.number,
            ">=": value.number >= limit.number,
            "<": value.number < limit.number,
            "<=": value.number <= limit.number,
        }[c.comparator or ">"]
        asked = f"{c.comparator} {c.threshold:g} {c.threshold_unit or ''}".strip()
        note = f"{subject.label} {prop} = {_with_unit(statement)} against {asked}"
        return Outcome("yes" if holds else "no", note, [statement])
    raise CannotExecute(f"{subject.label} has no {' / '.join(properties)} value to compare")


INVERSES = {"P36": "P1376", "P1376": "P36", "P150": "P131", "P131": "P150"}


def membership(reads: PlanReads, subject: Subject, value: Subject, properties: list[str]) -> Outcome:
    """Whether one of ``properties`` links the two entities, either way round (a capital is asked of
    the city or of the country; a border or a twin town from either side)."""
    props = list(dict.fromkeys([*properties, *(INVERSES[p] for p in properties if p in INVERSES)]))
    found = reads.of_many([subject.entity_id, value.entity_id], props)
    held = [s for s in v.best_rank(found) if s.end_time is None and s.value_kind == "item"]
    pairs = {(subject.entity_id, value.entity_id), (value.entity_id, subject.entity_id)}
    linking = [s for s in held if (s.subject, s.value_item) in pairs]
    if linking:
        return Outcome(
            "yes",
            f"{linking[0].subject_label} {linking[0].property} {linking[0].value_item_label or value.label}",
            linking,
        )
    own = [s for s in held if s.subject == subject.entity_id] or [
        s for s in held if s.subject == value.entity_id
    ]
    if not own:
        raise CannotExecute(f"neither {subject.label} nor {value.label} has a {' / '.join(props)} statement")
    unnamed = [s for s in own if not s.value_item_label]
    if unnamed and (subject.fuzzy or value.fuzzy):
        # a look-alike was linked ("Is English an official language in Malta?": "English" → English
        # Wikipedia), and a value the index holds no name for may be the entity meant: no is not known
        raise CannotExecute(
            f"{len(unnamed)} of {own[0].subject_label or own[0].subject}'s {own[0].property} values have no "
            f"name in the index, so that they do not link {subject.label} and {value.label} is not known"
        )
    said = ", ".join(v.value_text(s) for s in own[:5])
    who = own[0].subject_label or own[0].subject
    return Outcome(
        "no", f"{who}'s {own[0].property}: {said}; they do not link {subject.label} and {value.label}", own
    )


def named_value(
    reads: PlanReads, subject: Subject, properties: list[str], question: str, value: str | None = None
) -> Outcome:
    """Yes when one of the subject's values of ``properties`` is named in the question ("Do they pay
    with the *euro* in Portugal?"); the value's label must occur as whole words.

    No when the question names a value (``value``, "Was *Latin* Hegel's mother tongue?") that shares no
    word with any of the subject's values, all items, every one of which has a label: an unnamed value
    might be the one asked about, and then the plan cannot say.
    """
    held = [s for s in v.best_rank(reads.of(subject.entity_id, properties)) if s.end_time is None]
    if not held:
        raise CannotExecute(f"{subject.label} has no {' / '.join(properties)} statement to check")
    lowered = question.casefold()
    for s in held:
        if s.value_item == subject.entity_id:
            continue  # "Does Angola belong to …": Angola's own name in its P17 is not a value asked about
        label = (s.value_item_label or s.value_text or "").casefold()
        if label and re.search(rf"\b{re.escape(label)}\b", lowered):
            return Outcome("yes", f"{subject.label} {s.property} {label}", [s])
    others = [s for s in held if s.value_item != subject.entity_id]
    # items only: a name is no reading of a date or an amount ("Was Hegel born in Bavaria?" read as P569)
    labels = [s.value_item_label or "" for s in others] if all(s.value_item for s in others) else []
    if (
        value
        and not _ACRONYM.search(value)  # "UK" shares no word with "United Kingdom": no sign of a no
        and labels
        and all(labels)
        and not any(_share_a_word(value, label) for label in labels)
    ):
        said = ", ".join(labels[:5])
        return Outcome("no", f"{subject.label} {' / '.join(properties)}: {said}; not {value}", held[:5])
    raise CannotExecute(f"no {' / '.join(properties)} value of {subject.label} is named in the question")


_ACRONYM = re.compile(r"\b[A-Z]{2,5}\b|\b(?:[A-Z]\.){2,}")


def _share_a_word(a: str, b: str) -> bool:
    """Whether two names share a word, a word's start counting for it ("Democrat", "Democratic Party")."""
    left = set(re.findall(r"\w{3,}", a.casefold()))
    right = set(re.findall(r"\w{3,}", b.casefold()))
    return any(x.startswith(y) or y.startswith(x) for x in left for y in right)


def _with_unit(statement: TypedStatement) -> str:
    unit = statement.value_unit_label if statement.value_unit else None
    return f"{v.value_text(statement)} {unit}" if unit else v.value_text(statement)
