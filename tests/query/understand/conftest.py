"""Fixtures of the understanding tests: the property table and one intent extractor on the sample index."""

from __future__ import annotations

import json

import pytest

from query.understand.intent import RuleIntentExtractor
from query.understand.linking import EntityTable
from query.understand.properties import PropertyLabels
from tests.conftest import SAMPLES


@pytest.fixture(scope="module")
def properties(settings) -> PropertyLabels:
    return PropertyLabels.load(settings.property_table)


@pytest.fixture(scope="module")
def extractor(reader, properties) -> RuleIntentExtractor:
    return RuleIntentExtractor(reader.aliases, properties, entities=EntityTable.from_reader(reader))


@pytest.fixture(scope="module")
def sample_questions() -> list[str]:
    lines = (SAMPLES / "questions.jsonl").read_text(encoding="utf-8").splitlines()
    return [json.loads(line)["question"] for line in lines if line.strip()]
