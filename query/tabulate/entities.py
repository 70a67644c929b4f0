"""A table built for one question from the graph: one row per entity of a set, one typed value column.

The set comes from ``GraphIndex.members`` (a fixed Cypher with parameters) or an explicit list; the
value of each entity from its typed statements of one property (``index.statements``): not deprecated,
the asked year's when the question names one, else the preferred rank, else the most recent point in
time — the statement id and its time qualifier kept as the cell's provenance. Quantities are compared
only in one unit: a column whose statements use two units is refused, never mixed.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa

from index.statements import StatementStore
from schemas.statements import TypedStatement

RANK_ORDER = {"preferred": 0, "normal": 1, "deprecated": 2}


@dataclass(frozen=True)
class EntityCell:
    entity_id: str
    label: str
    value: float | None
    text: str  # the value as written ("11,150,516"), "" when the entity has no statement
    provenance: str | None  # "statement Q298$…, 2017"
    evidence_id: str | None = None  # the KG evidence row that says the statement


@dataclass
class EntityTable:
    property: str
    property_label: str
    unit: str | None
    cells: list[EntityCell]

    @property
    def arrow(self) -> pa.Table:
        return pa.table(
            {
                "row_index": pa.array(range(len(self.cells)), pa.int32()),
                "entity": pa.array([c.label for c in self.cells], pa.string()),
                "entity_id": pa.array([c.entity_id for c in self.cells], pa.string()),
                "value": pa.array([c.value for c in self.cells], pa.float64()),
            }
        )

    @property
    def missing(self) -> int:
        return sum(c.value is None for c in self.cells)


class MixedUnits(ValueError):
    """The property's statements over the set use more than one unit: no comparison is sound."""


def entity_name(label: str | None) -> str:
    """An entity's name in a table or an answer: its label, or "unnamed" — never a bare id (an id is
    provenance: tables keep it in their ``entity_id`` column, answers in ``answer_entity_id``)."""
    return label if label and not _is_id(label) else "unnamed"


def _is_id(text: str) -> bool:
    return len(text) > 1 and text[0] in "QP" and text[1:].isdigit()


def _year_of(statement: TypedStatement) -> int | None:
    for year in (statement.point_in_time_year, statement.start_year, statement.end_year):
        if year is not None:
            return year
    return None


def best_statement(statements: list[TypedStatement], year: int | None = None) -> TypedStatement | None:
    """The statement that gives an entity's value: among the best-rank ones (preferred if any, else
    normal), the asked year's, else the latest."""
    live = [s for s in statements if s.rank != "deprecated"]
    live = [s for s in live if s.rank == "preferred"] or live
    live = [s for s in live if s.value_amount is not None]
    if year is not None:
        live = [s for s in live if _year_of(s) == year]
    if not live:
        return None
    return min(live, key=lambda s: (RANK_ORDER.get(s.rank, 3), -(_year_of(s) or -(10**6))))


def entity_table(
    entities: list[tuple[str, str | None]],
    statements: StatementStore,
    prop: str,
    property_label: str,
    year: int | None = None,
) -> EntityTable:
    """One row per entity (in the given order) with its value of ``prop``; raises ``MixedUnits``."""
    by_subject: dict[str, list[TypedStatement]] = {}
    for statement in statements.lookup([e for e, _ in entities], [prop]):
        by_subject.setdefault(statement.subject, []).append(statement)
    cells, units = [], set()
    for entity_id, label in entities:
        best = best_statement(by_subject.get(entity_id, []), year)
        name = entity_name(label)
        if best is None:
            cells.append(EntityCell(entity_id, name, None, "", None))
            continue
        units.add(best.value_unit)
        when = _year_of(best)
        provenance = f"statement {best.statement_id}" + (f", {when}" if when is not None else "")
        cells.append(
            EntityCell(
                entity_id,
                best.subject_label or name,
                best.value_amount,
                best.value_text,
                provenance,
                best.evidence_id,
            )
        )
    if len(units) > 1:
        raise MixedUnits(
            f"{property_label} is given in {len(units)} units over the set: {sorted(map(str, units))}"
        )
    unit_statement = next((s for ss in by_subject.values() for s in ss if s.value_unit_label), None)
    unit = unit_statement.value_unit_label if unit_statement is not None and units - {None} else None
    return EntityTable(property=prop, property_label=property_label, unit=unit, cells=cells)
