"""HqaSettings.load: defaults < config file < environment < CLI overrides, nested tables merged key by key."""

from __future__ import annotations

from pathlib import Path

import pytest

from schemas.settings import HqaSettings


@pytest.fixture
def config_file(tmp_path: Path) -> Path:
    path = tmp_path / "hqa.toml"
    path.write_text(
        'language = "fr"\n'
        "workers = 2\n"
        "[index]\n"
        "max_words = 50\n"
        "keep_versions = 2\n"
        "[airflow]\n"
        "qa_chunk_size = 7\n"
    )
    return path


def test_an_environment_variable_of_a_table_keeps_the_files_other_keys(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HQA_INDEX__KEEP_VERSIONS", "5")
    settings = HqaSettings.load(config_file)
    assert settings.index.keep_versions == 5  # the environment beats the file
    assert settings.index.max_words == 50  # the file's other [index] keys stay
    assert settings.airflow.qa_chunk_size == 7  # and so do its other tables
    assert (settings.language, settings.workers) == ("fr", 2)


def test_overrides_beat_the_environment_which_beats_the_file(
    config_file: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setenv("HQA_LANGUAGE", "de")
    monkeypatch.setenv("HQA_WORKERS", "3")
    monkeypatch.setenv("HQA_AIRFLOW__RETRIES", "9")
    settings = HqaSettings.load(config_file, workers=4, state_dir=None, index={"ann_nprobes": 7})
    assert settings.language == "de"  # environment over file
    assert settings.workers == 4  # override over environment
    assert settings.state_dir == HqaSettings().state_dir  # a None override is no override
    assert (settings.index.ann_nprobes, settings.index.max_words, settings.index.keep_versions) == (7, 50, 2)
    assert (settings.airflow.retries, settings.airflow.qa_chunk_size) == (9, 7)


def test_a_yaml_file_merges_the_same_way(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    path = tmp_path / "hqa.yaml"
    path.write_text("index:\n  max_words: 60\n  embedding_batch_size: 8\n")
    monkeypatch.setenv("HQA_INDEX__MAX_WORDS", "80")
    settings = HqaSettings.load(path)
    assert (settings.index.max_words, settings.index.embedding_batch_size) == (80, 8)


def test_without_a_file_the_environment_applies(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("HQA_INDEX__KEEP_VERSIONS", "5")
    settings = HqaSettings.load()
    assert settings.index.keep_versions == 5
    assert settings.index.max_words == HqaSettings().index.max_words
