"""The Parquet sink: rows that do not fit the schema fail the close, and leave no partial file."""

from __future__ import annotations

from pathlib import Path

import pyarrow.parquet as pq
import pytest

from ingest.parquet_sink import ParquetSink, rows_to_table
from schemas.quarantine import QuarantineRecord


def _record(**update) -> dict:
    row = {"source": "dump.json", "reader": "wikidata", "line": 3, "byte_offset": 40, "char_offset": None,
           "record_id": "Q1", "error_type": "ValueError", "error": "bad", "excerpt": "{}"}  # fmt: skip
    return row | update


def test_a_row_that_does_not_fit_fails_the_close_and_leaves_no_tmp_file(tmp_path: Path) -> None:
    sink = ParquetSink(tmp_path / "q" / "part.parquet", QuarantineRecord)
    sink.append(_record())
    sink.append(_record(record_id=12))  # an int where the schema says string
    with pytest.raises(ValueError, match="do not fit its schema"):
        sink.close()
    assert list((tmp_path / "q").iterdir()) == []


def test_rows_that_fit_are_written_in_order(tmp_path: Path) -> None:
    with ParquetSink(tmp_path / "part.parquet", QuarantineRecord) as sink:
        sink.extend([_record(line=i, record_id=f"Q{i}") for i in range(5)])
    table = pq.read_table(tmp_path / "part.parquet")
    assert table["record_id"].to_pylist() == [f"Q{i}" for i in range(5)]
    assert [p.name for p in tmp_path.iterdir()] == ["part.parquet"]


@pytest.mark.parametrize("update", [{"line": 2**70}, {"excerpt": "cut \ud800 here"}, {"source": None}])
def test_an_integer_beyond_its_column_a_lone_surrogate_or_a_null_is_a_value_error(update: dict) -> None:
    """Issue 17, found by tests/fuzz: the first two raised OverflowError and UnicodeEncodeError, which
    the readers' per-record fallbacks (they catch ValueError) did not expect; a null where the schema allows
    none passed, to fail the sink's cast when the file was written, with every row of the run."""
    with pytest.raises(ValueError, match="rows for QuarantineRecord do not fit its schema"):
        rows_to_table([_record(**update)], QuarantineRecord)
