"""A named entity's related items, executed: the owner's relation listed (its best-rank item values
without an end time, as a count counts them), one member picked — ranked first by the plan's first
relation, or described by the names the question says — and the plan's later relations looked up (or
counted) on it.

The ranking is only as complete as the set. A member the index holds nothing of (outside the dumps, or
outside a build's scope) cannot be ranked, so the engine refrains and names the members it lacks, and
says which of those it holds would come first: at sample scale most related sets reach outside the
dumps, and a ranking of the few members inside would be an answer by accident ("Germany's most populous
neighbour" is not Belgium because Belgium is the only one the sample holds). Members in the index
without the ranked property are left out and listed, as in a superlative over a class.
"""

from __future__ import annotations

import re
from collections.abc import Callable

from query.modes.plans import operations as ops
from query.modes.plans import values as v
from query.modes.plans.graph_reads import PlanReads
from query.modes.plans.operations import Outcome, Subject
from query.tabulate.entities import entity_name
from schemas.query import QuestionPlan

__all__ = ["described", "members", "rank_related"]


def members(reads: PlanReads, owner: Subject, set_properties: list[str]) -> list[Subject]:
    """The set: the owner's distinct best-rank item values of the first set property it holds, leaving
    out those with an end time (a former neighbour is no neighbour)."""
    for prop in set_properties:
        statements = v.best_rank(reads.of(owner.entity_id, [prop]))
        ongoing = [s for s in statements if s.end_time is None and s.value_kind == "item" and s.value_item]
        found = {s.value_item: entity_name(s.value_item_label) for s in ongoing}
        if found:
            return [Subject(i, label) for i, label in found.items()]
    return []


def rank_related(
    reads: PlanReads, owner: Subject, set_properties: list[str], props: list[list[str]], plan: QuestionPlan
) -> Outcome:
    """The member ranked first by ``props[0]`` (the ordinal and end the plan asks), then ``props[1:]``
    followed from it, the last looked up; a refusal when the set is not wholly in the index."""
    said = f"{owner.label}'s {'/'.join(set_properties)} values"
    found = members(reads, owner, set_properties)
    if not found:
        return Outcome(None, f"{owner.label} ({owner.entity_id}) has no {'/'.join(set_properties)} statement")
    # a year said with a later lookup dates the lookup ("its population in 2010"), not the ranking
    ranking = plan if len(props) == 1 else _undated(plan)
    missing = [m for m in found if not reads.known(m.entity_id)]
    if missing:
        ids = ", ".join(m.entity_id for m in missing[:8]) + (", …" if len(missing) > 8 else "")
        note = f"{len(missing)} of {said} ({len(found)}) are not in the index ({ids}): no complete ranking"
        held = [m for m in found if m not in missing]
        partial = _partial(reads, held, props[0], ranking)
        return Outcome(None, note + partial)
    if len(found) == 1:
        winner = found[0]
        ranked = Outcome(winner.label, f"{said}: one, {winner.label}", [], None, winner.entity_id)
    else:
        ranked = ops.rank(reads, found, props[0], ranking)
        ranked.note = f"over {said} ({len(found)}): {ranked.note}"
    if ranked.answer is None or len(props) == 1:
        return ranked
    winner = Subject(ranked.entity_id or "", ranked.answer)
    for hop in props[1:-1]:
        winner = ops.follow(reads, winner, hop)
    final = ops.lookup(reads, winner, props[-1], plan)
    note = f"{ranked.note}; then {final.note}"
    return Outcome(final.answer, note, ranked.statements + final.statements, final.unit, final.entity_id)


def _undated(plan: QuestionPlan) -> QuestionPlan:
    return plan.model_copy(update={"constraints": plan.constraints.model_copy(update={"years": []})})


def _partial(reads: PlanReads, held: list[Subject], prop: list[str], plan: QuestionPlan) -> str:
    """What the members the index holds would say, for the route: never the answer."""
    if not held:
        return "; it holds none of them"
    if len(held) == 1:
        return f"; it holds only {held[0].label}"
    try:
        ranked = ops.rank(reads, held, prop, plan)
    except ops.CannotExecute as exc:
        return f"; of the {len(held)} it holds: {exc}"
    return f"; of the {len(held)} it holds, {ranked.answer or 'none'} would come first ({ranked.note})"


def described(
    reads: PlanReads,
    owner: Subject,
    set_properties: list[str],
    names: list[str],
    texts: Callable[[str], str],
) -> Subject:
    """The one member of the owner's related items (either way round: Helsinki's twin towns and the towns
    that name Helsinki as theirs) whose label, description or page says most of the describing names;
    ``CannotExecute`` when none says any, or two say as many."""
    found = {m.entity_id: m for m in members(reads, owner, set_properties)}
    for prop in set_properties:
        backwards = reads.backwards(owner.entity_id, prop)
        found.update({i: Subject(i, entity_name(label)) for i, label in backwards})
    held = [m for m in found.values() if reads.known(m.entity_id)]
    said = f"{owner.label}'s {'/'.join(set_properties)} values"
    scored = sorted(((_says(texts(m.entity_id), names), m) for m in held), key=lambda sm: -sm[0])
    if not scored or scored[0][0] == 0:
        raise ops.CannotExecute(f"none of the {len(held)} {said} the index holds says {', '.join(names)}")
    if len(scored) > 1 and scored[1][0] == scored[0][0]:
        raise ops.CannotExecute(f"{scored[0][1].label} and {scored[1][1].label} both say {', '.join(names)}")
    return scored[0][1]


def _says(text: str, names: list[str]) -> int:
    """How many of the names the text says, as whole words."""
    return sum(bool(re.search(rf"\b{re.escape(n)}\b", text, re.I)) for n in names)
