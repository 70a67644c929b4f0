"""The plan mode (``kg-plan``): a question read into a ``QuestionPlan`` and executed over the typed
statements and the graph — chains, comparisons that answer a name, counts of distinct values,
superlatives over a class in a place or over a named entity's related items, yes/no — and answers held
to the plan's constraints.

It goes first for the operations the KG lookup cannot do (estimate near 1 when the plan is sure);
for plain lookups it stands behind the KG lookup (which answers what its rules read) and before
retrieve → read, so a lookup the KG lookup declines — a year no statement covers, a paraphrased
property, a name that links to nothing — is answered or refused here instead of being guessed from
unrelated evidence. A refusal is a result with ``unknown`` set and the reason in the plan's
``outcome`` (the route shows it).
"""

from __future__ import annotations

import re
import time
from collections.abc import Callable

from pydantic import BaseModel, ConfigDict, Field

from query.modes.base import Declined, Understanding
from query.modes.kg_lookup import EvidenceLookup, _fact
from query.modes.plans import operations as ops
from query.modes.plans import values as v
from query.modes.plans.graph_reads import PlanReads
from query.modes.plans.grounding import Grounding
from query.modes.plans.operations import CannotExecute, Outcome, Subject
from query.modes.plans.related import described, rank_related
from query.tabulate.entities import entity_name
from query.understand.plan import RulePlanner, plan_entity, unknown_name
from query.understand.plan_llm import LlmPlanner
from query.understand.plan_words import PLACE_PROPERTIES
from schemas.answers import StageTiming
from schemas.query import LinkedMention, QueryResult, QuestionPlan

NAME = "kg-plan"
LLM_ESTIMATE = 0.55  # behind a sure KG lookup, before retrieve → read
SURE_PROPERTY = 0.95  # the intent's property read from the property's own label or alias: kg-lookup's
PAGE_ROWS = 400  # rows of an entity's own page read to match a description against


class PlanModeSettings(BaseModel):
    model_config = ConfigDict(extra="forbid")

    min_confidence: float = Field(0.6, ge=0.0, le=1.0, description="plans below this are not executed")
    lookup_estimate: float = Field(
        0.6, ge=0.0, le=1.0, description="a plain lookup's estimate: behind kg-lookup, before retrieve-read"
    )
    min_link_score: float = Field(0.05, ge=0.0, description="weaker entity candidates are not the subject")
    max_members: int = Field(2000, ge=1, description="members of a superlative's set read at most")
    llm_planner: bool = Field(
        False,
        description="ask the LLM planner (the engine's instruct model) when the rules' plan is unsure; "
        "seconds a question on 2 cores, so off unless asked for",
    )


