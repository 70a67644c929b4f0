"""The summary every ingest run returns and writes beside its output (used later for incremental runs)."""

from __future__ import annotations

from pydantic import BaseModel, Field


class TableOutput(BaseModel):
    """One Parquet file a run wrote."""

    table: str
    path: str
    rows: int


class IngestSummary(BaseModel):
    """What one ingest run (one reader over one shard of one input) read, wrote and set aside."""

    reader: str
    source: str
    source_sha256: str = Field(description="checksum of the whole input file")
    source_bytes: int
    shard: str = Field(description="shard name used in the output file names, e.g. 'all', 'lines-0-1000'")
    options_fingerprint: str = Field(
        "",
        description="hash of the reader options that shape the output; equal input + options = same output",
    )
    records_read: int
    records_written: int
    records_skipped: int = Field(0, description="read fine but outside the scope filters")
    quarantined: int
    bytes_read: int = Field(description="decompressed bytes consumed")
    seconds: float
    outputs: list[TableOutput]
    counts: dict[str, int] = Field(default_factory=dict, description="rows per output table")
    notes: dict[str, int] = Field(default_factory=dict, description="reader-specific tallies")

    @property
    def error_rate(self) -> float:
        return self.quarantined / max(1, self.records_read)
