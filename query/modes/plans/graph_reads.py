"""What executing a plan reads from the index, behind one small class: statements by subject, entities
reached backwards along a property, the members of a class in a place, class ids by noun, places by
name or adjective.

Every read goes through the statement store or ``index.graph.GraphIndex``'s fixed, parameterised
queries: a question's words are only ever parameter values. The class list and the demonyms are read
once and kept (they do not change within an index version).
"""

from __future__ import annotations

import re
import threading
from collections import Counter
from collections.abc import Mapping, Sequence
from typing import Protocol

from index.aliases import AliasHit, normalize_mention
from index.statements import TypedStatement
from query.understand import plan_words
from query.understand.linking import EntityInfo


class StatementReads(Protocol):
    def lookup(
        self, subjects: Sequence[str], properties: Sequence[str] | None = None
    ) -> list[TypedStatement]: ...

    def subjects_with_text(self, property: str, text: str) -> list[str]: ...


class GraphReads(Protocol):
    def classes(self) -> list[tuple[str, str | None, int]]: ...

    def members_in_place(
        self, classes: list[str], place: str, place_property: str, limit: int
    ) -> tuple[list[tuple[str, str | None]], Mapping[str, object]]: ...

    def subjects_of(self, entity_id: str, property: str, limit: int = 50) -> list[tuple[str, str | None]]: ...

    def page_evidence(self, entity_ids: list[str], limit: int) -> list[tuple[str, str]]: ...


class AliasReads(Protocol):
    def lookup(self, mention: str, k: int = 10, *, fuzzy: bool = True) -> list[AliasHit]: ...


class EntityTexts(Protocol):
    def get(self, entity_id: str) -> EntityInfo | None: ...

    def ids_matching(self, pattern: str, limit: int) -> list[str]: ...


MIN_CLASS_SHARE = 0.5  # a class is what a noun names when this share of its members say the noun
MAX_CLASSES = 300  # classes looked at, largest first (a full index has thousands of tiny ones)
SAMPLE_MEMBERS = 60  # members of a class read to decide what it is called
MAX_DESCRIBED = 400  # entities whose description names a place, read to find the place's id


