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


@pytest.fixture(scope="session")
def model_cache(tmp_path_factory):
    """One model cache for the session: each bundled model is assembled into it at most once."""
    return tmp_path_factory.mktemp("models")


@pytest.fixture(scope="session")
def small_llm(model_cache):
    """The real bundled Qwen2.5-Coder-0.5B-Instruct through llama.cpp (the fast bundled model)."""
    from query.llm.bundled import FAST_MODEL
    from query.llm.chat import Llm
    from query.llm.settings import LlmSettings

    llm = Llm.open(LlmSettings(backend=FAST_MODEL, cache_dir=model_cache))
    yield llm
    llm.close()