class PlanMode:
    name = NAME

    def __init__(
        self,
        reads: PlanReads | None,
        evidence: EvidenceLookup,
        planner: RulePlanner,
        index_version: str,
        settings: PlanModeSettings | None = None,
        llm_planner: LlmPlanner | None = None,
        in_text: Callable[[str], bool] | None = None,
    ):
        self.reads, self.evidence, self.planner = reads, evidence, planner
        self.in_text = in_text
        self.llm_planner = llm_planner
        self.index_version = index_version
        self.settings = settings or PlanModeSettings()

    def _unknown(self, link: LinkedMention) -> bool:
        """A name no entity carries and no indexed text holds: only then is it taken to name nothing (a
        name in a passage or a table cell is something the text-reading modes may answer about)."""
        return unknown_name(link) and not (self.in_text is not None and self.in_text(link.mention.text))

    def plan(self, understanding: Understanding) -> QuestionPlan:
        """The rules' plan, grounded in its subject's statements (``grounding``); made again by ``run``
        after ``estimate`` (milliseconds), so the mode keeps no state between calls."""
        plan = self.planner.run(understanding)
        self.ground(plan, understanding)
        return plan

    def ground_llm(self, plan: QuestionPlan, understanding: Understanding) -> None:
        """The model's relation phrases held to the properties its subject (and each hop) holds."""
        if self.reads is None or self.planner.properties is None or not plan.mentions:
            return
        if plan.operation in ("lookup", "count", "yes_no"):
            subject = self.subjects(plan, understanding).get(plan.mentions[0])
            if subject is not None:
                Grounding(self.reads, self.planner.properties).ground_chain(plan, subject)
        if plan.relations and all(plan.resolved.get(f"relation:{r}") for r in plan.relations):
            plan.confidence = max(plan.confidence, 0.85)

    def ground(self, plan: QuestionPlan, understanding: Understanding) -> None:
        """The unread words matched against the properties the plan's subject holds (in place); not for
        a related set, whose answer is read from a member, not the named entity."""
        if self.reads is None or self.planner.properties is None or not plan.mentions:
            return
        if plan.set is not None and plan.set.owner:
            return
        subject = self.subjects(plan, understanding).get(plan.mentions[0])
        if subject is not None:
            Grounding(self.reads, self.planner.properties).ground(plan, understanding.question, subject)

    def estimate(self, understanding: Understanding) -> tuple[float, str]:
        if self.reads is None:
            return 0.0, "the index has no typed statements: rebuild it"
        plan = self.plan(understanding)
        summary = _summary(plan)
        if plan.confidence < self.settings.min_confidence:
            if self.llm_planner is not None and _names_a_graph_thing(plan):
                return (
                    LLM_ESTIMATE,
                    f"the rules' plan is unsure ({plan.confidence:.2f}); the LLM planner reads it",
                )
            if self.llm_planner is not None:
                return 0.0, f"the rules' plan is unsure and names no Wikidata entity or place: {summary}"
            return 0.0, f"the rules' plan is unsure ({plan.confidence:.2f}): {summary}"
        if plan.operation == "lookup" and len(plan.relations) < 2:
            return self._lookup_estimate(plan, understanding, summary)
        return 0.99, summary

    def _lookup_estimate(
        self, plan: QuestionPlan, understanding: Understanding, summary: str
    ) -> tuple[float, str]:
        """A plain lookup stands behind the KG lookup, unless the plan read what the intent did not: a
        name the index does not know, a year, or another property than the intent's best."""
        first = plan.mentions[0] if plan.mentions else ""
        if any(self._unknown(link) and link.mention.text in first for link in understanding.links):
            return 0.99, f"{summary}; a name the index does not know"
        if plan.constraints.years and not understanding.intent.time.years:
            return 0.99, f"{summary}; a year the intent did not read"  # "In 1960, how many …"
        props = plan.resolved.get(f"relation:{plan.relations[0]}", "") if plan.relations else ""
        best = understanding.intent.properties[:1]
        differs = best and best[0].property not in props.split(",") and best[0].score < SURE_PROPERTY
        if props and plan.confidence >= 0.8 and differs:
            return 0.99, f"{summary}; the intent's best property is {best[0].property}"
        return self.settings.lookup_estimate, summary

    def run(self, understanding: Understanding) -> QueryResult | Declined:
        started = time.perf_counter()
        estimate, why = self.estimate(understanding)
        if estimate <= 0.0:
            return Declined(self.name, why)
        plan = self.plan(understanding)
        unsure = plan.confidence < self.settings.min_confidence
        if self.llm_planner is not None and unsure:
            # the rules are unsure (no property, no class or place, several words unread): the model reads
            # the question, the code maps its phrases; the rules' plan stands where the model's is not
            # fully mapped. A sure rules' plan that leaves a word unread is not replaced: on fold7 and
            # fold8 replacing it lost more answers than it won (13 and 17 lost, 6 and 9 won)
            rules = plan
            plan = self.llm_planner.run(understanding.question, rules)
            if plan.source == "llm":
                self.ground_llm(plan, understanding)
            mapped = plan.source == "llm" and all(plan.resolved.get(f"relation:{r}") for r in plan.relations)
            if not (mapped and plan.confidence >= self.settings.min_confidence):
                if unsure:
                    return Declined(self.name, f"{_summary(plan)}; {'; '.join(plan.notes[-2:])}")
                why = plan.notes[-1] if plan.source != "llm" else "its relations do not all map to properties"
                plan = rules
                plan.notes.append(f"the LLM plan was not used ({why}): the rules' reading")
        try:
            outcome = self.execute(plan, understanding)
        except CannotExecute as exc:
            return Declined(self.name, f"{_summary(plan)}: {exc}")
        plan.outcome = outcome.note
        return self.result(understanding, plan, outcome, estimate, (time.perf_counter() - started) * 1000)

    # -- execution ---------------------------------------------------------------------------------

    def execute(self, plan: QuestionPlan, understanding: Understanding) -> Outcome:
        assert self.reads is not None
        subjects = self.subjects(plan, understanding)
        place = plan.set.place if plan.set is not None else None
        unknown = [
            link.mention.text
            for link in understanding.links
            if self._unknown(link) and link.mention.text not in (place, *subjects)
        ]
        first = plan.mentions[0] if plan.mentions else ""
        if unknown and (not subjects or any(u in first for u in unknown)):
            return Outcome(None, f"{unknown[0]!r} names nothing in the index")
        props = [p.split(",") for p in (plan.resolved.get(f"relation:{r}", "") for r in plan.relations)]
        props = [p for p in props if p and p[0]]
        if plan.set is not None and plan.set.owner:
            return self.related(plan, props, subjects)
        if plan.operation == "superlative":
            return self.superlative(plan, props, understanding.question)
        if not subjects:
            raise CannotExecute("no entity of the plan is linked")
        if not props and plan.operation == "yes_no" and plan.constraints.value:
            props = [["P17", "P131"]]  # "Is Mannheim in France?": where it lies
            plan.notes.append("no relation named: membership read as the country (P17, P131)")
        if not props:
            raise CannotExecute("the plan names no property")
        if plan.operation == "count" and (duration := _DURATION.search(understanding.question)):
            # a quantity's count is read as its value by the planner; what reaches here counts statements
            said = f"{duration.group(0)!r} asks a duration"
            return Outcome(None, f"{said}, and {'/'.join(props[-1])} counts statements, not time")
        ordered = [subjects[m] for m in plan.mentions if m in subjects]
        missing = [m for m in plan.mentions if m not in subjects]
        if missing and len(plan.mentions) >= 2 and _compares(plan):
            # the compared set must be the one asked: one side's value alone is not the answer
            said = ", ".join(repr(m) for m in missing)
            what = "is no entity" if len(missing) == 1 else "are no entities"
            return Outcome(None, f"{said} {what} of the index: the comparison cannot be made")
        if plan.operation == "compare":
            plan.resolved.update(
                {f"mention:{m}": subjects[m].entity_id for m in plan.mentions if m in subjects}
            )
            return ops.rank(self.reads, ordered, props[-1], plan)
        if plan.operation == "yes_no":
            return self.yes_no(plan, ordered, props[-1], understanding.question)
        plan.resolved[f"mention:{plan.mentions[0]}"] = ordered[0].entity_id
        if (
            plan.operation == "lookup"
            and len(props) == 1
            and (ranked := self._ranked(ordered[0], props[0], understanding.question))
        ):
            return ranked
        return _year_if_asked(self.chain(plan, ordered[0], props), understanding.question)

    def _ranked(self, subject: Subject, props: list[str], question: str) -> Outcome | None:
        """A refusal when the question ranks several values of the property it looks up ("Which of
        Belgium's neighbours has the most inhabitants?"): the plan reads no ranking of them, and its first
        named value would be an answer by accident."""
        cue = _RANKING.search(question)
        if cue is None:
            return None
        assert self.reads is not None
        values = {s.value_item for s in v.current(self.reads.of(subject.entity_id, props)) if s.value_item}
        if len(values) < 2:
            return None
        said = f"{subject.label} has {len(values)} {'/'.join(props)} values"
        return Outcome(
            None, f"{said} and the question ranks them ({cue.group(0)!r}): the plan reads no ranking"
        )

    def chain(self, plan: QuestionPlan, subject: Subject, props: list[list[str]]) -> Outcome:
        """The hops in order, then the last relation looked up (or counted) on the entity reached."""
        assert self.reads is not None
        for hop in props[:-1]:
            subject = ops.follow(self.reads, subject, hop)
            plan.notes.append(f"hop {'/'.join(hop)} → {subject.label} ({subject.entity_id})")
            if not self.reads.known(subject.entity_id):
                where = f"{subject.label} ({subject.entity_id})"
                return Outcome(None, f"the hop lands on {where}, which the index holds no statements of")
        if plan.relations == ["^capital"]:  # "X is the capital of which country?": the hop is the answer
            reached = ops.follow(self.reads, subject, props[0])
            note = f"{reached.label} has {subject.label} as its capital"
            return Outcome(reached.label, note, [], None, reached.entity_id)
        if plan.operation == "count":
            return ops.count(self.reads, subject, props[-1])
        return ops.lookup(self.reads, subject, props[-1], plan)

    def subjects(self, plan: QuestionPlan, understanding: Understanding) -> dict[str, Subject]:
        """Each planned mention's entity: the best candidate of the link whose mention it is (or holds)."""
        out: dict[str, Subject] = {}
        for mention in plan.mentions:
            for link in understanding.links:
                text = link.mention.text
                if text == mention or ((mention in text or text in mention) and len(text) > 2):
                    cand = plan_entity(link, self.settings.min_link_score)
                    if cand is not None:
                        out[mention] = Subject(
                            cand.entity_id, entity_name(cand.label), fuzzy=cand.match == "fuzzy"
                        )
                        break
            if mention in out or self.reads is None:
                continue
            if found := self.reads.by_name_word(mention):
                out[mention] = Subject(found[0], entity_name(found[1]))  # "Hegel": a word of one label only
            elif (people := self.reads.demonym(mention)) and (info := self.reads.entities.get(people[0])):
                out[mention] = Subject(
                    people[0], entity_name(info.label)
                )  # "Malians", "Bahraini": the country
                note = f"{mention!r} → {info.label} ({people[0]}) by its {people[1]}"
                if note not in plan.notes:
                    plan.notes.append(note)
        return out

    def yes_no(self, plan: QuestionPlan, subjects: list[Subject], props: list[str], question: str) -> Outcome:
        assert self.reads is not None
        c = plan.constraints
        if c.threshold is not None:
            return ops.threshold(self.reads, subjects[0], props, plan)
        if c.comparator is not None and len(subjects) >= 2:
            ranked = ops.rank(self.reads, subjects[:2], props, plan)
            if ranked.answer is None:
                return ranked
            return Outcome(
                "yes" if ranked.entity_id == subjects[0].entity_id else "no", ranked.note, ranked.statements
            )
        value = subjects[1] if len(subjects) >= 2 else None
        if value is None and c.value and set(props) & PLACE_PROPERTIES:
            # a word read as a place ("Norwegian", "France") only where the property's values are places:
            # "Is French an official language in Belgium?" does not ask about France
            # a name is the place itself: the country of the things described with it is another
            # entity ("Is Düsseldorf the capital of North Rhine-Westphalia?" is not asked of Germany)
            found = self.reads.place(c.value, "P17", itself=True)
            if found is not None:
                plan.resolved[f"value:{c.value}"] = f"{found[0]} ({found[2]})"
                value = Subject(found[0], c.value)
        if value is None:
            # a place missing from where the subject lies may still hold it ("Is Kiel in Schleswig-
            # Holstein?" when only its country is stated): no "no" is read off where something lies
            named = None if props[0] in _WHERE_IT_LIES else c.value
            return ops.named_value(self.reads, subjects[0], props, question, named)
        return ops.membership(self.reads, subjects[0], value, props)

    def superlative(self, plan: QuestionPlan, props: list[list[str]], question: str) -> Outcome:
        assert self.reads is not None
        if plan.set is None or not plan.set.class_phrase or not plan.set.place or not props:
            raise CannotExecute("a superlative needs a class, a place and a property")
        qualifier = _unread_qualifier(plan, question)
        narrower = (
            next(
                (p for p in (f"{qualifier} {plan.set.class_phrase}", qualifier) if self.reads.class_ids(p)),
                None,
            )
            if qualifier
            else None
        )
        if qualifier and narrower:
            # "capital city": the words name classes of their own; they are the set
            plan.notes.append(f"{narrower!r} names the classes read, not {plan.set.class_phrase!r} alone")
            plan.set.class_phrase = narrower
            plan.unexplained = [w for w in plan.unexplained if w != qualifier]
        elif qualifier:
            # "Asia's landlocked nations": ranking every nation of Asia would answer another question
            said = f"{qualifier!r} narrows {plan.set.class_phrase!r}"
            return Outcome(None, f"{said} and no class of the index is read by it")
        place = self.reads.place(plan.set.place)
        if place is None:
            raise CannotExecute(f"the place {plan.set.place!r} is not in the index")
        classes = list(
            dict.fromkeys(c for noun in plan.set.class_phrase.split(", ") for c in self.reads.class_ids(noun))
        )
        if not classes:
            raise CannotExecute(f"no class of the index is called {plan.set.class_phrase!r}")
        place_id, place_property, how = place
        plan.resolved[f"place:{plan.set.place}"] = f"{place_id} by {place_property} ({how})"
        plan.resolved[f"class:{plan.set.class_phrase}"] = ",".join(classes[:20])
        members = self.reads.members(classes, place_id, place_property, self.settings.max_members)
        subjects = [Subject(i, entity_name(label)) for i, label in members]
        if not subjects:
            raise CannotExecute(f"no {plan.set.class_phrase} in {plan.set.place} in the graph")
        return ops.rank(self.reads, subjects, props[-1], plan)

    def related(self, plan: QuestionPlan, props: list[list[str]], subjects: dict[str, Subject]) -> Outcome:
        """One of the items one relation of a named entity lists: the one ranked first (a superlative),
        or the one the question's names describe; then the plan's later relations on it (``related``)."""
        assert self.reads is not None and plan.set is not None and plan.set.owner is not None
        owner = subjects.get(plan.set.owner)
        set_props = plan.resolved.get(f"set:{plan.set.relation}", "").split(",")
        if owner is None or not set_props[0] or not props:
            raise CannotExecute("a related set needs its owner linked, its relation and a property")
        plan.resolved[f"mention:{plan.set.owner}"] = owner.entity_id
        if plan.operation == "superlative":
            return rank_related(self.reads, owner, set_props, props, plan)
        member = described(self.reads, owner, set_props, plan.set.described, self._text_of)
        plan.notes.append(f"{', '.join(plan.set.described)} describes {member.label} ({member.entity_id})")
        return self.chain(plan, member, props)

    def _text_of(self, entity_id: str) -> str:
        """What an entity says of itself: its label, its description and the rows of its own page."""
        assert self.reads is not None
        info = self.reads.entities.get(entity_id)
        pairs = self.reads.graph.page_evidence([entity_id], PAGE_ROWS)
        rows = self.evidence.get([e for _, e in pairs])
        own = [info.label, info.description or ""] if info is not None else []
        return " ".join(own + [r.text for r in rows])

    # -- the result --------------------------------------------------------------------------------

    def result(
        self, understanding: Understanding, plan: QuestionPlan, outcome: Outcome, estimate: float, ms: float
    ) -> QueryResult:
        shown = outcome.statements[:10]
        rows = {r.evidence_id: r for r in self.evidence.get([s.evidence_id for s in shown if s.evidence_id])}
        evidence = [
            rows[s.evidence_id].scored(1.0 if i == 0 else 0.5 / i, retrieved_by=[NAME])
            for i, s in enumerate(shown)
            if s.evidence_id in rows
        ]
        timings = dict(understanding.timings)
        timings["kg_plan"] = ms
        refused = outcome.answer is None
        return QueryResult(
            question=understanding.question,
            answer="unknown" if refused else outcome.answer,
            answer_entity_id=outcome.entity_id,
            unknown=refused,
            confidence=round(plan.confidence if not refused else 1.0 - plan.confidence / 2, 4),
            evidence=evidence,
            supporting_evidence_ids=[e.evidence_id for e in evidence[:1]],
            intent=understanding.intent,
            links=understanding.links,
            timings=[StageTiming(stage=k, ms=round(val, 3)) for k, val in timings.items()],
            reader=self.name,
            index_version=self.index_version,
            unit=outcome.unit,
            facts=[_fact(s) for s in shown],
            plan=plan,
        )