class PlanReads:
    """The index as plan execution sees it; safe to share between threads.

    Class items and many places (Q515 "city", Q20 Norway) are outside the sample dumps and carry no
    label, so their names are read off what their members say of themselves: a class is "commune" when
    most of its members' labels or descriptions say "commune"; Norway is the country (P17) most of the
    entities described "… Norway" lie in. What was read, and how, goes into the plan's ``resolved``.
    """

    def __init__(
        self, statements: StatementReads, graph: GraphReads, aliases: AliasReads, entities: EntityTexts
    ):
        self.statements, self.graph, self.aliases, self.entities = statements, graph, aliases, entities
        self._class_words: dict[str, list[str]] | None = None  # class id -> its members' texts
        self._places: dict[tuple[str, str], tuple[str, str] | None] = {}
        self._lock = threading.Lock()

    def of(self, subject: str, properties: Sequence[str]) -> list[TypedStatement]:
        return self.statements.lookup([subject], list(properties))

    def of_all(self, subject: str) -> list[TypedStatement]:
        """Every statement of the subject: what a plan's relation words are matched against."""
        return self.statements.lookup([subject])

    def known(self, entity_id: str) -> bool:
        """Whether the index holds any statement of the entity (a hop may land outside the dumps)."""
        return bool(self.statements.lookup([entity_id]))

    def of_many(self, subjects: Sequence[str], properties: Sequence[str]) -> list[TypedStatement]:
        return self.statements.lookup(list(subjects), list(properties)) if subjects else []

    def backwards(self, entity_id: str, property: str) -> list[tuple[str, str | None]]:
        return self.graph.subjects_of(entity_id, property)

    def by_name_word(self, mention: str) -> tuple[str, str] | None:
        """The one Wikidata entity whose label holds the mention as whole words ("Hegel" → Georg Wilhelm
        Friedrich Hegel), when the alias index knows no such name; None when none or several do."""
        if not mention[:1].isupper() or len(mention) < 4:
            return None
        ids = [i for i in self.entities.ids_matching(rf"\b{re.escape(mention)}\b", 20) if _QID.fullmatch(i)]
        named = [(i, info.label) for i in ids if (info := self.entities.get(i)) and mention in info.label]
        return named[0] if len(named) == 1 else None

    # -- classes -----------------------------------------------------------------------------------

    def class_ids(self, noun: str) -> list[str]:
        """Classes most of whose members' labels or descriptions say the noun or one of its synonyms."""
        wanted = plan_words.CLASS_SYNONYMS.get(noun, (noun,))
        # in a description, lower case only: a class noun is written so ("state of the United States");
        # capitalized, the word is part of a name ("United States" says nothing of what Chicago is); in
        # a label any case ("Murmansk Oblast")
        alternatives = r"\b(?:" + "|".join(re.escape(w) for w in wanted) + r")s?\b"
        in_label, in_description = re.compile(alternatives, re.I), re.compile(alternatives)

        def says(text: str) -> bool:
            label, _, description = text.partition("\x00")
            return bool(in_label.search(label) or in_description.search(description))

        found = []
        for cid, texts in self._member_texts().items():
            if texts and sum(says(t) for t in texts) / len(texts) >= MIN_CLASS_SHARE:
                found.append(cid)
        return found

    def _member_texts(self) -> dict[str, list[str]]:
        with self._lock:
            if self._class_words is None:
                words: dict[str, list[str]] = {}
                for cid, _, _ in self.graph.classes()[:MAX_CLASSES]:
                    members, _ = self.graph.members(None, [cid], SAMPLE_MEMBERS)
                    words[cid] = [self._text(eid) for eid, _ in members]
                self._class_words = words
            return self._class_words

    def _text(self, entity_id: str) -> str:
        info = self.entities.get(entity_id)
        return f"{info.label}\x00{info.description or ''}" if info is not None else ""

    def members(
        self, classes: list[str], place: str, place_property: str, limit: int
    ) -> list[tuple[str, str | None]]:
        rows, _ = self.graph.members_in_place(classes, place, place_property, limit)
        return rows

    # -- places ------------------------------------------------------------------------------------

    def place(self, text: str, prop: str | None = None, itself: bool = False) -> tuple[str, str, str] | None:
        """(entity id, place property, how) of a place as a question writes it: a continent (P30), a
        linked country, a country's demonym statement ("Chilean"), or — for a place outside the dumps —
        the value of the place property most entities described with its name hold. That value is where
        the place lies when the place is no country ("North Rhine-Westphalia" → Germany); with ``itself``
        a value the index names otherwise is no reading of the name."""
        lowered = text.lower().strip()
        if lowered in plan_words.CONTINENTS:
            name = plan_words.CONTINENTS[lowered]
            found = self._inferred(name, [name], "P30")
            return (found[0], "P30", found[1]) if found else None
        prop = prop or "P17"
        # an adjective ("German", "Indian") names its country by a demonym statement or by what the
        # entities it describes lie in; the alias index would find the people or the language first
        adjective = " " not in text.strip() and bool(re.search(r"(?:an|ish|ese|ch|ian|i)$", text))
        if adjective and (found_demonym := self.demonym(text)):
            return found_demonym[0], prop, found_demonym[1]
        name = plan_words.PLACE_NAMES.get(lowered.replace(".", ""), text)
        forms = [name] if name != text else [text]
        if name == text and adjective:
            forms.append(text[:4])  # "Norwegian" → "Norw…": the country's name shares its stem
        if adjective and (found := self._inferred(text, forms, prop)):
            return found[0], prop, found[1]
        hits = self.aliases.lookup(text, k=3, fuzzy=False)
        qids = [h.entity_id for h in hits if _QID.fullmatch(h.entity_id)]
        if qids:
            return qids[0], prop, f"name {text!r} in the alias index"
        if found_demonym := self.demonym(text):
            return found_demonym[0], prop, found_demonym[1]
        found = None if adjective else self._inferred(text, forms, prop)
        info = self.entities.get(found[0]) if found and itself else None
        if (
            info is not None
            and info.label
            and normalize_mention(info.label) not in map(normalize_mention, forms)
        ):
            return None  # "North Rhine-Westphalia" is not Germany, where its cities lie
        return (found[0], prop, found[1]) if found else None

    def demonym(self, text: str) -> tuple[str, str] | None:
        """(entity id, how) of the one entity whose demonym statement (P1549) the word is, in the
        singular or the plural a people is counted in ("Chilean"; "Malians" → Mali); None when none or
        several are. Asked once a word: each ask scans the demonym statements."""
        key = (text, "P1549")
        with self._lock:
            if key in self._places:
                return self._places[key]
        found = None
        forms = [text, text.replace(".", "")] + ([text[:-1]] if text.endswith("s") else [])
        for form in dict.fromkeys(forms):
            ids = self.statements.subjects_with_text("P1549", form)
            if len(ids) == 1:
                found = (ids[0], f"demonym {form!r} (P1549)")
                break
        with self._lock:
            self._places[key] = found
        return found

    def _inferred(self, text: str, forms: list[str], prop: str) -> tuple[str, str] | None:
        key = (text, prop)
        with self._lock:
            if key in self._places:
                return self._places[key]
        pattern = r"\b(?:" + "|".join(re.escape(f) for f in forms) + r")"
        described = self.entities.ids_matching(pattern, MAX_DESCRIBED)
        votes: Counter[str] = Counter()
        for st in self.statements.lookup(described, [prop]):
            if st.rank != "deprecated" and st.value_item:
                votes[st.value_item] += 1
        found = None
        if votes:
            (best, n), *rest = [*votes.most_common(2), ("", 0)]
            if n >= 2 and n > rest[0][1]:
                found = (best, f"the {prop} of {n} entities described as {' / '.join(forms)!r}")
        with self._lock:
            self._places[key] = found
        return found


_QID = re.compile(r"Q\d+")
