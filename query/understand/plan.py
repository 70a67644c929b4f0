"""The rule planner: a question read into a ``QuestionPlan`` from what the engine already understood
(the intent's mentions and time, the linked entities) and a short list of everyday phrases
(``plan_words``), in a millisecond and without a model.

It decides the operation (yes/no by the auxiliary that opens the question; a count by "how many" and a
counted noun; a comparison by two or more named entities and "or"/"of"; a superlative by a superlative
word and a class noun; otherwise a lookup), a chain's first hop ("the capital of X", "the country X
lies in", "the state whose capital is X"), the relation phrases in order, the set, the constraints and
the answer kind, which follows the operation. Relation phrases are mapped to property ids here
(``property_for``: the everyday phrases, then the property table's labels and aliases); entity ids are
the modes' business, from the links.

The plan says how sure it is (``confidence``) and which content words it left unread
(``unexplained``): a plan with unread words or no property is what the LLM planner is asked about.
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from index.aliases import normalize_mention
from query.lexicon import SPOKEN_NUMBER_WORDS, word_set
from query.understand import plan_words as words
from query.understand.mentions import OPENING_WORDS, says_property
from query.understand.plan_constraints import constrain
from query.understand.plan_related import DescribedMember, RelatedSet, described_member, related_set
from query.understand.properties import PropertyLabels, stem
from query.understand.tokens import content_words
from query.understand.understanding import Understanding
from schemas.query import EntityCandidate, LinkedMention, PlanConstraints, PlanSet, QuestionPlan

MIN_PROPERTY_SCORE = 0.8  # a property-table match read as the relation only when it is this close
MIN_LINK_SCORE = 0.05

__all__ = [
    "PropertyReading",
    "RulePlanner",
    "plan_entity",
    "property_for",
    "residue_property",
    "unknown_name",
]


@dataclass(frozen=True)
class PropertyReading:
    """A relation phrase mapped to a property: the id, how it was found, the properties read when the
    subject has none of it, and the answer kind of a lookup of it."""

    property: str
    phrase: str
    via: str
    kind: str
    fallbacks: tuple[str, ...] = ()


def property_for(phrase: str, properties: PropertyLabels | None = None) -> PropertyReading | None:
    """The property a relation phrase asks for: the first everyday phrase found in it, else the
    property table's best label or alias when it matches closely."""
    for entry in words.PROPERTY_WORDS:
        if m := entry.pattern.search(phrase):
            return PropertyReading(entry.property, m.group(0), "everyday words", entry.kind, entry.fallbacks)
    if properties is not None and phrase.strip():
        for match in properties.match(phrase, 1):
            if match.score >= MIN_PROPERTY_SCORE:
                kind = _KIND_OF_DATATYPE.get(properties.datatype(match.property) or "", "text")
                return PropertyReading(match.property, match.matched, "property table", kind)
    return None


def residue_property(left: list[str], properties: PropertyLabels | None) -> PropertyReading | None:
    """The property the words a plan left unread name, together or one by one ("yearly budget":
    *budget*, P2769), for what a lookup's answer must be when no rule read its relation."""
    for phrase in (" ".join(left), *left):
        if reading := property_for(phrase, properties):
            return reading
    return None


_KIND_OF_DATATYPE = {"quantity": "number", "time": "date", "wikibase-item": "entity"}


@dataclass
class _Names:
    """The question's mentions: those linked to a Wikidata entity, and the names the index knows
    nothing of (a place that exists nowhere in the data). Mentions that only match a page or a word
    ("GDP", a capitalized first word) are neither."""

    linked: list[str]
    unlinked: list[str]
    owners: frozenset[str] = frozenset()  # names that are words of the next name ("Lyon's Museum …")


def plan_entity(link: LinkedMention, min_score: float = MIN_LINK_SCORE) -> EntityCandidate | None:
    """The mention's best Wikidata entity: a Q-id candidate matched exactly or by its normalized alias,
    or fuzzily when the label shares a word with the mention ("Hegel" is not "Achilles heel")."""
    said = {stem(w) for w in content_words(link.mention.text)}
    for cand in link.candidates:
        if cand.score < min_score or not _QID.fullmatch(cand.entity_id):
            continue
        if cand.match != "fuzzy" or said & {stem(w) for w in content_words(cand.label)}:
            return cand
    return None


def unknown_name(link: LinkedMention) -> bool:
    """A name the index knows nothing of: no candidate but fuzzy ones sharing no word with it. A single
    word opening the question ("Since …", "Count …") is a word, not a name."""
    if link.mention.start == 0 and " " not in link.mention.text.strip():
        return False
    if not any(c.isupper() for c in link.mention.text):
        return False
    said = {stem(w) for w in content_words(link.mention.text)}
    return all(
        c.match == "fuzzy" and not said & {stem(w) for w in content_words(c.label)} for c in link.candidates
    )


