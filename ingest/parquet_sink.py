"""Write rows to one Parquet file in batches, atomically: readers never see a half-written file.

Rows arrive as plain dicts (building a pydantic object per row would cost more than parsing
the dump); the Arrow schema derived from the table's pydantic model checks them as each batch
is converted, so a row of the wrong shape fails loudly, with the table's name.
"""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path
from types import TracebackType

import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq
from pydantic import BaseModel

from schemas import arrow_schema

BATCH_ROWS = 20_000  # dict rows converted to Arrow at a time
ROW_GROUP_ROWS = 200_000  # Arrow rows written as one Parquet row group


def rows_to_table(rows: list[dict], model: type[BaseModel]) -> pa.Table:
    """Dict rows as an Arrow table of the model's schema; a row of the wrong shape (a value of another type,
    a null where the model allows none, an integer beyond its column, a string holding a lone surrogate)
    fails loudly, as a ``ValueError``."""
    schema = arrow_schema(model)
    try:
        # Column by column is several times faster than pa.Table.from_pylist on row dicts.
        columns = [
            pa.array([row[name] for row in rows], type=field.type)
            for name, field in zip(schema.names, schema, strict=True)
        ]
    except (ValueError, TypeError, KeyError, OverflowError) as exc:  # ArrowInvalid is a ValueError
        raise ValueError(f"rows for {model.__name__} do not fit its schema: {exc}") from exc
    return _checked_table(columns, schema, model)


def tuples_to_table(rows: list[tuple], model: type[BaseModel]) -> pa.Table:
    """``rows_to_table`` for rows given as tuples in the schema's column order (nested structs as tuples
    too): transposing them is a C loop, where a dict per row costs a lookup per column."""
    schema = arrow_schema(model)
    values = list(zip(*rows, strict=True)) if rows else [() for _ in schema]
    if len(values) != len(schema):
        raise ValueError(f"rows for {model.__name__} have {len(values)} columns, its schema {len(schema)}")
    try:
        columns = [_column(column, field.type) for column, field in zip(values, schema, strict=True)]
    except (ValueError, TypeError, KeyError, OverflowError) as exc:
        raise ValueError(f"rows for {model.__name__} do not fit its schema: {exc}") from exc
    return _checked_table(columns, schema, model)


def _column(values: Sequence, type_: pa.DataType) -> pa.Array:
    """One column of tuple rows. A list of structs (a statement's qualifiers) is built from its flattened
    tuples transposed into one array per struct field, then offsets: ``pa.array`` converting the nested
    tuples value by value took a third of a Wikidata batch's conversion."""
    if not (pa.types.is_list(type_) and pa.types.is_struct(type_.value_type)):
        return pa.array(values, type=type_)
    struct = type_.value_type
    flat = [item for items in values for item in items]
    fields = list(zip(*flat, strict=True)) if flat else [() for _ in struct]
    if len(fields) != struct.num_fields:
        raise ValueError(f"{struct.num_fields} struct fields expected, the tuples have {len(fields)}")
    children = [pa.array(column, type=field.type) for column, field in zip(fields, struct, strict=True)]
    offsets = np.concatenate([[0], np.cumsum(np.fromiter(map(len, values), np.int64, len(values)))])
    items = pa.StructArray.from_arrays(children, fields=list(struct))
    return pa.ListArray.from_arrays(pa.array(offsets, pa.int32()), items, type=type_)


def _checked_table(columns: list[pa.Array], schema: pa.Schema, model: type[BaseModel]) -> pa.Table:
    for field, column in zip(schema, columns, strict=True):
        if (name := _null_where_forbidden(field, column)) is not None:
            raise ValueError(f"rows for {model.__name__} do not fit its schema: {name} holds a null")
    return pa.Table.from_arrays(columns, schema=schema)


def _null_where_forbidden(field: pa.Field, values: pa.Array) -> str | None:
    """The first field, nested ones included (``qualifiers.item.property``), that holds a null although the
    schema forbids it. ``pa.array`` does not check; the sink's cast would, but only when it writes the file,
    where one bad row fails every row of the run."""
    if not field.nullable and values.null_count:
        return field.name
    if pa.types.is_list(field.type):
        inner = _null_where_forbidden(field.type.value_field, values.flatten())
    elif pa.types.is_struct(field.type):
        children = zip(field.type, values.flatten(), strict=True)
        inner = next((n for f, v in children if (n := _null_where_forbidden(f, v)) is not None), None)
    else:
        return None
    return None if inner is None else f"{field.name}.{inner}"


class ParquetSink:
    """Collects dict rows for one table and writes them to ``path`` when closed without error."""

    def __init__(
        self,
        path: Path,
        model: type[BaseModel],
        *,
        batch_rows: int = BATCH_ROWS,
        row_group_rows: int = ROW_GROUP_ROWS,
    ):
        if batch_rows <= 0 or row_group_rows <= 0:
            raise ValueError(
                f"batch_rows and row_group_rows must be positive, got {batch_rows}, {row_group_rows}"
            )
        self.path = Path(path)
        self.model = model
        self.schema = arrow_schema(model)
        self.batch_rows = batch_rows
        self.row_group_rows = row_group_rows
        self.rows = 0
        self._buffer: list[dict] = []
        self._pending: list[pa.Table] = []
        self._pending_rows = 0
        self._tmp = self.path.with_name(f".{self.path.name}.{os.getpid()}.tmp")
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._writer = pq.ParquetWriter(self._tmp, self.schema, compression="zstd")

    def append(self, row: dict) -> None:
        self._buffer.append(row)
        if len(self._buffer) >= self.batch_rows:
            self._convert()

    def extend(self, rows: list[dict]) -> None:
        self._buffer.extend(rows)
        if len(self._buffer) >= self.batch_rows:
            self._convert()

    def write_table(self, table: pa.Table) -> None:
        """Add rows already converted (e.g. by a worker process) with ``rows_to_table``."""
        self._convert()
        if table.num_rows:
            self._pending.append(table)
            self._pending_rows += table.num_rows
            if self._pending_rows >= self.row_group_rows:
                self._write_pending()

    def _convert(self) -> None:
        if self._buffer:
            self._pending.append(rows_to_table(self._buffer, self.model))
            self._pending_rows += len(self._buffer)
            self._buffer.clear()
            if self._pending_rows >= self.row_group_rows:
                self._write_pending()

    def _write_pending(self) -> None:
        """One row group from everything pending: few large writes encode several times faster."""
        if self._pending:
            table = pa.concat_tables(self._pending).cast(self.schema)
            self._writer.write_table(table, row_group_size=max(table.num_rows, 1))
            self.rows += table.num_rows
            self._pending.clear()
            self._pending_rows = 0

    def close(self) -> None:
        """Write what is pending, then move the finished file into place (replacing an earlier run's).
        Rows that do not fit the schema fail here too: the partial file is removed, never left behind."""
        try:
            self._convert()
            self._write_pending()
        except BaseException:
            self.abort()
            raise
        self._writer.close()
        os.replace(self._tmp, self.path)

    def abort(self) -> None:
        self._writer.close()
        self._tmp.unlink(missing_ok=True)

    def __enter__(self) -> ParquetSink:
        return self

    def __exit__(
        self, exc_type: type[BaseException] | None, exc: BaseException | None, tb: TracebackType | None
    ) -> None:
        if exc_type is None:
            self.close()
        else:
            self.abort()
