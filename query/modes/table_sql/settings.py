"""Bounds of the table-sql mode (``[table_sql]`` in an engine config)."""

from __future__ import annotations

from pydantic import BaseModel, Field

NAME = "table-sql"
LINKED_SHARE = 0.5
"""Share of a table's rows that must get a date from their linked pages before it is ranked by them."""


class TableSqlSettings(BaseModel):
    """Bounds of the table-sql mode (``[table_sql]`` in an engine config)."""

    retrieved_tables: bool = Field(
        True,
        description="also answer superlatives, positions and counts over a retrieved Wikipedia table (on: "
        "with the LLM reader it raised held-out OTT-QA cue-question EM from 12.7 to 18.7; the graph path "
        "is always on)",
    )
    estimate: float = Field(0.6, ge=0, le=1, description="router order when the question has a row cue")
    set_estimate: float = Field(
        0.995,
        ge=0,
        le=1,
        description="router order for a count or superlative over a set of KG entities: above the KG "
        "lookup's best (0.99), which would answer one member's value of the property",
    )
    table_from_top: int = Field(30, ge=1, description="final evidence rows searched for the table")
    max_rows: int = Field(2000, ge=2, description="a table larger than this is not loaded")
    display_rows: int = Field(50, ge=1, description="rows of the table kept in the result")
    hop_passages: int = Field(3, ge=0, description="lead passages of the chosen row's links read after it")
    subject_windows: int = Field(
        1,
        ge=0,
        description="of those, lead windows of the row subject's own page (the answer column's link) read "
        "first, before the pages its other cells link to",
    )
    alpha: float = Field(
        0.05, gt=0, lt=1, description="significance level a statistics question's verdict is read at"
    )
    min_test_values: int = Field(
        5, ge=3, description="values per sample below which a statistics test is refused, not run"
    )