_QID = re.compile(r"Q\d+")


class RulePlanner:
    """Reads an ``Understanding`` into a ``QuestionPlan``; holds no mutable state."""

    name = "rules"

    def __init__(self, properties: PropertyLabels | None = None):
        self.properties = properties

    def run(self, understanding: Understanding) -> QuestionPlan:
        question = understanding.question
        names = _names(understanding, self.properties)
        years = list(understanding.intent.time.years) or _years(question, names)
        years = [y for y in years if not _ATTRIBUTIVE_YEAR.search(question.replace(str(y), "YYYY", 1))]
        hop = None if words.YES_NO_START.match(question) else _hop(question, names.linked + names.unlinked)
        rest = question
        if hop is not None:
            rest = question[: hop.start] + " " + question[hop.end :]
        for name in names.linked + names.unlinked:
            # and the capitalized words it continues leftwards ("People's" of "People's Republic of China")
            rest = re.sub(rf"(?:(?-i:[A-Z][\w\-]*)(?:'s|\u2019s)? )*{re.escape(name)}", " ", rest)
        op = _operation(question, names, rest)
        if op == "superlative" and hop is not None:
            op = "lookup"  # "the country Paul Richter was a citizen of … comes first": a chain, not a ranking
        if op in ("lookup", "yes_no") and not names.linked and not names.unlinked:
            # "Thai consumer prices", "Israeli children": a country's adjective is the subject asked about;
            # the mode reads it by the demonym statements
            names.unlinked += [
                link.mention.text
                for link in understanding.links
                if link.mention.start > 0 and words.NATIONALITY.fullmatch(link.mention.text)
            ][:1]
        notes: list[str] = []
        plan = QuestionPlan(operation=op, constraints=PlanConstraints(years=years), source="rules")
        plan.mentions = list(dict.fromkeys(names.linked + names.unlinked))
        reading = property_for(rest, self.properties)
        if reading is None and _PEOPLE_COUNTED.search(question) and (people := _people(understanding)):
            # "How many Malians were there?", "more Sierra Leoneans than Malians": a people counted by
            # its name asks its country's population; the mode finds the country by its demonym
            reading = PropertyReading("P1082", people, "a people named by its plural demonym", "number")
        if op == "count" and reading is not None and reading.kind == "date":
            # "On how many platforms was X released?": no count is of dates; what is counted says it
            notes.append(f"{reading.phrase!r} ({reading.property}) is a date: not what a count counts")
            reading = None
        if op == "count" and reading is not None and reading.kind == "number":
            # "how many souls lived in X": the number is a quantity's value, not a count of statements
            op = plan.operation = "lookup"
            notes.append(f"a count of {reading.property}, a quantity: read as its value")
        related = _related(question, rest, names, op, reading, hop, self.properties)
        if related is not None:
            op = plan.operation = "superlative"
            reading = _rank_related(plan, related, question, names, hop, notes)
            hop = None
        described = None
        if related is None and op in ("lookup", "count") and hop is None:
            said = [link.mention.text for link in understanding.links]
            described = _described(question, rest, names, said, reading, self.properties)
        if described is not None:
            reading = _pick_described(plan, described, names, notes)
        if op == "superlative" and related is None:
            plan.set = _class_set(question, names)
            if plan.set.place and plan.set.place in plan.mentions:
                plan.mentions.remove(plan.set.place)
        if op == "compare":
            plan.set = PlanSet(entities=list(names.linked))
        if hop is not None:
            plan.relations.append(hop.relation)
            plan.resolved[f"relation:{hop.relation}"] = ",".join(words.HOP_PROPERTIES[hop.relation])
            notes.append(f"chain: first hop {hop.relation!r} from {hop.entity!r}")
            plan.mentions = [hop.entity] + [
                m for m in plan.mentions if m != hop.entity and m not in hop.entity
            ]
        if (
            related is None
            and reading is not None
            and not (hop is not None and reading.property in _HOP_OWN[hop.relation])
        ):
            _relate(plan, reading, notes, ", of the member described" if described is not None else "")
        constrain(plan, question, reading)
        if op == "yes_no" and plan.constraints.threshold is None and plan.constraints.comparator is None:
            plan.constraints.value = _membership_value(question, understanding, plan.mentions)
            reading = _membership_reading(plan, reading, notes)
        plan.unexplained = _unexplained(question, plan, reading, hop, self.properties)
        if (
            op in ("superlative", "compare", "yes_no")
            and related is None
            and reading is not None
            and _only_a_cue(reading, rest)
            and plan.unexplained
            and (named := residue_property(plan.unexplained, self.properties))
            and named.property != reading.property
            and named.kind in ("number", "date")  # what is ranked; "summit" names an item (P610)
        ):
            # "Whose unemployment rate is lower": "lower" says which end is wanted; the property is
            # what the words left unread name (a cue names elevation or area only when nothing else does)
            _unrelate(plan, reading)
            notes.append(
                f"{reading.phrase!r} only says which end: the words {plan.unexplained} name the property"
            )
            reading = named
            _relate(plan, reading, notes)
            constrain(plan, question, reading)
            plan.unexplained = _unexplained(question, plan, reading, hop, self.properties)
        if (
            op in ("superlative", "compare")
            and reading is None
            and plan.unexplained
            and (residue := property_for(" ".join(plan.unexplained), self.properties))
        ):
            # the relation is what the names, the class, the cues and the constraints leave ("surface");
            # a plan with a subject is matched against the subject's own properties by the mode instead
            reading = residue
            _relate(plan, reading, notes, ", from the words left unread")
            constrain(plan, question, reading)
            plan.unexplained = _unexplained(question, plan, reading, hop, self.properties)
        owned = {stem(w) for owner in names.owners for w in content_words(owner)}
        plan.unexplained = [w for w in plan.unexplained if stem(w) not in owned]
        plan.answer_kind = _answer_kind(op, reading, hop)
        if related is not None and related.then is not None:
            plan.answer_kind = related.then.kind  # the lookup on the one ranked first answers
        plan.confidence = _confidence(plan, names, reading, hop)
        plan.notes = notes
        return plan


