"""A version's evidence, each id once, read in batches of the columns a stage needs.

Evidence files are written one per ingest file; the same text (hence the same id) can come from two
files, and the first file in name order wins (within a file the verbalizer already wrote each id once).
Which rows lose is found once per build by DuckDB (out of core) and kept as a sorted list of row
positions (``evidence_duplicates.parquet`` in the version folder); every stage then streams the files
in order and skips those rows, so neither the evidence nor a set of its ids is ever whole in memory.
"""

from __future__ import annotations

from collections.abc import Iterator
from pathlib import Path

import duckdb
import numpy as np
import pyarrow as pa
import pyarrow.parquet as pq

from index import layout
from index.duck import read_sql, run, scalar, sql_path

POSITION_BITS = 40  # a row's position: (file index << 40) + row in file, as in index.duck.read_sql

DUPLICATES_SQL = """
SELECT pos FROM (
    SELECT pos, row_number() OVER (PARTITION BY evidence_id ORDER BY pos) AS seen
    FROM (SELECT evidence_id, pos FROM {evidence})
) WHERE seen > 1 ORDER BY pos
"""


def evidence_files(evidence_dir: Path) -> list[Path]:
    files = sorted(Path(evidence_dir).glob("*.parquet"))
    if not files:
        raise FileNotFoundError(f"no evidence under {evidence_dir}")
    return files


def write_duplicates(evidence_dir: Path, out_path: Path, con: duckdb.DuckDBPyConnection) -> int:
    """Write the sorted positions of the rows whose evidence id an earlier row (file order) has."""
    files = evidence_files(evidence_dir)
    tmp = Path(out_path).with_name(f".{Path(out_path).name}.tmp")
    select = DUPLICATES_SQL.format(evidence=read_sql(files, position=True))
    run(con, f"COPY ({select}) TO {sql_path(tmp)} (FORMAT parquet, COMPRESSION zstd)")
    tmp.replace(out_path)
    return pq.ParquetFile(out_path).metadata.num_rows


class EvidenceReader:
    """The evidence of one version folder (or build folder), deduplicated by id, first row winning."""

    def __init__(self, version_dir: Path):
        self.dir = Path(version_dir)
        self.files = evidence_files(self.dir / layout.EVIDENCE)
        self.duplicates_path = self.dir / layout.EVIDENCE_DUPLICATES
        if not self.duplicates_path.is_file():
            raise FileNotFoundError(
                f"no {layout.EVIDENCE_DUPLICATES} in {self.dir}: the evidence step writes it; run it again"
            )

    def rows(self) -> int:
        """Evidence rows, each id once."""
        total = sum(pq.ParquetFile(f).metadata.num_rows for f in self.files)
        return total - pq.ParquetFile(self.duplicates_path).metadata.num_rows

    def _duplicate_positions(self) -> Iterator[np.ndarray]:
        for batch in pq.ParquetFile(self.duplicates_path).iter_batches(batch_size=65_536):
            yield batch.column(0).to_numpy()

    def batches(self, columns: list[str] | None = None, batch_rows: int = 20_000) -> Iterator[pa.RecordBatch]:
        """Every evidence row once, in file order, ``batch_rows`` at a time (fewer at file ends)."""
        duplicates = self._duplicate_positions()
        pending = next(duplicates, np.empty(0, np.int64))
        exhausted = not pending.size
        for index, path in enumerate(self.files):
            base = index << POSITION_BITS
            start = 0
            for batch in pq.ParquetFile(path).iter_batches(batch_size=batch_rows, columns=columns):
                end = start + batch.num_rows
                while not exhausted and (not pending.size or pending[-1] < base + end):
                    more = next(duplicates, None)
                    if more is None:
                        exhausted = True
                    else:
                        pending = np.concatenate([pending, more])
                inside = pending[pending < base + end]
                pending = pending[pending >= base + end]
                if inside.size:
                    keep = np.ones(batch.num_rows, dtype=bool)
                    keep[inside - base - start] = False
                    batch = batch.filter(pa.array(keep))
                if batch.num_rows:
                    yield batch
                start = end

    def first(self, columns: list[str]) -> dict:
        """The first evidence row (never a duplicate: nothing comes before it). Files before it may be
        empty: an ingest file can say nothing (items with only a name, a shard of redirects)."""
        for path in self.files:
            for batch in pq.ParquetFile(path).iter_batches(batch_size=1, columns=columns):
                if batch.num_rows:
                    return batch.to_pylist()[0]
        raise ValueError(f"no evidence: the {len(self.files)} evidence files under {self.dir} are empty")

    def sql(self, columns: list[str]) -> str:
        """A SQL relation of the deduplicated evidence (these columns and ``pos``), for DuckDB joins."""
        wanted = ", ".join(columns)
        return (
            f"(SELECT {wanted}, pos FROM {read_sql(self.files, position=True)} "
            f"ANTI JOIN read_parquet({sql_path(self.duplicates_path)}) USING (pos))"
        )

    def count_by_type(self, con: duckdb.DuckDBPyConnection) -> dict[str, int]:
        rows = con.sql(f"SELECT source_type, count(*) FROM {self.sql(['source_type'])} GROUP BY 1").fetchall()
        return dict(rows)

    def count(self, con: duckdb.DuckDBPyConnection) -> int:
        return int(scalar(con, f"SELECT count(*) FROM {self.sql(['evidence_id'])}"))