_RANKING = re.compile(
    r"\b(?:most|least|largest|biggest|smallest|highest|lowest|greatest|fewest|oldest|youngest|newest|"
    r"longest|shortest|richest|poorest|tallest)\b",
    re.I,
)
"""Words that rank what they qualify; "first" and "most recent" are left out: a lookup may say them."""

_DURATION = re.compile(r"\bhow many (?:years|months|weeks|days|hours|minutes|decades|centuries)\b", re.I)
"""A count of time units: a duration, which no number of statements is."""

_WHERE_IT_LIES = frozenset({"P17", "P131", "P30", "P276", "P19", "P20"})
"""Properties whose places nest (a city's region, its country): a place not among the values may hold one."""

_YEAR_ASKED = re.compile(r"\b(?:which|what) year\b|\byear of\b|^\s*(?:in )?what year\b", re.I)


def _year_if_asked(outcome: Outcome, question: str) -> Outcome:
    """A date answered as its year when the question asks for the year ("In which year did X die?" is
    answered "2018", not "September 2018")."""
    first = outcome.statements[0] if outcome.statements else None
    if (
        outcome.answer is None
        or first is None
        or first.value_kind != "time"
        or first.value_year is None
        or not _YEAR_ASKED.search(question)
    ):
        return outcome
    return Outcome(str(first.value_year), outcome.note, outcome.statements, None, outcome.entity_id)