def _related(
    question: str,
    rest: str,
    names: _Names,
    op: str,
    reading: PropertyReading | None,
    hop: _Hop | None,
    properties: PropertyLabels | None,
) -> RelatedSet | None:
    """A ranking of one named entity's related items, when the question reads as one: a lookup or a
    superlative whose first property lists items and that a ranking word and a second property rank.
    A chain's first hop takes part only when it ends on the owner of the set ("the capital of
    Belgium's most populous neighbour": the capital is looked up on the neighbour ranked first)."""
    if op not in ("lookup", "superlative") or not names.linked:
        return None
    if hop is not None and not re.match(r"(?:'s|\u2019s)\b", question[hop.end :]):
        return None
    owner = hop.entity if hop is not None else names.linked[0]
    in_owner = re.search(rf"\b(?:in|within) (?:the )?{re.escape(owner)}", question)
    if owner.lower() in words.CONTINENTS or in_owner:
        return None  # "the largest city in Germany with …": a class in a place, not the place's related items
    return related_set(question, rest, reading, properties)


def _rank_related(
    plan: QuestionPlan, related: RelatedSet, question: str, names: _Names, hop: _Hop | None, notes: list[str]
) -> PropertyReading:
    """The plan of a related set's ranking: the owner as the only mention, the set's relation resolved
    under ``set:``, the ranking property first in the relations and what follows on the winner after it
    (a hop's relation, or a property the rest of the question names). Returns the ranking reading."""
    owner = hop.entity if hop is not None else names.linked[0]
    relation = related.relation
    _owned_set(plan, owner, relation, PlanSet(class_phrase=_class_noun(question)))
    notes.append(
        f"the set: {owner}'s {relation.phrase!r} ({relation.property}), ranked by {related.ranked.phrase!r}"
    )
    _relate(plan, related.ranked, notes)
    if hop is not None:
        plan.relations.append(hop.relation)
        plan.resolved[f"relation:{hop.relation}"] = ",".join(words.HOP_PROPERTIES[hop.relation])
        notes.append(f"then {hop.relation!r} of the one ranked first")
    elif related.then is not None:
        _relate(plan, related.then, notes, ", of the one ranked first")
    return related.ranked


def _owned_set(plan: QuestionPlan, owner: str, relation: PropertyReading, base: PlanSet) -> None:
    """The owner as the plan's only mention, and its set: what the relation lists (resolved under
    ``set:``), with what ``base`` says of it (the class noun, or the describing names)."""
    plan.mentions = [owner]
    plan.set = base.model_copy(update={"owner": owner, "relation": relation.phrase.lower()})
    plan.resolved[f"set:{relation.phrase.lower()}"] = ",".join((relation.property, *relation.fallbacks))


def _described(
    question: str,
    rest: str,
    names: _Names,
    said: list[str],
    reading: PropertyReading | None,
    properties: PropertyLabels | None,
) -> DescribedMember | None:
    """A member of the first name's related items that the question's other names describe, said as
    the owner's relation ("Helsinki's twin city in Norway", "the neighbour of Duisburg that …"). The
    describing names are any the question says (``said``: a page's title such as "Loire" too)."""
    if reading is None or not names.linked:
        return None
    owner, phrase = names.linked[0], re.escape(reading.phrase)
    name = re.escape(owner)
    owned = rf"{name}(?:'s|\u2019s)\s+(?:\w+\s+){{0,2}}{phrase}|{phrase}\w*\s+of\s+{name}"
    if not re.search(owned, question, re.I):
        return None
    others = [n for n in said if n != owner and n not in owner and n.lower() not in OPENING_WORDS]
    return described_member(rest, reading, others, properties)


