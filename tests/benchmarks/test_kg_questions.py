"""benchmarks/kg_questions.py: the committed KG question set is what the script makes of the sample dump."""

from __future__ import annotations

import json
import re
from collections import Counter
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO, WIKIDATA_ITEMS, load_script

SCRIPT = REPO / "benchmarks" / "kg_questions.py"
COMMITTED = REPO / "benchmarks" / "kg_questions" / "questions.jsonl"
TYPES = ("area", "population", "population_in_year", "inception", "country", "capital")
# P36 values whose English label is in the sample dump: Portugal -> Lisbon, Saarland -> Saarbrücken, and
# Skien -> Skien (dropped: the value is the subject). Every other capital is an item outside the dump.
CAPITALS_IN_DUMP = 2


@pytest.fixture(scope="module")
def kg_questions() -> ModuleType:
    """The script imported by path: benchmarks/ is not a package."""
    return load_script(SCRIPT)


@pytest.fixture(scope="module")
def questions() -> dict[str, dict]:
    records = [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]
    return {r["question"]: r for r in records}


def test_committed_set_is_what_the_script_writes(
    kg_questions: ModuleType, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    out = tmp_path / "questions.jsonl"
    assert kg_questions.main(["--dump", str(WIKIDATA_ITEMS), "--out", str(out)]) == 0
    regenerate = "re-run the command in benchmarks/kg_questions/README.md"
    # Byte for byte is safe here, unlike for the KG set questions' p-values: the script computes no float
    # (an amount is the dump's decimal string regrouped as text), so no CPU's libm can change a digit.
    assert out.read_bytes() == COMMITTED.read_bytes(), regenerate
    assert "candidate questions dropped" in capsys.readouterr().out


def test_the_script_imports_nothing_of_the_project() -> None:
    imports = re.findall(r"^\s*(?:from|import)\s+([\w.]+)", SCRIPT.read_text(encoding="utf-8"), re.M)
    assert not {name.split(".")[0] for name in imports} & {"schemas", "ingest", "index", "query"}


def test_set_size_ids_and_answers() -> None:
    records = [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]
    assert len(records) >= 100
    per_type = Counter(r["type"] for r in records)
    assert set(per_type) == set(TYPES)
    assert all(per_type[kind] >= 15 for kind in TYPES if kind != "capital"), per_type
    assert per_type["capital"] == CAPITALS_IN_DUMP
    assert len({r["id"] for r in records}) == len(records)
    assert [r["id"] for r in records] == [f"kg-{n:04d}" for n in range(1, len(records) + 1)]
    for r in records:
        assert r["answers"] and all(a.strip() for a in r["answers"]), r
        assert not any(re.fullmatch(r"[QPL]\d+", a) for a in r["answers"]), r
        assert ("unit" in r) == (r["type"] == "area"), r  # population is dimensionless


def test_gold_read_by_hand_from_the_dump(questions: dict[str, dict]) -> None:
    belgium = questions["What is the area of Belgium?"]
    assert belgium["answers"] == ["30,528", "30528"]  # Q31 P2046 "+30528", unit Q712226
    assert belgium["unit"] == "square kilometre" and belgium["entities"] == ["Q31"]
    assert questions["What was the population of Belgium in 1960?"]["answers"] == ["9,153,489", "9153489"]
    # Kiel: the preferred 118.65 km² wins over the normal-rank 118600000 m²
    assert questions["What is the area of Kiel?"]["answers"] == ["118.65"]
    # Potsdam: the only 2012 figure (159456) is deprecated, so its earliest year asked is 2013
    assert questions["What was the population of Potsdam in 2013?"]["answers"] == ["161,097", "161097"]
    assert "What was the population of Potsdam in 2012?" not in questions
    assert questions["In which year was Gera founded?"]["answers"] == ["995"]  # "+0995-00-00", precision 9
    assert questions["Which country is Mannheim in?"]["answers"] == ["Germany"]  # two deprecated values
    assert "Which country is Belgium in?" not in questions  # P17 is the subject itself
    assert questions["What is the capital of Portugal?"]["answers"] == ["Lisbon"]
