"""Question files (JSONL or Parquet): every line read or rejected with its line number, never lost."""

from __future__ import annotations

import json
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from query.batch.questions import read_questions
from schemas.answers import Question
from tests.conftest import OTTQA
from tests.query.batch.conftest import QUESTIONS, MixedQuestions


def test_jsonl_and_parquet_questions_read_the_same(tmp_path: Path) -> None:
    dev = json.loads((OTTQA / "dev.json").read_text())
    parquet = tmp_path / "questions.parquet"
    pq.write_table(
        pa.table(
            {
                "table_id": [d["table_id"] for d in dev],
                "id": [d["question_id"] for d in dev],
                "question": [d["question"] for d in dev],
            }
        ),
        parquet,
    )
    from_jsonl, from_parquet = read_questions(QUESTIONS), read_questions(parquet)
    expected = [Question(id=d["question_id"], question=d["question"]) for d in dev]
    assert from_jsonl.questions == expected
    assert from_parquet.questions == expected
    assert not from_jsonl.rejected and not from_parquet.rejected
    assert [e.line for e in from_parquet.entries] == list(range(1, len(dev) + 1))


def test_malformed_lines_are_kept_with_their_line_numbers(mixed: MixedQuestions) -> None:
    questions = read_questions(mixed.path)
    assert [e.id or "" for e in questions.entries] == mixed.ids
    assert [e.line for e in questions.entries] == [1, 2, 3, 4, 5, 6, 7, 8, 9, 11]
    rejected = {e.line: e.error for e in questions.rejected}
    assert rejected.keys() == mixed.rejected.keys()
    for line, reason in mixed.rejected.items():
        assert reason in rejected[line]
    assert "(first on line 1)" in rejected[8]
    assert questions.blank_lines == 1
    assert len(questions.questions) == 6


def test_parquet_rows_are_checked_like_lines(tmp_path: Path) -> None:
    path = tmp_path / "questions.parquet"
    pq.write_table(pa.table({"id": ["a", "b", "a", None], "question": ["Who?", None, "What?", "Why?"]}), path)
    questions = read_questions(path)
    assert [e.line for e in questions.entries] == [1, 2, 3, 4]
    assert [e.error is None for e in questions.entries] == [True, False, False, False]
    assert "duplicate id 'a' (first on line 1)" in questions.entries[2].error


@pytest.mark.parametrize(
    ("name", "content", "error", "message"),
    [
        ("absent.jsonl", None, FileNotFoundError, "does not exist"),
        ("bad.jsonl", b'{"id": "a"}\nnot json\n', ValueError, "no valid question (2 rejected entries"),
        ("empty.jsonl", b"", ValueError, "no valid question"),
        ("questions.csv", b"id,question\na,Who?\n", ValueError, "use .jsonl or .parquet"),
        ("broken.parquet", b"PAR1 not really", ValueError, "not a readable Parquet file"),
    ],
)
def test_unusable_question_files_raise_naming_the_path(
    tmp_path: Path, name: str, content: bytes | None, error: type[Exception], message: str
) -> None:
    path = tmp_path / name
    if content is not None:
        path.write_bytes(content)
    with pytest.raises(error) as raised:
        read_questions(path)
    assert str(path) in str(raised.value) and message in str(raised.value)


def test_parquet_without_the_columns_is_refused(tmp_path: Path) -> None:
    path = tmp_path / "questions.parquet"
    pq.write_table(pa.table({"question_id": ["a"], "question": ["Who?"]}), path)
    with pytest.raises(ValueError, match=r"lacks column\(s\) \['id'\]") as raised:
        read_questions(path)
    assert str(path) in str(raised.value)