def _pick_described(
    plan: QuestionPlan, described: DescribedMember, names: _Names, notes: list[str]
) -> PropertyReading:
    """The plan of a described member: the owner as the only mention, the set's relation resolved under
    ``set:``, the names that describe the member, and what is asked of it as the relation."""
    owner, relation = names.linked[0], described.relation
    _owned_set(plan, owner, relation, PlanSet(described=list(described.described)))
    said = ", ".join(repr(d) for d in described.described)
    notes.append(f"one of {owner}'s {relation.phrase!r} ({relation.property}), described by {said}")
    return described.then


_HOP_OWN = {
    "capital": {"P36"},
    "^capital": {"P36"},
    "country": {"P17", "P27"},
    "birthplace": {"P19", "P569"},
    "deathplace": {"P20", "P570"},
    "region": {"P131"},
    "seat": {"P159"},
    "^subject": {"P921"},
    "^origin": {"P495"},
}


def _relate(plan: QuestionPlan, reading: PropertyReading, notes: list[str], how: str = "") -> None:
    """The reading as the plan's next relation, its property (and fallbacks) resolved, and said so."""
    plan.relations.append(reading.phrase.lower())
    plan.resolved[f"relation:{reading.phrase.lower()}"] = ",".join((reading.property, *reading.fallbacks))
    notes.append(f"{reading.phrase!r} → {reading.property} ({reading.via}{how})")


def _unrelate(plan: QuestionPlan, reading: PropertyReading) -> None:
    """A reading another one replaces: out of the relations and the resolved ids."""
    plan.relations = [r for r in plan.relations if r != reading.phrase.lower()]
    plan.resolved.pop(f"relation:{reading.phrase.lower()}", None)


def _membership_reading(
    plan: QuestionPlan, reading: PropertyReading | None, notes: list[str]
) -> PropertyReading | None:
    """What a yes/no membership asks, by what its value names: a continent is P30 ("Is Israel part of
    Asia?"), an organisation is P463 ("Does Sierra Leone belong to the Commonwealth of Nations?"), where
    the words alone said a country or a region."""
    value = plan.constraints.value or ""
    said_place = reading is None or reading.property in ("P17", "P131")
    if value.lower() in words.CONTINENTS and said_place:
        if reading is not None:
            _unrelate(plan, reading)
        reading = PropertyReading("P30", value, "a continent's name", "entity")
        _relate(plan, reading, notes)
    elif reading is not None and said_place and words.ORGANISATION_WORDS.search(value):
        _unrelate(plan, reading)
        reading = PropertyReading("P463", reading.phrase, f"{value!r} names an organisation", "entity")
        _relate(plan, reading, notes)
    return reading


_HOP_NOUNS = frozenset(
    {stem(n) for n in words.CLASS_SYNONYMS} | {stem(n) for n in ("capital", "country", "nation")}
)

_CUE_PROPERTIES = frozenset({"P2044", "P2046"})

_ATTRIBUTIVE_YEAR = re.compile(
    r"\b(?:the|an?|its|this) YYYY (?!census|estimates?|figures?|counts?|data|values?|elections?|seasons?)"
    r"[a-z]",
    re.I,
)
"""A year that names its subject ("the 1884 article", "a 2019 video game") and is no time of the value."""


def _only_a_cue(reading: PropertyReading, rest: str) -> bool:
    """A reading of elevation or area from nothing but words saying which end is wanted ("lower",
    "highest", "large"): it names them only in a question whose other words name no property
    ("populous" is a cue and a property of its own). A word of the same property that is no cue
    ("at the highest altitude") names it."""
    if reading.property not in _CUE_PROPERTIES:
        return False
    cues = (words.MAX_CUES, words.MIN_CUES, words.EARLY_CUES, words.LATE_CUES, words.SUPERLATIVE_CUES)
    entry = next(e for e in words.PROPERTY_WORDS if e.property == reading.property)
    said = [m.group(0).strip() for m in entry.pattern.finditer(rest)] or [reading.phrase.strip()]
    return all(any(cue.fullmatch(phrase) for cue in cues) for phrase in said)


_PEOPLE_COUNTED = re.compile(r"\b(?:how many|count(?:ed)?|number(?:ed)?|more|fewer|less|most|least)\b", re.I)
"""Words that count a people ("How many Malians", "more Angolans than"); without one, a demonym is an
adjective ("Maltese athletes"), not the population asked."""


def _people(understanding: Understanding) -> str | None:
    """The first mention written as a people's plural ("Malians", "Sierra Leoneans", "Thais") that is
    no name of the index (a city called "Paris" is linked by its exact name and is no people)."""
    for link in understanding.links:
        cand = plan_entity(link)
        if words.PEOPLE_PLURAL.fullmatch(link.mention.text) and (cand is None or cand.match == "fuzzy"):
            return link.mention.text
    return None


