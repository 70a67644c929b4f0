"""What the ingest writes about records it could not read: enough to find and replay each one."""

from __future__ import annotations

from pydantic import BaseModel, Field


class QuarantineRecord(BaseModel):
    """One bad input record, with where it sits in its file and why it was set aside."""

    source: str = Field(description="input file path or name")
    reader: str = Field(description="which reader met it: wikidata, wikipedia, ottqa")
    line: int | None = Field(None, description="1-based line number, for line-oriented inputs")
    byte_offset: int | None = Field(None, description="offset in the decompressed stream")
    char_offset: int | None = Field(
        None, description="character offset: into a JSON document, or into the page's wikitext"
    )
    record_id: str | None = Field(None, description="entity id or page title, when it could be read")
    error_type: str
    error: str
    excerpt: str = Field(description="the first characters of the bad record")
