"""Ingest batches read column by column: flat Python lists and offsets instead of a dict per record.

``RecordBatch.to_pylist`` builds a dict for every record and every nested link or cell, which is
most of what reading a Parquet row into Python costs; the verbalizers need a few fields of each, so
they take those fields as flat lists and walk nested lists by their offsets.
"""

from __future__ import annotations

from collections.abc import Iterator
from itertools import accumulate

import pyarrow as pa
import pyarrow.compute as pc


def rows(batch: pa.RecordBatch, *names: str) -> Iterator[tuple]:
    """The named columns of ``batch`` as one tuple per record, each column read to Python once."""
    return zip(*(batch.column(name).to_pylist() for name in names), strict=True)


def nested(lists: pa.Array, *fields: str) -> tuple[list[int], list[list]]:
    """A list<struct> column as (starts, one flat list per field): record ``i`` holds the items
    ``starts[i]:starts[i + 1]``. A null list counts as empty."""
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_pylist()
    starts = [0, *accumulate(lengths)]
    flat = lists.flatten()
    return starts, [pc.struct_field(flat, [field]).to_pylist() for field in fields]


def nested_array(lists: pa.Array, field: str) -> tuple[list[int], pa.Array]:
    """Like ``nested`` for one field, left as Arrow (for a second level of nesting)."""
    lengths = pc.fill_null(pc.list_value_length(lists), 0).to_pylist()
    return [0, *accumulate(lengths)], pc.struct_field(lists.flatten(), [field])