def _unread_qualifier(plan: QuestionPlan, question: str) -> str | None:
    """A word the plan left unread written right before its class noun ("landlocked nations"): the set
    asked is narrower than the class read."""
    nouns = (plan.set.class_phrase or "").split(", ") if plan.set is not None else []
    for word in plan.unexplained:
        for noun in nouns:
            # a word of its own, not the end of a compound cue ("lowest-lying commune")
            forms = "|".join(re.escape(f) for f in (noun, noun + "s", noun + "es", noun[:-1] + "ies"))
            if re.search(rf"(?<![\w\-]){re.escape(word)}\s+(?:{forms})\b", question, re.I):
                return word
    return None


def _names_a_graph_thing(plan: QuestionPlan) -> bool:
    """Whether the rules' plan names something the graph can answer about: a Wikidata entity (or a name
    the index lacks, which the plan then refuses), or a class in a place. A question about a table or a
    passage names neither, and the LLM planner is not asked for it: on the OTT-QA sample it was asked for
    nearly every question and cost ~3.6 s each (``planner-regressions/``)."""
    return bool(plan.mentions) or (plan.set is not None and bool(plan.set.class_phrase and plan.set.place))


def _summary(plan: QuestionPlan) -> str:
    parts = [f"plan ({plan.source}, {plan.confidence:.2f}): {plan.operation}"]
    if plan.mentions:
        parts.append("of " + ", ".join(repr(m) for m in plan.mentions))
    if plan.relations:
        parts.append(
            "by " + " → ".join(f"{r} [{plan.resolved.get('relation:' + r, '?')}]" for r in plan.relations)
        )
    if plan.set is not None and plan.set.owner:
        relation = plan.set.relation or ""
        parts.append(f"over {plan.set.owner}'s {relation} [{plan.resolved.get('set:' + relation, '?')}]")
    elif plan.set is not None and plan.set.class_phrase:
        parts.append(f"over {plan.set.class_phrase} in {plan.set.place}")
    if plan.unexplained:
        parts.append(f"unread: {', '.join(plan.unexplained)}")
    return " ".join(parts)


def _compares(plan: QuestionPlan) -> bool:
    """A comparison of named entities: "which of A or B …", "is A more … than B"."""
    c = plan.constraints
    return plan.operation == "compare" or (
        plan.operation == "yes_no" and c.comparator is not None and c.threshold is None
    )
