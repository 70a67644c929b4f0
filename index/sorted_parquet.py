"""A Parquet file sorted by one string key, read by key through its row groups' min/max statistics.

Opening reads only the footer; a read touches the row groups whose key range holds a wanted key, on
one thread, so one instance serves many threads and the file's order is kept. The typed statements
(by subject) and the tables (by table id) are both read this way.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterable, Sequence
from pathlib import Path

import pyarrow as pa
import pyarrow.compute as pc
import pyarrow.dataset as ds
import pyarrow.parquet as pq
from pydantic import BaseModel

from ingest.files import atomic_path


class SortedParquet:
    def __init__(self, path: Path, key: str):
        self.path = Path(path)
        self.key = key
        fragment = next(iter(ds.dataset(self.path, format="parquet").get_fragments()))
        fragment.ensure_complete_metadata()  # the footer is read once, not per read
        self._fragment: ds.ParquetFileFragment = fragment
        metadata = fragment.metadata
        self.num_rows: int = metadata.num_rows
        self.metadata: dict[bytes, bytes] = metadata.schema.to_arrow_schema().metadata or {}
        self._mins: list[str] = []
        self._maxes: list[str] = []
        self._pruned = True  # False when a row group lacks statistics: then every group is read
        column = next(i for i in range(metadata.num_columns) if metadata.schema.column(i).path == key)
        for group in range(metadata.num_row_groups):
            stats = metadata.row_group(group).column(column).statistics
            if stats is None or not stats.has_min_max:
                self._pruned = False
                break
            self._mins.append(stats.min)
            self._maxes.append(stats.max)

    def row_groups(self, keys: Sequence[str]) -> list[int]:
        """Row groups whose [min, max] key range holds one of ``keys``."""
        if not self._pruned:
            return list(range(self._fragment.num_row_groups))
        groups: set[int] = set()
        for key in keys:
            group = bisect.bisect_left(self._maxes, key)
            while group < len(self._mins) and self._mins[group] <= key:
                groups.add(group)
                group += 1
        return sorted(groups)

    def read(self, keys: Sequence[str], condition: pc.Expression | None = None) -> pa.Table | None:
        """Rows whose key is one of ``keys`` (and that meet ``condition``), in file order; None if none."""
        wanted = sorted(set(keys))
        groups = self.row_groups(wanted) if wanted else []
        if not groups:
            return None
        expression = pc.field(self.key).isin(wanted)
        if condition is not None:
            expression &= condition
        part = self._fragment.subset(row_group_ids=groups)
        return part.to_table(filter=expression, use_threads=False)  # one thread keeps the file order


def write_sorted(
    table: pa.Table,
    out_path: Path,
    sort_keys: Sequence[str],
    row_group_rows: int,
    stats_key: bytes,
    stats: BaseModel,
) -> None:
    """Write ``table`` (already sorted by ``sort_keys``) atomically, in small row groups, with the
    build's ``stats`` in the schema metadata under ``stats_key`` and the sort order declared."""
    write_sorted_batches(
        table.to_batches(), table.schema, out_path, sort_keys, row_group_rows, stats_key, stats
    )


def write_sorted_batches(
    batches: Iterable[pa.RecordBatch],
    schema: pa.Schema,
    out_path: Path,
    sort_keys: Sequence[str],
    row_group_rows: int,
    stats_key: bytes,
    stats: BaseModel,
) -> None:
    """``write_sorted`` for rows that arrive in batches (already sorted, e.g. streamed from DuckDB's
    out-of-core sort): the same file, row groups of exactly ``row_group_rows`` but the last, written as
    they fill, so memory holds one row group and one batch."""
    metadata = {**(schema.metadata or {}), stats_key: stats.model_dump_json().encode()}
    schema = schema.with_metadata(metadata)
    out_path = Path(out_path)
    out_path.parent.mkdir(parents=True, exist_ok=True)
    sorting = pq.SortingColumn.from_ordering(schema, [(k, "ascending") for k in sort_keys])
    pending: list[pa.Table] = []
    rows = 0
    with (
        atomic_path(out_path) as tmp,
        pq.ParquetWriter(tmp, schema, compression="zstd", sorting_columns=sorting) as writer,
    ):
        for batch in batches:
            pending.append(pa.Table.from_batches([batch]).cast(schema))
            rows += batch.num_rows
            while rows >= row_group_rows:
                table = pa.concat_tables(pending)
                writer.write_table(table.slice(0, row_group_rows), row_group_size=row_group_rows)
                rest = table.slice(row_group_rows)
                pending, rows = [rest], rest.num_rows
        if rows:
            writer.write_table(pa.concat_tables(pending), row_group_size=row_group_rows)
