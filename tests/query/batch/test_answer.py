"""Answering one chunk on the real sample index: the same rows again, error rows, a refused answerer."""

from __future__ import annotations

from pathlib import Path

import pytest

from index.reader import IndexReader
from query.batch.answer import answer_chunk
from query.batch.answerers import Bm25Answerer, EngineAnswerer
from query.batch.plan import plan_chunks
from query.config import EngineConfig
from schemas.answers import AnswerRecord, Question
from tests.query.batch.conftest import MixedQuestions, rows_of, without_ms


def test_rerunning_a_chunk_gives_the_same_rows(sample_index, mixed: MixedQuestions, tmp_path: Path) -> None:
    _, result = sample_index
    (job,) = plan_chunks(
        mixed.path, result.version_dir, tmp_path / "parts", chunk_size=100, reader="candidates"
    )
    first = answer_chunk(job)
    first_rows = rows_of(job.part_path)
    second = answer_chunk(job)
    assert without_ms(rows_of(job.part_path)) == without_ms(first_rows)
    assert len(first_rows) == first.rows == second.rows == 10
    assert sorted(p.name for p in job.parts_dir.iterdir()) == ["part-00000.json", "part-00000.parquet"]


class FailingAnswerer:
    """The batch answerer (the engine), except that one question raises, as a bug in a stage would."""

    def __init__(self, reader: IndexReader, failing_id: str):
        self.inner = EngineAnswerer(reader, config=EngineConfig(reader="candidates"))
        self.name, self.index_version = self.inner.name, self.inner.index_version
        self.failing_id = failing_id

    def answer(self, question: Question) -> AnswerRecord:
        if question.id == self.failing_id:
            raise RuntimeError("boom")
        return self.inner.answer(question)

    def close(self) -> None:
        self.inner.close()


def test_a_failing_question_becomes_an_error_row(sample_index, mixed: MixedQuestions, tmp_path: Path) -> None:
    _, result = sample_index
    (job,) = plan_chunks(
        mixed.path, result.version_dir, tmp_path / "parts", chunk_size=100, reader="candidates"
    )
    answerer = FailingAnswerer(IndexReader.open(result.version_dir), failing_id="copied")
    try:
        chunk = answer_chunk(job, answerer)
    finally:
        answerer.close()
    rows = {r["question_id"]: r for r in rows_of(job.part_path)}
    assert rows["copied"]["error"] == "RuntimeError: boom" and rows["copied"]["answer"] is None
    assert rows["last"]["error"] is None and rows["last"]["evidence_ids"]
    assert (chunk.rows, chunk.errors, chunk.answered + chunk.unknown) == (10, 5, 5)


def test_an_answerer_on_another_index_version_is_refused(
    sample_index, mixed: MixedQuestions, tmp_path: Path
) -> None:
    _, result = sample_index
    (job,) = plan_chunks(
        mixed.path, result.version_dir, tmp_path / "parts", chunk_size=100, reader="candidates"
    )
    answerer = Bm25Answerer(IndexReader.open(result.version_dir))
    answerer.index_version = "v-some-other-build"
    with pytest.raises(ValueError, match="v-some-other-build"):
        answer_chunk(job, answerer)
    assert not job.part_path.exists()


def test_the_bm25_answerer_has_no_route(sample_index) -> None:
    _, result = sample_index
    answerer = Bm25Answerer(IndexReader.open(result.version_dir), k=5)
    try:
        record = answerer.answer(Question(id="q", question="population of Belgium"))
    finally:
        answerer.close()
    assert len(record.evidence_ids) == 5 and record.answerer == "bm25"
    assert (record.mode, record.unit, record.route) == (None, None, [])