def _years(question: str, names: _Names) -> list[int]:
    """The years a question says in digits that the intent did not read ("according to the 2002
    figures"): four-digit numbers from 1000 to 2099 outside the names."""
    rest = re.sub(r"\([^)]*\)", " ", question)  # "(2019 video game)": a title's year, not a time
    for name in names.linked + names.unlinked:
        rest = rest.replace(name, " ")
    return [int(y) for y in re.findall(r"(?<![\d,.])(1\d{3}|20\d{2})(?!\d)(?![,.]\d)", rest)]


@dataclass(frozen=True)
class _Hop:
    relation: str
    entity: str
    start: int
    end: int


def _hop(question: str, names: list[str] | None = None) -> _Hop | None:
    for pattern, relation in words.CHAIN_HOPS:
        if m := pattern.search(question):
            entity = m.group("e").strip()
            entity = re.sub(r"^(?:the |a )", "", entity)
            if m.start("e") == 0:  # "Name Malta's capital": the opening verb is no word of the name
                entity = re.sub(rf"^(?i:{'|'.join(sorted(OPENING_WORDS))})\s+", "", entity)
            end = m.end()
            # "the home country of cyclist Jelle Cant hold in …": the hop starts from the name the
            # open-ended group holds, not from all it ran on to
            inside = [
                n
                for n in sorted((n for n in names or [] if n in entity), key=len, reverse=True)
                # only lowercase words before it ("cyclist") and after it, none of them "of": the name
                # is not a part of a longer one ("the Republic of Valdoria", "origin of The Settlers")
                # (a leading "The" and a title's parenthesis are the name's: "The Settlers (2019 video game)")
                if not re.search(
                    r"\bof\b|\b(?-i:[A-Z])", _TITLE_PARTS.sub(" ", entity.replace(n, " ", 1)), re.I
                )
            ]
            if inside and inside[0] != entity:
                if m.end("e") == m.end():  # the group ran on to the end: the hop ends with the name
                    end = m.start("e") + m.group("e").index(inside[0]) + len(inside[0])
                entity = inside[0]
            if entity and entity[0].isupper():
                # "the country whose capital is X": the noun before the clause is the hop's too
                before = re.search(
                    r"\bthe (?:[a-z]+ )?(?:country|nation|state|land|city)\s+$", question[: m.start()], re.I
                )
                return _Hop(relation, entity, before.start() if before else m.start(), end)
    return None


_TITLE_PARTS = re.compile(r"^\s*(?-i:The)\b|\([^)]*\)")


def _names(understanding: Understanding, properties: PropertyLabels | None = None) -> _Names:
    linked, unlinked, opening = [], [], []
    owners = _possessors(understanding)
    for link in understanding.links:
        if link.mention.text in owners or link.mention.text.lower() in OPENING_WORDS:
            continue  # a word of the next name, or "Across", "Name" opening the question
        entity = plan_entity(link)
        first = link.mention.text.split()[0].lower() if link.mention.text.split() else ""
        if entity is None and (
            says_property(link.mention.text)
            or _a_property_s_name(link.mention.text, properties)
            or _an_identifier_s_name(link, understanding.question, properties)
            or (link.mention.start == 0 and first in OPENING_WORDS)
        ):
            continue  # "the DOI of …", "X's ORCID iD": a property's name; "Name the African …": a command
        if entity is not None:
            linked.append(link.mention.text)
        elif unknown_name(link) or words.PEOPLE_PLURAL.fullmatch(link.mention.text):
            unlinked.append(link.mention.text)  # a name the index lacks, or a people ("Angolans")
        elif link.mention.start == 0 and link.mention.text[:1].isupper():
            opening.append(link.mention.text)
    if not linked and not unlinked:  # "Hegel's year of birth?": the opening word is the only name
        linked = opening
    return _Names(linked, unlinked, frozenset(owners))


def _a_property_s_name(text: str, properties: PropertyLabels | None) -> bool:
    """Whether a capitalized phrase is written as a property's label or alias ("ORCID iD", "UN/LOCODE"):
    an identifier's name, which the grounding reads against the subject's own properties, not an entity."""
    if properties is None:
        return False
    said = normalize_mention(text)
    return any(normalize_mention(m.matched) == said for m in properties.match(text, 3))


