"""Names in set tables: a label, or "unnamed" — never a bare Wikidata id (issue 35). The id stays in the
table's ``entity_id`` / ``related_id`` column and in the cell's links, where it is provenance."""

from __future__ import annotations

import re

import pyarrow.compute as pc
import pyarrow.dataset as ds

from index import layout
from query.tabulate.entities import entity_name
from query.tabulate.set_tables import members_table, relation_table

BARE_ID = re.compile(r"^[QP]\d+$")


def test_a_label_is_kept_and_an_id_or_nothing_is_unnamed():
    assert entity_name("Nizhny Novgorod") == "Nizhny Novgorod"
    assert entity_name("Q891") == entity_name(None) == entity_name("") == "unnamed"
    assert entity_name("Q") == "Q" and entity_name("Queen") == "Queen"


def test_members_without_a_label_are_unnamed_and_keep_their_id():
    table = members_table([("Q90", "Paris"), ("Q4115189", None)])
    assert table.data["entity"] == ["Paris", "unnamed"]
    assert table.data["entity_id"] == ["Q90", "Q4115189"]


def test_a_related_item_the_slice_has_no_name_for_is_unnamed(reader):
    # statements of the real sample whose item value has no label in the slice (a dangling reference)
    statements = ds.dataset(reader.path / layout.STATEMENT_TABLE, format="parquet").to_table(
        columns=["subject", "subject_label", "property", "rank", "value_item", "value_item_label"]
    )
    unnamed = pc.and_(pc.is_valid(statements["value_item"]), pc.is_null(statements["value_item_label"]))
    dangling = statements.filter(pc.and_(unnamed, pc.equal(statements["rank"], "normal")))
    assert dangling.num_rows > 0
    rows = statements.to_pylist()

    def first_best(subject: str, prop: str) -> dict:
        """The statement relation_table should pick, read straight from the file: preferred if any, else
        normal, the first in file order whose item is not the subject itself."""
        same = [
            s for s in rows if s["subject"] == subject and s["property"] == prop and s["rank"] != "deprecated"
        ]
        best = [s for s in same if s["rank"] == "preferred"] or [s for s in same if s["rank"] == "normal"]
        return next(s for s in best if s["value_item"] and s["value_item"] != subject)

    row = next(
        r for r in dangling.to_pylist() if first_best(r["subject"], r["property"])["value_item_label"] is None
    )
    first = first_best(row["subject"], row["property"])

    table = relation_table([(row["subject"], row["subject_label"])], reader.statements, row["property"], "p")
    assert table.data["related"] == ["unnamed"]
    assert table.data["related_id"] == [first["value_item"]]
    assert not any(BARE_ID.match(cell.text) for cells in table.cells for cell in cells)
