"""EngineConfig: names checked against their registries, files and overrides merged key by key."""

from __future__ import annotations

from pathlib import Path

import pytest
from pydantic import ValidationError

from query.config import EngineConfig
from query.modes import MODES
from query.understand.understanding import INTENT_EXTRACTORS


def test_an_unknown_intent_extractor_is_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValidationError, match="unknown intent extractor 'llm-nonexistent'") as raised:
        EngineConfig(intent="llm-nonexistent")
    assert all(name in str(raised.value) for name in INTENT_EXTRACTORS)


def test_unknown_modes_are_refused_naming_the_known_ones() -> None:
    with pytest.raises(ValidationError, match=r"unknown modes \['nope'\]") as raised:
        EngineConfig(modes=["nope"])
    assert all(name in str(raised.value) for name in MODES)


@pytest.mark.parametrize("modes", [[], ["retrieve-read", "retrieve-read"]])
def test_no_mode_or_a_mode_twice_is_refused(modes: list[str]) -> None:
    with pytest.raises(ValidationError, match="modes"):
        EngineConfig(modes=modes)


def test_the_defaults_name_registered_stages() -> None:
    config = EngineConfig()
    assert config.understand.intent.extractor in INTENT_EXTRACTORS
    assert set(config.modes) <= set(MODES)


@pytest.mark.parametrize("table", ["", "[engine]\n"])
def test_load_reads_the_modes_of_a_toml_file(tmp_path: Path, table: str) -> None:
    path = tmp_path / "engine.toml"
    path.write_text(f'{table}modes = ["retrieve-read"]\nintent = "rules"\n')
    config = EngineConfig.load(path)
    assert config.modes == ["retrieve-read"]
    assert config.understand.intent.extractor == "rules"


def test_load_merges_nested_overrides_key_by_key(tmp_path: Path) -> None:
    path = tmp_path / "engine.yaml"
    path.write_text("answer:\n  threshold: 0.4\n  top_evidence: 4\nrerank:\n  stage1_keep: 50\n")
    config = EngineConfig.load(path, answer={"max_candidates": 3}, llm={"n_ctx": 2048})
    assert (config.answer.threshold, config.answer.top_evidence, config.answer.max_candidates) == (0.4, 4, 3)
    assert config.llm.n_ctx == 2048 and config.llm.backend == "qwen2.5-coder-1.5b-instruct"
    assert config.rerank.stage1_keep == 50


def test_a_file_with_an_unknown_mode_names_it(tmp_path: Path) -> None:
    path = tmp_path / "engine.toml"
    path.write_text('modes = ["kg-lookup", "sql"]\n')
    with pytest.raises(ValidationError, match=r"unknown modes \['sql'\]"):
        EngineConfig.load(path)


@pytest.mark.parametrize(
    ("name", "content", "message"),
    [
        ("engine.yaml", b"- a list\n- not a table\n", "must hold a table of engine settings"),
        ("engine.yaml", b"engine: 3\n", "must hold a table of engine settings"),
        ("engine.yaml", b"modes: [kg-lookup\n", "is not a readable YAML file"),
        ("engine.yml", b"reader: \x01\n", "is not a readable YAML file"),
        ("engine.toml", b'modes = ["kg-lookup"\n', "is not a readable TOML file"),
        ("engine.toml", b'reader = "llm\xff"\n', "is not a readable TOML file: UnicodeDecodeError"),
        ("engine.toml", b"x = " + b"[" * 5000 + b"]" * 5000 + b"\n", "is not a readable TOML file"),
        ("engine.yaml", b"llm_reader: 3\n", "1 validation error for EngineConfig in "),
        ("engine.yaml", b"rerank:\n  ranker: 1.5\n", "EngineConfig in "),
    ],
)
def test_a_bad_config_file_is_a_value_error_naming_it(
    tmp_path: Path, name: str, content: bytes, message: str
) -> None:
    """Issue 17, found by tests/fuzz: a YAML syntax error raised yaml's own ScannerError, a file
    holding a list AttributeError, deeply nested arrays RecursionError, and no error named the file."""
    path = tmp_path / name
    path.write_bytes(content)
    with pytest.raises(ValueError, match=message) as raised:
        EngineConfig.load(path)
    assert str(path) in str(raised.value)
