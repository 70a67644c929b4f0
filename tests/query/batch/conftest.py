"""Fixtures and checks shared by the batch tests: the sample index's evidence and a question file with
valid, copied and malformed lines."""

from __future__ import annotations

import json
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow.parquet as pq
import pytest

from tests.conftest import SAMPLES

QUESTIONS = SAMPLES / "questions.jsonl"


@dataclass(frozen=True)
class MixedQuestions:
    """A question file with valid, copied and malformed lines, and what the output must hold for it."""

    path: Path
    ids: list[str]  # question_id of each output row, in order ("" where no id could be read)
    rejected: dict[int, str]  # input line -> part of the reason
    copied_id: str  # evidence whose own text is asked as the question "copied"


@pytest.fixture(scope="module")
def evidence(sample_index) -> pl.DataFrame:
    _, result = sample_index
    files = sorted((result.version_dir / "evidence").glob("*.parquet"))
    return pl.read_parquet(files, columns=["evidence_id", "source_type", "text"])


@pytest.fixture(scope="module")
def mixed(tmp_path_factory: pytest.TempPathFactory, evidence: pl.DataFrame) -> MixedQuestions:
    passages = evidence.filter(pl.col("source_type") == "text").unique("text", keep="none")
    long_enough = passages.filter(pl.col("text").str.split(" ").list.len() >= 30).sort("evidence_id")
    copied = long_enough.row(0, named=True)
    sample = QUESTIONS.read_text().splitlines()[:4]
    first_ids = [json.loads(line)["id"] for line in sample]
    lines = [
        sample[0],
        sample[1],
        '{"id": "bad-json", "question": ',
        sample[2],
        json.dumps({"id": "copied", "question": copied["text"]}),
        json.dumps({"id": "", "question": "Who?"}),
        json.dumps({"id": "no-question"}),
        sample[0],
        sample[3],
        "",
        json.dumps({"id": "last", "question": "population of Belgium"}),
    ]
    path = tmp_path_factory.mktemp("questions") / "mixed.jsonl"
    path.write_text("\n".join(lines) + "\n")
    ids = [*first_ids[:2], "", first_ids[2], "copied", "", "no-question", first_ids[0], first_ids[3], "last"]
    rejected = {3: "not valid JSON", 6: "empty 'id'", 7: "empty 'question'", 8: "duplicate id"}
    return MixedQuestions(path=path, ids=ids, rejected=rejected, copied_id=copied["evidence_id"])


def rows_of(path: Path) -> list[dict]:
    return pq.read_table(path).to_pylist()


def without_ms(rows: list[dict]) -> list[dict]:
    """Rows with timings reduced to their stage names: milliseconds are measured, never equal twice."""
    return [
        {
            **r,
            "timings": [t["stage"] for t in r["timings"]],
            "route": [{k: v for k, v in step.items() if k != "ms"} for step in r["route"]],
        }
        for r in rows
    ]


def assert_routed(row: dict, modes: list[str]) -> None:
    """An engine answer names the mode that answered and what each configured mode did, in route order."""
    route = row["route"]
    assert sorted(s["mode"] for s in route) == sorted(modes)
    answered = [s for s in route if s["outcome"] == "answered"]
    assert len(answered) == 1 and answered[0]["mode"] == row["mode"]
    assert all(s["outcome"] in ("answered", "declined", "not tried") and s["reason"] for s in route)
    assert answered[0]["ms"] > 0
    assert row["answer"] is not None or row["unit"] is None  # no unit without an answer
