"""A plan grounded in the statements of the entity it is about: the relation words the rules left
unread are matched against the names (label and aliases, from the property table) of the properties
that entity actually holds, and of the entity a hop reaches — not against a list of everyday words.

Three things are read this way, each only where the rules' plan is short of something:

- **the property**, when the plan has none, or has one the subject holds no statement of: "carried how
  many masts" is P1099 (*number of masts*) because the ship holds P1099 and "masts" is the one specific
  word of its name; a unit word reads the quantity whose values are in that unit ("above the 900-metre
  mark": the one property of the place measured in metres);
- **a hop**, when an unread word names an item-valued property the subject holds ("the city that housed
  X's *headquarters*": P159; "X stands in a *country* founded when": P17), and either the subject has no
  statement of the asked property or the word also says what the hop reaches (the reached entity's label
  or description holds it: "that *country*'s population" reaches a country) or the hop leaves the
  index (then the plan refuses: the hop lands where no statement can be read);
- **the unit**: words of the unit the answer's values carry ("in US dollars") are read, not unexplained.

A name matches when every specific word of it is among the question's words (the words a property
name uses for its datatype — number, date, year, … — may be missing) and one of the unread words is
among them. The entity's own statements restrict the candidates to a few dozen, so a one-word match is
a reading here where it would be noise over the whole property table. Everything read is written into
the plan's ``resolved`` and ``notes``; the question's words are only ever compared with names, never
put into a query.
"""

from __future__ import annotations

import re
from collections.abc import Iterable
from dataclasses import dataclass

from index.statements import TypedStatement
from query.lexicon import NUMBER_WORDS, word_set
from query.modes.plans import operations as ops
from query.modes.plans import values as v
from query.modes.plans.graph_reads import PlanReads
from query.modes.plans.operations import Subject
from query.understand import plan_words
from query.understand.properties import PropertyLabels, stem
from query.understand.tokens import content_words
from schemas.query import QuestionPlan

DATATYPE_WORDS = frozenset(
    stem(w) for w in word_set("number date year time count total type rate amount identifier id")
)
"""Words a property's name uses to say what kind of value it holds ("*number of* masts", "launch *date*",
"visitors per *year*", "Smithsonian volcano *identifier*"): a question may leave them out."""
IDENTIFIER_WORDS = frozenset(stem(w) for w in word_set("code"))
READABLE = frozenset({"wikibase-item", "quantity", "time", "string", "monolingualtext", "external-id"})
PROPERTY_GAIN = 0.5  # the rules take 0.5 off a plan with no property; a property read here gives it back
WORD_GAIN = 0.1  # and 0.1 for every unread word it reads


@dataclass(frozen=True)
class HeldMatch:
    property: str
    name: str
    covered: frozenset[str]  # the question's stemmed words the name reads


def held_match(
    words: set[str],
    unread: set[str],
    held: Iterable[str],
    properties: PropertyLabels,
    datatypes: frozenset[str] = READABLE,
) -> HeldMatch | None:
    """The held property whose label or alias the question says best: every specific word of the name
    among ``words``, at least one of them ``unread``; more words read first, then a label before an
    alias, then the older (more general) property."""
    words = words | {_DIGITS[w] for w in words if w in _DIGITS}  # "three-letter" says alpha-"3"
    found = _held_matches(words, unread, held, properties, datatypes, lenient=False)
    if not found:
        # a standard's name without its number ("the FIPS code": FIPS 10-4) when only one held name says it
        found = _held_matches(words, unread, held, properties, datatypes, lenient=True)
        if len({m.property for _, m in found}) != 1:
            return None
    return max(found, key=lambda km: km[0])[1] if found else None


def _held_matches(
    words: set[str],
    unread: set[str],
    held: Iterable[str],
    properties: PropertyLabels,
    datatypes: frozenset[str],
    lenient: bool,
) -> list[tuple[tuple, HeldMatch]]:
    """Every held name the words say, with its ranking key (``held_match``)."""
    out = []
    for pid in held:
        if properties.datatype(pid) not in datatypes:
            continue
        for name, is_label, name_words in properties.names(pid):
            covered, missing = _said(name_words, words)
            squeezed = stem("".join(content_words(name)))
            if len(name_words) > 1 and squeezed in words and not covered:  # "PMCID" says "PMC ID"
                covered, missing = {squeezed}, set()
            optional = _optional(name, name_words, covered, lenient)
            if properties.datatype(pid) == "external-id":
                optional |= IDENTIFIER_WORDS  # "its ISO number": an identifier's name may not say "code"
            if not covered & unread or missing - DATATYPE_WORDS - optional:
                continue
            said_by = {w for w in name_words if ADJECTIVES_OF.get(w, frozenset()) & words}  # "digit": numeric
            unsaid = name_words - covered - said_by
            key = (len(covered), is_label, -len(unsaid), -_rank(pid))
            out.append((key, HeldMatch(pid, name, frozenset(covered))))
    return out


