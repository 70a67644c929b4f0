"""The table a set question's SQL runs over, and the same table as the user is shown it.

One row per entity of the set; the columns depend on what was asked: one quantity ("which city has the
most inhabitants"), two ("the correlation between population and area"), one quantity over two sets
with the set each row belongs to ("do the cities and the mountains differ in the variance of their
elevation"), an item relation ("which country has the most cities": each member's country), or none
("how many of the cities are in Germany"). Every shown cell keeps where it came from: the entity's id
as a link, a value's statement (and its time qualifier) as provenance, its KG evidence row so an answer
cites what it computed from.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import pyarrow as pa

from index.statements import StatementStore
from query.tabulate.entities import RANK_ORDER, EntityTable, entity_name
from schemas.query import TableCellValue, TableColumn, TableRowView


@dataclass
class SetTable:
    title: str
    columns: list[TableColumn]  # what SQL sees and the user is shown, in order (row_index first, unshown)
    data: dict[str, list]  # SQL column → values, row by row
    types: dict[str, pa.DataType]
    cells: list[list[TableCellValue]]  # shown cells, one list per row, in the columns' order
    evidence: list[list[str]] = field(default_factory=list)  # KG evidence rows behind each row
    entities: list[tuple[str, str]] = field(default_factory=list)  # (id, label) per row

    @property
    def arrow(self) -> pa.Table:
        columns = {"row_index": pa.array(range(len(self.cells)), pa.int32())}
        columns |= {name: pa.array(values, self.types[name]) for name, values in self.data.items()}
        return pa.table(columns)

    def view(self, index: int) -> TableRowView:
        return TableRowView(row_index=index, cells=self.cells[index])


def _entity_cell(entity_id: str, label: str) -> TableCellValue:
    return TableCellValue(text=label, links=[entity_id])


def _value_cell(table: EntityTable, index: int) -> TableCellValue:
    cell = table.cells[index]
    return TableCellValue(text=cell.text, provenance=cell.provenance)


def _header(table: EntityTable) -> str:
    return f"{table.property_label} ({table.property})" + (f", {table.unit}" if table.unit else "")


def values_table(tables: list[EntityTable]) -> SetTable:
    """One or two quantities over the same entities (in the same order): columns ``value``, ``value2``."""
    first = tables[0]
    names = ["value", "value2"][: len(tables)]
    columns = [TableColumn(name="entity", header="entity", type="text")]
    columns += [
        TableColumn(name=n, header=_header(t), type="number") for n, t in zip(names, tables, strict=True)
    ]
    data: dict[str, list] = {
        "entity": [c.label for c in first.cells],
        "entity_id": [c.entity_id for c in first.cells],
    }
    for name, table in zip(names, tables, strict=True):
        data[name] = [c.value for c in table.cells]
    types = {"entity": pa.string(), "entity_id": pa.string(), "value": pa.float64(), "value2": pa.float64()}
    return SetTable(
        title=" and ".join(_header(t) for t in tables) + f" of {len(first.cells)} entities",
        columns=columns,
        data=data,
        types=types,
        cells=[
            [_entity_cell(c.entity_id, c.label), *(_value_cell(t, i) for t in tables)]
            for i, c in enumerate(first.cells)
        ],
        evidence=[[e for t in tables if (e := t.cells[i].evidence_id)] for i in range(len(first.cells))],
        entities=[(c.entity_id, c.label) for c in first.cells],
    )


def sets_table(parts: list[tuple[str, EntityTable]]) -> SetTable:
    """One quantity over two (or more) named sets, stacked: columns ``entity``, ``sample``, ``value``."""
    cells, evidence, entities = [], [], []
    data: dict[str, list] = {"entity": [], "entity_id": [], "sample": [], "value": []}
    for name, table in parts:
        for i, cell in enumerate(table.cells):
            data["entity"].append(cell.label)
            data["entity_id"].append(cell.entity_id)
            data["sample"].append(name)
            data["value"].append(cell.value)
            cells.append(
                [_entity_cell(cell.entity_id, cell.label), TableCellValue(text=name), _value_cell(table, i)]
            )
            evidence.append([cell.evidence_id] if cell.evidence_id else [])
            entities.append((cell.entity_id, cell.label))
    first = parts[0][1]
    return SetTable(
        title=f"{_header(first)} of " + " and ".join(f"{len(t.cells)} {name}" for name, t in parts),
        columns=[
            TableColumn(name="entity", header="entity", type="text"),
            TableColumn(name="sample", header="set", type="text"),
            TableColumn(name="value", header=_header(first), type="number"),
        ],
        data=data,
        types={"entity": pa.string(), "entity_id": pa.string(), "sample": pa.string(), "value": pa.float64()},
        cells=cells,
        evidence=evidence,
        entities=entities,
    )


def relation_table(
    entities: list[tuple[str, str | None]], statements: StatementStore, prop: str, header: str
) -> SetTable:
    """Each entity's item value of ``prop`` from its best-rank statements (preferred if any, else
    normal; the first when several): columns ``entity``, ``related`` (the item's label), ``related_id``."""
    by_subject: dict[str, list] = {}
    for statement in statements.lookup([e for e, _ in entities], [prop]):
        if statement.rank != "deprecated" and statement.value_item is not None:
            by_subject.setdefault(statement.subject, []).append(statement)
    data: dict[str, list] = {"entity": [], "entity_id": [], "related": [], "related_id": []}
    cells, evidence, rows = [], [], []
    for entity_id, label in entities:
        name = entity_name(label)
        live = sorted(by_subject.get(entity_id, []), key=lambda s: RANK_ORDER.get(s.rank, 3))
        best = [s for s in live if s.rank == live[0].rank] if live else []
        chosen = next((s for s in best if s.value_item != entity_id), None)
        related = entity_name(chosen.value_item_label) if chosen else None
        data["entity"].append(name)
        data["entity_id"].append(entity_id)
        data["related"].append(related)
        data["related_id"].append(chosen.value_item if chosen else None)
        cells.append(
            [
                _entity_cell(entity_id, name),
                TableCellValue(
                    text=related or "",
                    links=[chosen.value_item] if chosen and chosen.value_item else [],
                    provenance=f"statement {chosen.statement_id}" if chosen else None,
                ),
            ]
        )
        evidence.append([chosen.evidence_id] if chosen and chosen.evidence_id else [])
        rows.append((entity_id, name))
    return SetTable(
        title=f"{header} ({prop}) of {len(entities)} entities",
        columns=[
            TableColumn(name="entity", header="entity", type="text"),
            TableColumn(name="related", header=f"{header} ({prop})", type="text"),
        ],
        data=data,
        types={k: pa.string() for k in data},
        cells=cells,
        evidence=evidence,
        entities=rows,
    )


def members_table(entities: list[tuple[str, str | None]]) -> SetTable:
    """The set alone (a count of members): one column, the entity."""
    names = [(e, entity_name(label)) for e, label in entities]
    return SetTable(
        title=f"{len(names)} entities",
        columns=[TableColumn(name="entity", header="entity", type="text")],
        data={"entity": [n for _, n in names], "entity_id": [e for e, _ in names]},
        types={"entity": pa.string(), "entity_id": pa.string()},
        cells=[[_entity_cell(e, n)] for e, n in names],
        evidence=[[] for _ in names],
        entities=names,
    )


__all__ = ["SetTable", "members_table", "relation_table", "sets_table", "values_table"]
