"""Fixtures shared by the query tests: one reader on the real sample index per test module."""

from __future__ import annotations

import pytest

from index.reader import IndexReader


@pytest.fixture(scope="module")
def reader(sample_index):
    _, result = sample_index
    reader = IndexReader.open(result.version_dir)
    yield reader
    reader.close()