_DIGITS = {stem(word): str(n) for n, word in enumerate(NUMBER_WORDS)}


def _possessed(question: str, mention: str) -> frozenset[str]:
    """The stemmed lower-case words (up to three) the question says right after "<mention>'s", up to the
    first word that ends the noun phrase ("Brazil's *population* is split …")."""
    m = re.search(rf"{re.escape(mention)}(?:'s|\u2019s)((?:\s+(?-i:[a-z]+)){{1,3}})", question)
    said = []
    for word in m.group(1).split() if m else []:
        if word in _PHRASE_ENDS:
            break
        said.append(word)
    return frozenset(stem(w) for w in content_words(" ".join(said)))


_PHRASE_ENDS = word_set(
    "is are was were be been has have had does do did can will would in on of at by for to from with and or "
    "that which who whose when where"
)


def _optional(name: str, name_words: frozenset[str], covered: set[str], lenient: bool = False) -> set[str]:
    """Words of a property's name a question may leave out besides the datatype's: the standard's
    numbers ("ISO *3166-1* numeric code") once two other words of the name are said (*ISO* alone is not
    ISNI's "ISO 27729"), an aside in parentheses ("FIPS 10-4 *(countries and regions)*") and the
    nationality that says whose scheme it is ("*Norwegian* municipality number", "*German* municipality
    key": the subject already lies there)."""
    numbers = {w for w in name_words if any(c.isdigit() for c in w)}
    if len(covered - numbers) < 2 and not lenient:
        numbers = set()
    aside = {stem(w) for part in re.findall(r"\(([^()]*)\)", name) for w in content_words(part)}
    return numbers | aside | {stem(w.lower()) for w in name.split() if plan_words.NATIONALITY.fullmatch(w)}


ADJECTIVES_OF = {stem(noun): frozenset(stem(a) for a in adjectives.split()) for noun, adjectives in (
    ("width", "wide"), ("breadth", "broad wide"), ("depth", "deep"), ("length", "long"),
    ("height", "high tall top"), ("weight", "heavy"), ("mass", "heavy"), ("speed", "fast"),
    ("phone", "ring call dial telephone"), ("telephone", "ring call dial phone"),
    ("encoded", "coding codes made comes"),  # "the gene coding for the protein", "a protein made from a gene"
    ("alpha", "letter"),  # "the three-letter code": ISO 3166-1 alpha-3
    ("numeric", "digit"),  # "its three-digit ISO number": ISO 3166-1 numeric code
)}  # fmt: skip
"""A dimension's noun → the adjective a question says it with ("more than 12 metres *wide*": *width*,
an alias of a ship's beam); a telephone's noun → the verbs it is used with ("numbers you can *ring*");
"encoded by" → the verbs a protein's gene is said with.
English, not data: which property is meant still comes from what the subject holds."""


def _said(name_words: frozenset[str], words: set[str]) -> tuple[set[str], set[str]]:
    """The question's words that say a name's words (a word itself, or its adjective for a dimension's
    noun), and the name's words it does not say."""
    covered, missing = set(), set()
    for word in name_words:
        if word in words:
            covered.add(word)
        elif said := ADJECTIVES_OF.get(word, frozenset()) & words:
            covered |= said
        else:
            missing.add(word)
    return covered, missing


def unit_match(unread: set[str], held: dict[str, list[TypedStatement]]) -> tuple[str, str] | None:
    """The one held quantity whose values are in a unit an unread word names ("metre"): (property, word)."""
    found: dict[str, str] = {}
    for pid, statements in held.items():
        for s in statements:
            if s.value_kind == "quantity" and s.value_unit_label:
                said = {stem(w) for w in content_words(s.value_unit_label)} & unread
                if said:
                    found.setdefault(pid, sorted(said)[0])
    return next(iter(found.items())) if len(found) == 1 else None