def _an_identifier_s_name(link: LinkedMention, question: str, properties: PropertyLabels | None) -> bool:
    """An acronym no entity or page carries, said beside a word for a code, that is a word of a property's
    name ("Which ISTAT number", "the EU's NUTS … code", "the FIPS 10-4 scheme"): the identifier asked, left
    to the grounding, not a name the index lacks. Without the code's word it stays a name ("a member of
    NATO")."""
    text = link.mention.text
    if properties is None or not _ACRONYM_NAME.fullmatch(text) or plan_entity(link) is not None:
        return False
    if properties.written_together(text):
        return True  # "PMCID": the PMC ID
    near = question[max(0, link.mention.start - 40) : link.mention.end + 40]
    if not (_CODE_NOUN.search(near) or text.endswith("ID")):  # "PMCID" says its own
        return False
    said = set(normalize_mention(text).split())
    return any(said <= set(normalize_mention(m.matched).split()) for m in properties.match(text, 3))


_ACRONYM_NAME = re.compile(r"(?-i:[A-Z]{2,})(?:[ -]\d+(?:-\d+)?)?")
_CODE_NOUN = re.compile(r"\b(?:codes?|numbers?|ids?|identifiers?|keys?|schemes?)\b", re.I)


def _possessors(understanding: Understanding) -> set[str]:
    """Names that are part of the next name they own: in "Lyon's Museum of Fine Arts" the museum's
    entity is called "Museum of Fine Arts of Lyon", so "Lyon" is a word of its name, not a second
    entity of the question."""
    question, owners = understanding.question, set()
    for owner, owned in zip(understanding.links, understanding.links[1:], strict=False):
        between = question[owner.mention.end : owned.mention.start]
        cand = plan_entity(owned)
        if (
            re.fullmatch(r"(?:'s|\u2019s)\s+", between)
            and cand is not None
            and re.search(rf"\b{re.escape(owner.mention.text)}\b", cand.label)
        ):
            owners.add(owner.mention.text)
    return owners


def _operation(question: str, names: _Names, rest: str) -> str:
    question = _CURRENT_FIGURE.sub(" ", question)  # "going by the most recent figure" ranks nothing
    named = len(names.linked) + len(names.unlinked)
    ranked = named >= 2 and any(
        cues.search(question) for cues in (words.MAX_CUES, words.MIN_CUES, words.EARLY_CUES, words.LATE_CUES)
    )
    # "Is Bonn or Kiel more populous?" opens like a yes/no question but asks to choose one of the names
    # (its answer is a name); "Is Bonn more populous than Kiel?" is the yes/no one
    alternative = (
        ranked and re.search(r"\bor\b", question, re.I) and not re.search(r"\bthan\b", question, re.I)
    )
    if words.YES_NO_START.match(question) and not alternative:
        return "yes_no"
    if not _WH_WORD.search(question) and (_OR_NOT.search(question) or words.THRESHOLD.search(question)):
        return "yes_no"  # "Grauno: higher than 3,000 ft?", "tokke bigger than 1000 km2 or not"
    if words.COUNT_START.search(question) and not words.NOT_COUNTED.search(question):
        return "count"
    if ranked and (
        len(names.linked) >= 2  # two or more named entities and a more/most word: rank them
        or re.search(
            r"\bor\b|\bwhich\b|\bwho\b|\bout of\b|\bbetween\b|\bversus\b|\bvs\b|\bagainst\b"
            r"|^\s*(?:of|among)\b",
            question,
            re.I,
        )
    ):
        return "compare"
    if words.SUPERLATIVE_CUES.search(question) and _class_noun(question) is not None and named <= 1:
        return "superlative"
    if named <= 1 and _class_noun(question) is not None and _THE_EXTREME_AT_END.search(question):
        return "superlative"  # "Where in Africa do you come of age the latest?"
    if named <= 1 and _class_noun(question) is not None and _THE_COMPARATIVE.search(question):
        return "superlative"  # "Which South American country has the higher inflation?": no two named
    return "lookup"


_WH_WORD = re.compile(r"\b(?:who|whom|whose|what|which|where|when|why|how|name|list|give|tell|count)\b", re.I)
_OR_NOT = re.compile(r"\bor not\s*[?.!]?\s*$", re.I)
"""A yes/no question written without its auxiliary: a comparison with a number, or "… or not"."""

_CURRENT_FIGURE = re.compile(
    r"\b(?:the )?(?:most recent|latest|newest) (?:figures?|values?|data|estimates?|numbers?|census)\b",
    re.I,
)

_THE_EXTREME_AT_END = re.compile(r"\bthe (?:latest|earliest|soonest)\s*[?.!]?\s*$", re.I)

_THE_COMPARATIVE = re.compile(
    r"\b(?:has|have|had|is|was|with) the (?:more|higher|larger|bigger|greater|lower|smaller|fewer)\b", re.I
)
"""A comparative said of one member of a class ("has the higher inflation"): the class's top one."""


