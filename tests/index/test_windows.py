"""Passage windows computed batch-wise in polars against ``windows``, one passage at a time in Python."""

from __future__ import annotations

import random

import polars as pl
import pyarrow.parquet as pq
import pytest

from index.verbalize.text import windows
from index.verbalize.windows import batch_windows

PIECES = ["A", "b.", "x!", "Q?", " ", "  ", "\t", "\n", "\x1c", "\xa0", "\u3000", '"B', "(C", "[1", "'Z",
          "é.", "9", ". ", "\x00", "word", "Long.", "É", ""]  # fmt: skip


@pytest.fixture(scope="module")
def texts(sample_ingest) -> list[str]:
    """Every sample passage, plus made-up texts of odd whitespace, sentence ends and the marker."""
    real = [
        t
        for p in (sample_ingest.out_dir / "passages").glob("*.parquet")
        for t in pq.read_table(p)["text"].to_pylist()
    ]
    rng = random.Random(0)
    made = ["".join(rng.choice(PIECES) for _ in range(rng.randint(0, 80))) for _ in range(5000)]
    return real + made


@pytest.mark.parametrize("max_words", [100, 12, 3])
def test_batch_windows_equal_windows(texts: list[str], max_words: int) -> None:
    expected = [windows(t, max_words) for t in texts]
    got = []
    for start in range(0, len(texts), 997):
        got += batch_windows(pl.Series(texts[start : start + 997], dtype=pl.String), max_words).to_list()
    assert got == expected
    assert sum(len(w) > 1 for w in expected) > 100  # long passages cut into several windows were checked
