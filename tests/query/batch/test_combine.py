"""Combining the parts of a batch on the real sample index: one Parquet in input order, and its summary."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import polars as pl
import pyarrow.parquet as pq
import pytest

from query.batch.answer import answer_chunk
from query.batch.combine import combine_parts
from query.batch.plan import plan_chunks
from query.config import EngineConfig
from query.read.candidates import AnswerSettings
from schemas.answers import ANSWER_RECORD_SCHEMA
from tests.query.batch.conftest import MixedQuestions, assert_routed


def test_chunks_combine_into_one_parquet_in_input_order(
    sample_index, evidence: pl.DataFrame, mixed: MixedQuestions, tmp_path: Path
) -> None:
    _, result = sample_index
    parts_dir = tmp_path / "parts"
    jobs = plan_chunks(mixed.path, result.version_dir, parts_dir, chunk_size=3, reader="candidates")
    assert [(j.start, j.stop, j.part) for j in jobs] == [(0, 3, 0), (3, 6, 1), (6, 9, 2), (9, 10, 3)]
    assert {j.index_version_dir for j in jobs} == {result.version_dir.resolve()}
    results = [answer_chunk(j) for j in jobs]
    assert sorted(p.name for p in parts_dir.glob("*.parquet")) == [f"part-0000{i}.parquet" for i in range(4)]

    out = tmp_path / "answers.parquet"
    question_ms = [  # read before combining removes the parts: stage timings summed per question asked
        sum(t["ms"] for t in row["timings"])
        for r in results
        for row in pq.read_table(r.path).to_pylist()
        if row["timings"]
    ]
    summary = combine_parts(list(reversed(results)), out)  # the order results arrive in does not matter

    table = pq.read_table(out)
    assert table.schema.equals(ANSWER_RECORD_SCHEMA, check_metadata=False)
    assert table.schema.metadata[b"hqa.model"] == b"schemas.answers.AnswerRecord"
    rows = table.to_pylist()
    assert [r["question_id"] for r in rows] == mixed.ids
    assert {r["index_version"] for r in rows} == {result.manifest.version}
    assert {r["answerer"] for r in rows} == {"engine"}
    known = set(evidence["evidence_id"].to_list())
    assert all(set(r["evidence_ids"]) <= known for r in rows)
    answered = [r for r in rows if r["error"] is None]
    assert len(answered) == 6
    read = {"intent", "linking", "retrieve_bm25", "retrieve_dense", "retrieve_hop", "rerank1", "answer"}
    stages = {"retrieve-read": read, "kg-lookup": {"intent", "linking", "kg_lookup"}}  # by answering mode
    for r in answered:
        assert r["evidence_ids"] and stages[r["mode"]] <= {t["stage"] for t in r["timings"]}, r["question_id"]
    assert next(r for r in rows if r["question_id"] == "last")["mode"] == "kg-lookup"  # population of Belgium
    threshold = AnswerSettings().threshold
    assert all((r["answer"] is None) == (r["confidence"] < threshold) for r in answered)
    assert all(
        len(r["evidence_ids"]) == len(r["evidence_scores"]) == len(r["evidence_source_types"]) for r in rows
    )
    assert next(r for r in rows if r["question_id"] == "copied")["evidence_ids"][0] == mixed.copied_id
    for row in answered:
        assert_routed(row, EngineConfig().modes)

    errors = [r for r in rows if r["error"] is not None]
    assert [r["error"].split(":")[0] for r in errors] == [f"rejected input line {n}" for n in (3, 6, 7, 8)]
    assert all(r["answer"] is None and not r["evidence_ids"] for r in errors)
    assert all(r["mode"] is None and r["unit"] is None and r["route"] == [] for r in errors)

    assert (summary.questions, summary.answered + summary.unknown, summary.errors) == (10, 6, 4)
    assert summary.index_version == result.manifest.version and summary.out_path == out
    assert (summary.parts, summary.parts_reused) == (4, 0)
    assert 0 < summary.p50_ms <= summary.p95_ms and summary.mean_ms > 0
    assert len(question_ms) == 6  # rejected lines are no questions asked
    assert summary.p50_ms == pytest.approx(float(np.percentile(question_ms, 50)), abs=1e-3)
    assert summary.p95_ms == pytest.approx(float(np.percentile(question_ms, 95)), abs=1e-3)
    assert summary.mean_ms == pytest.approx(float(np.mean(question_ms)), abs=1e-3)
    assert not parts_dir.exists()  # parts are removed once the combined file is written