def _class_noun(question: str) -> str | None:
    continents = "|".join(re.escape(c) for c in words.CONTINENTS)
    if re.match(rf"\s*where in (?:{continents})\b", question, re.I):
        return "country"  # "Where in Europe is the fertility rate lowest?": which of its countries
    for token in re.findall(r"[\w\-]+", question.lower()):
        for noun in words.CLASS_SYNONYMS:
            if token in (noun, noun + "s", noun + "es", noun[:-1] + "ies", noun[:-1] + "ies"):
                return noun
            if (noun, token) in (("municipality", "municipalities"), ("comune", "comuni")):
                return noun
    if m := _WHICH_NOUN.match(question) or _WHICH_NOUN_IN.match(question):
        return m.group(1).lower()  # "Which Italian football club is the oldest?": the classes say it
    if re.search(rf"\b(?:{continents})\b", question, re.I):
        return "country"  # "Whose HDI is the weakest in Europe?": a continent's members are its countries
    return None


_WHICH_NOUN = re.compile(
    r"\s*(?:which|what)\s+(?:(?-i:[A-Z][\w\-]*)\s+)?((?-i:[a-z]+)(?:\s+(?-i:[a-z]+))?)"
    r"\s+(?:is|was|are|were|has|had)\s+(?:the\b|(?-i:[a-z]+ed)\b)",
    re.I,
)
"""The class a superlative names in words no class list holds: the lower-case noun (one or two words)
between "which" (and a demonym) and "is the …" or a participle ("was founded most recently")."""

_WHICH_NOUN_IN = re.compile(
    r"\s*(?:which|what)\s+((?-i:[a-z]+))\s+(?:in|of|on)\s+(?:the\s+)?(?-i:[A-Z])", re.I
)
"""The same noun said before its place ("Which capital in Europe has …")."""


def _class_set(question: str, names: _Names) -> PlanSet:
    """The class noun and the place: a linked name after in/of ("in Germany"), a continent, or an
    adjective before the noun ("German", "U.S.")."""
    noun = _class_noun(question)
    lowered = question.lower()
    place = None
    for adjective in sorted(words.CONTINENTS, key=len, reverse=True):
        if re.search(rf"\b{adjective}\b", lowered):
            place = question[lowered.index(adjective) : lowered.index(adjective) + len(adjective)]
            break
    if place is None:
        possessive = (
            p
            for p in re.finditer(r"\b([A-Z][\w\-]*(?: [A-Z][\w\-]*)*)(?:'s|\u2019s) [a-z]", question)
            if p.group(1).lower() not in words.GENERIC  # "What's the …" is no place
        )
        m = re.search(r"\b(?:in|of) (?:the )?([A-Z][\w.\-]*(?: [A-Z][\w.\-]*)*)", question) or next(
            possessive, None
        )  # "in Germany", "Germany's municipalities"
        if m:
            place = m.group(1)
            if place.endswith(".") and place.count(".") == 1:
                place = place[:-1]  # the sentence's full stop, not an abbreviation's ("U.S.")
            place = next((n for n in names.linked if n in place and n != place), place)  # "Among Germany"
            place = re.sub(rf"^(?:{'|'.join(w.title() for w in sorted(OPENING_WORDS))})\s+", "", place)
    if place is None:
        for m in re.finditer(r"(?<![\w.])(U\.S\.|US|[A-Z][a-z]+(?:an|ish|ese|ch|ian))(?![\w.])", question):
            if m.start() > 0 and m.group(1).lower() not in words.GENERIC:
                place = m.group(1)
                break
    return PlanSet(class_phrase=_class_list(question, noun), place=place)


def _class_list(question: str, noun: str | None) -> str | None:
    """The class noun and the nouns listed with it ("oblasts, krais and republics" → "oblast, krai,
    republic"): a superlative over several classes at once, each read by the mode."""
    if noun is None:
        return None
    for m in re.finditer(r"\b[a-z]+(?:\s*,\s*[a-z]+)*,?\s+(?:and|or)\s+[a-z]+\b", question):
        listed = [w for w in re.split(r"\s*,\s*(?:(?:and|or)\s+)?|\s+(?:and|or)\s+", m.group(0)) if w]
        singular = [
            re.sub(r"ies$", "y", w) if w.endswith("ies") else re.sub(r"(?<=[^s])s$", "", w) for w in listed
        ]
        plural = all(w.endswith("s") for w in listed)
        if noun in singular and (plural or singular == listed):  # class nouns, all plural or all singular
            return ", ".join(dict.fromkeys(singular))
    return noun


def _membership_value(question: str, understanding: Understanding, mentions: list[str]) -> str | None:
    """What a yes/no question asks the subject to be linked to: the next name after the subject
    ("Is Oslo the capital of *Norway*"), or a country adjective ("Is Skien a *Norwegian* town?")."""
    subject = mentions[0] if mentions else None
    for link in understanding.links:
        text = link.mention.text
        named = link.mention.start > 0 and (link.candidates or text[0].isupper())
        if named and text != subject and (subject is None or text not in subject):
            return text
    place = _class_set(question, _Names([], [])).place
    return place if place and place != subject else None