class Grounding:
    """Reads the plan's unread words against the statements of the entities it names; stateless."""

    def __init__(self, reads: PlanReads, properties: PropertyLabels):
        self.reads, self.properties = reads, properties

    def ground(self, plan: QuestionPlan, question: str, subject: Subject) -> None:
        """Fills in what the rules left out of a lookup, count or yes/no of one subject (in place)."""
        if plan.operation not in ("lookup", "count", "yes_no") or len(plan.relations) > 1:
            return
        mention_words = {stem(w) for m in plan.mentions for w in content_words(m)}
        words = {stem(w) for w in content_words(question)} - mention_words
        before = {stem(w) for w in plan.unexplained}
        unread = set(before)
        counted: set[str] = set()
        if plan.operation == "count" and (m := plan_words.COUNTED.search(question)):
            counted = {stem(w) for w in content_words(m.group(1))} - mention_words  # the counted noun
        had_property = bool(_final(plan))
        held = self._held(subject.entity_id)
        if self._after_rules_hop(plan, subject, words, unread, counted):
            plan.unexplained = [w for w in plan.unexplained if stem(w) in unread]
            gained = len(before) - len({stem(w) for w in plan.unexplained})
            plan.confidence = round(min(0.9, plan.confidence + WORD_GAIN * gained), 3)
            return
        answered_from = held  # the statements the answer is read from: the subject's, or the hop's end's
        if plan.operation == "count" and not had_property and counted:
            match = held_match(words, unread | counted, held, self.properties)
            reached = None
            if match is not None and not match.covered & counted:
                # the words read name an item the subject holds ("X's seat of government"); what is
                # counted ("partner cities") may be that item's: a hop, then the count there
                items = [
                    s for s in v.current(held[match.property]) if s.value_kind == "item" and s.value_item
                ]
                if items and self.reads.known(items[0].value_item or ""):
                    there = self._held(items[0].value_item or "")
                    if held_match(words, counted, there, self.properties) is not None:
                        unread, reached = self._hop(plan, subject, held, words, unread, [], True)
            if reached is not None:
                answered_from = reached
                unread = self._property(plan, reached, words, unread | counted, "the entity reached")
            elif match is not None:
                self._set_final(plan, match.property, match.name, f"{subject.label}'s own property")
                unread -= match.covered
        elif (named := self._named_identifier(plan, held, words, unread)) is not None:
            self._set_final(plan, named.property, named.name, f"{subject.label}'s own identifier, named")
            unread -= named.covered
        elif (wider := self._wider(plan, held, words, unread)) is not None:
            self._set_final(
                plan, wider.property, wider.name, f"{subject.label}'s own property, a longer name"
            )
            unread -= wider.covered
        elif _final(plan) and plan.operation != "yes_no" and unread:
            final = _final(plan)
            needed = not any(p in held for p in final)
            possessed = _possessed(question, plan.mentions[0])
            unread, reached = self._hop(plan, subject, held, words, unread, final, needed, possessed)
            answered_from = reached if reached is not None else held
            if reached is not None and (wider := self._wider(plan, reached, words, unread)) is not None:
                self._set_final(
                    plan, wider.property, wider.name, "the reached entity's property, a longer name"
                )
                unread -= wider.covered
        final = _final(plan)
        if not final or not any(p in answered_from for p in final):
            label = subject.label if answered_from is held else "the entity the hop reaches"
            unread = self._property(plan, answered_from, words, unread | counted, label)
        if final := _final(plan):
            unread -= _unit_words([s for p in final for s in answered_from.get(p, [])])
        plan.unexplained = [w for w in plan.unexplained if stem(w) in unread]
        gained = len(before) - len({stem(w) for w in plan.unexplained})
        added = not had_property and bool(final) and plan.operation != "yes_no"
        if gained or added:
            plan.confidence = round(min(0.9, plan.confidence + (PROPERTY_GAIN if added else 0.0)
                                        + WORD_GAIN * gained), 3)  # fmt: skip

    def ground_chain(self, plan: QuestionPlan, subject: Subject) -> None:
        """An LLM plan's relation phrases, hop by hop, held to what each entity on the way holds: a
        phrase whose property the entity does not hold (or that maps to none) is read against the
        entity's own property names; a hop's property is followed to the next entity (in place)."""
        entity: str | None = subject.entity_id
        for i, phrase in enumerate(plan.relations):
            if entity is None:
                return
            held = self._held(entity)
            key = f"relation:{phrase}"
            props = [p for p in plan.resolved.get(key, "").split(",") if p]
            last = i == len(plan.relations) - 1
            if not any(p.lstrip("^") in held for p in props):
                said = {stem(w) for w in content_words(phrase)}
                kinds = READABLE if last else frozenset({"wikibase-item"})
                match = held_match(said, said, held, self.properties, kinds)
                if match is not None:
                    plan.resolved[key] = match.property
                    plan.notes.append(
                        f"{phrase!r} → {match.property} (the entity's own property {match.name!r})"
                    )
                    props = [match.property]
            if last:
                return
            items = [
                s
                for p in props
                for s in v.current(held.get(p, []))
                if s.value_kind == "item" and s.value_item
            ]
            entity = items[0].value_item if items else None
            if entity is not None and not self.reads.known(entity):
                return

    def _after_rules_hop(
        self, plan: QuestionPlan, subject: Subject, words: set[str], unread: set[str], counted: set[str]
    ) -> bool:
        """A chain whose hop the rules read ("the country Corral lies in") and nothing after it: the
        asked property is read from the unread (and counted) words against the properties of the entity
        the hop reaches, not the subject's (``unread`` is updated in place)."""
        if not 1 <= len(plan.relations) <= 2 or plan.relations[0] not in plan_words.HOP_PROPERTIES:
            return False
        if not any(n.startswith("chain: first hop") for n in plan.notes) or not (unread | counted):
            return False
        if len(plan.relations) == 2 and not unread:
            return False  # the rules read the asked property and every word: nothing to ground
        hop = plan.relations[0]
        props = [p for p in plan.resolved.get(f"relation:{hop}", "").split(",") if p]
        try:
            reached = ops.follow(self.reads, subject, props)
        except ops.CannotExecute:
            return False
        if not self.reads.known(reached.entity_id):
            return False
        plan.notes.append(f"hop {hop!r} → {reached.label} ({reached.entity_id}), the rules' chain hop")
        there = self._held(reached.entity_id)
        if len(plan.relations) == 2:  # the rules' property, kept unless the reached entity's reads more
            match = held_match(words, unread, there, self.properties)
            if match is None or not match.covered & unread:
                return False
            plan.relations.pop()
        left = self._property(plan, there, words, unread | counted, reached.label)
        if _final(plan) == props:
            return False
        unread.intersection_update(left)
        return True

    # -- the parts -----------------------------------------------------------------------------------

    def _held(self, entity_id: str) -> dict[str, list[TypedStatement]]:
        held: dict[str, list[TypedStatement]] = {}
        for s in self.reads.of_all(entity_id):
            if s.rank != "deprecated":
                held.setdefault(s.property, []).append(s)
        return held

    def _property(
        self, plan: QuestionPlan, held: dict[str, list[TypedStatement]], words: set[str], unread: set[str],
        label: str,
    ) -> set[str]:  # fmt: skip
        """The asked property among the entity's own: by name, else by the unit an unread word names."""
        match = held_match(words, unread, held, self.properties)
        if match is not None:
            self._set_final(plan, match.property, match.name, f"{label}'s own property {match.name!r}")
            return unread - match.covered
        units = {stem(w) for w in content_words(plan.constraints.threshold_unit or "")}
        if (unit := unit_match(unread | units, held)) is not None:
            prop, word = unit
            self._set_final(plan, prop, word, f"the one property of {label} measured in {word!r}")
            return unread - {word}
        return unread

    def _named_identifier(
        self, plan: QuestionPlan, held: dict[str, list[TypedStatement]], words: set[str], unread: set[str]
    ) -> HeldMatch | None:
        """An identifier the subject holds, named by unread words, where the rules read only where the
        subject lies from a verb ("Which ISTAT code *belongs to* Siena?"): an identifier is never a place,
        and a question that names one asks it."""
        final = _final(plan)
        if not final or not set(final) <= plan_words.PLACE_PROPERTIES or plan.operation != "lookup":
            return None
        return held_match(words, unread, held, self.properties, frozenset({"external-id"}))

    def _wider(
        self, plan: QuestionPlan, held: dict[str, list[TypedStatement]], words: set[str], unread: set[str]
    ) -> HeldMatch | None:
        """A held property whose name says the rules' relation words and unread ones beside them: "area
        code" is P473 (*local dialing code*, alias "area code"), not the area "area" alone names."""
        final = _final(plan)
        if not final or plan.operation == "yes_no" or not unread:
            return None
        said = {stem(w) for w in content_words(plan.relations[-1])}
        match = held_match(words, unread, held, self.properties)
        if match is None or match.property in final or not said <= match.covered:
            return None
        return match

    def _hop(
        self,
        plan: QuestionPlan,
        subject: Subject,
        held: dict[str, list[TypedStatement]],
        words: set[str],
        unread: set[str],
        final: list[str],
        needed: bool,
        possessed: frozenset[str] = frozenset(),
    ) -> tuple[set[str], dict[str, list[TypedStatement]] | None]:
        """A hop through an item-valued property an unread word names, before the asked property; the
        words left unread and the statements of the entity reached (None: no hop). Words said as the
        subject's possession ("Chile's *central bank*") are a hop whatever they reach: the question asks
        about the thing possessed, not the subject."""
        hops = {p: s for p, s in held.items() if p not in final}
        match = held_match(words, unread, hops, self.properties, frozenset({"wikibase-item"}))
        if match is None:
            return unread, None
        items = [s for s in v.current(held[match.property]) if s.value_kind == "item" and s.value_item]
        if not items:
            return unread, None
        reached = items[0].value_item or ""
        known = self.reads.known(reached)
        said = self._says_kind(reached, match.covered)
        if not known:  # nothing to read of it: the word must itself name a kind of thing ("country")
            said = bool(match.covered & {stem(n) for n in plan_words.CLASS_SYNONYMS})
        said = said or (bool(match.covered) and match.covered <= possessed)
        if not (needed or said):
            return unread, None
        phrase = match.name.lower()
        plan.relations.insert(len(plan.relations) - 1 if final else len(plan.relations), phrase)
        plan.resolved[f"relation:{phrase}"] = match.property
        why = (
            "the subject holds no statement of the asked property" if needed
            else "the question names what it reaches"
        )  # fmt: skip
        plan.notes.append(f"hop {phrase!r} → {match.property} ({subject.label}'s own property; {why})")
        return unread - match.covered, self._held(reached) if known else {}

    def _says_kind(self, entity_id: str, covered: frozenset[str]) -> bool:
        """Whether the reached entity's label or description says what one of the hop's words names
        ("country": a "republic in Southwestern Europe"), by the class words superlatives use."""
        info = self.reads.entities.get(entity_id)
        if info is None:
            return False
        said = {stem(w) for w in content_words(f"{info.label} {info.description or ''}")}
        kinds = set(covered)
        for noun, synonyms in plan_words.CLASS_SYNONYMS.items():
            if stem(noun) in covered:
                kinds |= {stem(w) for s in synonyms for w in content_words(s)}
        return bool(said & kinds)

    def _set_final(self, plan: QuestionPlan, prop: str, phrase: str, how: str) -> None:
        phrase = phrase.lower()
        hops = [r for r in plan.relations if any(n.startswith(f"hop {r!r}") for n in plan.notes)]
        if plan.relations and plan.relations[-1] not in hops:  # the rules' relation, not held: replaced
            plan.relations[-1] = phrase
        else:
            plan.relations.append(phrase)
        plan.resolved[f"relation:{phrase}"] = prop
        if plan.operation == "count" and self.properties.datatype(prop) == "quantity":
            plan.operation = "lookup"  # "how many masts": the quantity's value, not a count of statements
            plan.notes.append(f"a count of {prop}, a quantity: read as its value")
        if plan.operation == "lookup":
            kinds = {"quantity": "number", "time": "date", "wikibase-item": "entity"}
            plan.answer_kind = kinds.get(self.properties.datatype(prop) or "", "text")  # type: ignore[assignment]
        plan.notes.append(f"{phrase!r} → {prop} ({how})")


def _final(plan: QuestionPlan) -> list[str]:
    if not plan.relations:
        return []
    return [p for p in plan.resolved.get(f"relation:{plan.relations[-1]}", "").split(",") if p]


def _unit_words(statements: list[TypedStatement]) -> set[str]:
    """The stemmed words of the units the values are in ("United States dollar")."""
    return {
        stem(w)
        for s in statements
        if s.value_kind == "quantity" and s.value_unit_label
        for w in content_words(s.value_unit_label)
    }


def _rank(pid: str) -> int:
    return int(pid[1:]) if pid[1:].isdigit() else 1 << 30


__all__ = ["DATATYPE_WORDS", "Grounding", "HeldMatch", "held_match", "unit_match"]