def _answer_kind(op: str, reading: PropertyReading | None, hop: _Hop | None) -> str:
    """The answer kind follows the operation: a comparison names, a count counts, yes/no says yes/no."""
    if op in ("compare", "superlative"):
        return "entity"
    if op == "count":
        return "number"
    if op == "yes_no":
        return "boolean"
    if reading is not None:
        return reading.kind
    return "entity" if hop is not None else "text"


def _unexplained(
    question: str,
    plan: QuestionPlan,
    reading: PropertyReading | None,
    hop: _Hop | None,
    properties: PropertyLabels | None = None,
) -> list[str]:
    explained = {stem(w) for m in plan.mentions for w in content_words(m)}
    explained |= {stem(w) for r in plan.relations for w in content_words(r)}  # a related set's lookup
    if reading is not None:
        explained |= {stem(w) for w in content_words(reading.phrase)}
        if properties is not None:  # "retire … at what age": *age* is a word of "retirement age"
            said = {w for _, _, name in properties.names(reading.property) for w in name}
            explained |= said - _HOP_NOUNS  # but "country" or "capital" may still be a hop of its own
    if hop is not None:  # the hop's own words ("the country Corral lies in") are read by it
        explained |= {"capital", "country", "nation", "city", "home"}
        explained |= {stem(w) for w in content_words(question[hop.start : hop.end])} - {
            stem(w) for w in content_words(hop.entity)
        }
    if plan.constraints.years and (clause := _DATING_CLAUSE.match(question)):
        # "Back when it was still West Germany's seat of government, in 1987, …": it only dates the year
        explained |= {stem(w) for w in content_words(clause.group(0))}
    for aside in re.findall(r"\(([^()]{1,60})\)", question):  # "The Settlers (2019 video game)"
        explained |= {stem(w) for w in content_words(aside)}
    if plan.constraints.threshold_unit:
        explained |= {stem(w) for w in content_words(plan.constraints.threshold_unit)}
    if plan.operation == "count" and (m := words.COUNTED.search(question)):
        explained |= {
            stem(w) for w in content_words(m.group(1))
        }  # the counted noun: "countries", "twin towns"
    if plan.set is not None:
        for text in (plan.set.class_phrase, plan.set.place, plan.set.relation, *plan.set.described):
            explained |= {stem(w + end) for w in content_words(text or "") for end in ("", "s", "es")}
    cues = "|".join(p.pattern for p in (words.MAX_CUES, words.MIN_CUES, words.EARLY_CUES, words.LATE_CUES))
    if plan.operation in ("compare", "superlative", "yes_no"):  # a cue of several words ("tops the list")
        for cue in (words.MAX_CUES, words.MIN_CUES, words.EARLY_CUES, words.LATE_CUES):
            explained |= {stem(w) for m in cue.finditer(question) for w in content_words(m.group(0))}
    left = []
    for word in content_words(question):
        ranked = plan.operation in (
            "compare",
            "superlative",
            "yes_no",
        )  # a cue elsewhere is a second question
        if (
            word.isdigit()
            or word in SPOKEN_NUMBER_WORDS
            or word in words.GENERIC
            or stem(word) in explained
            or (ranked and re.fullmatch(cues, word))
        ):
            continue
        if stem(word) in _FILLER:
            continue
        if reading is not None and (same := property_for(word)) and same.property == reading.property:
            continue  # "cover" in "how much ground does X cover": another word for the same property
        left.append(word)
    return left


_DATING_CLAUSE = re.compile(r"\s*(?:back )?(?:when|while|at the time)\b[^,]{1,80},", re.I)
"""A leading clause that says when, before the year it dates ("Back when …, in 1987, …")."""

_FILLER = {
    stem(w)
    for w in word_set(
        "s many much count year live lived people one which town city state share have has got versus vs lie "
        "lies closer nearer give tell name show list back figure across among within percent percentage "
        "going recent latest currently lately nowadays today days"
    )
}


def _confidence(
    plan: QuestionPlan, names: _Names, reading: PropertyReading | None, hop: _Hop | None
) -> float:
    score = 0.9
    if reading is None and hop is None and plan.operation != "yes_no":
        score -= 0.5
    # two names, one of them unknown to the index, is a clear comparison the index cannot make: sure
    # enough to be executed, and so refused with the missing name, rather than read from loose text
    if plan.operation == "compare" and (
        len(names.linked) + len(names.unlinked) < 2 or plan.constraints.pick is None
    ):
        score -= 0.4
    if plan.operation == "superlative" and (
        plan.set is None or not (plan.set.place or plan.set.owner) or plan.constraints.pick is None
    ):
        score -= 0.4
    score -= 0.1 * len(plan.unexplained)
    return round(max(0.0, min(1.0, score)), 3)
