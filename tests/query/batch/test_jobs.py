"""A whole batch in one process on the real sample index (``answer_file``): answering, resuming after an
interruption or a kill, failing loudly, and going on through an LLM server outage."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
from pathlib import Path

import pyarrow.parquet as pq
import pytest

from index.reader import IndexReader
from query.batch import answer as batch_answer
from query.batch import jobs as batch
from query.batch.answer import ChunkResult
from query.batch.combine import AnsweringFailed
from query.batch.jobs import answer_file
from query.batch.plan import parts_dir_for
from query.batch.questions import read_questions
from query.config import EngineConfig
from query.read.candidates import AnswerSettings
from schemas.answers import ANSWER_RECORD_SCHEMA, AnswerRecord, Question
from tests.query.batch.conftest import QUESTIONS, MixedQuestions, assert_routed, rows_of
from tests.query.batch.test_answer import FailingAnswerer
from tests.query.llm_server import FAULT_TIMEOUT_S, ChatServer, chat_server


def test_answer_file_answers_the_sample_questions(sample_index, tmp_path: Path) -> None:
    _, result = sample_index
    questions = tmp_path / "questions.jsonl"  # the first 45 sample questions: three parts of 15
    questions.write_text("\n".join(QUESTIONS.read_text().splitlines()[:45]) + "\n")
    out = tmp_path / "answers.parquet"
    summary = answer_file(questions, out, result.version_dir, chunk_size=15, reader="candidates")
    rows = rows_of(out)
    assert [r["question_id"] for r in rows] == [q.id for q in read_questions(questions).questions]
    assert (summary.questions, summary.answered + summary.unknown, summary.errors) == (45, 45, 0)
    assert (summary.parts, summary.parts_reused) == (3, 0)
    assert summary.index_version == result.manifest.version
    assert not parts_dir_for(out).exists()
    threshold = AnswerSettings().threshold
    answered = [r for r in rows if r["answer"] is not None]
    assert len(answered) == summary.answered > 0  # the engine answers some; the rest are "unknown"
    assert all(r["confidence"] >= threshold and r["answerer"] == "engine" for r in answered)
    assert all(len(r["evidence_ids"]) == 30 for r in rows)
    for row in rows:
        assert_routed(row, EngineConfig().modes)


class Interrupted(Exception):
    pass


def interrupt(*_args, **_kwargs):
    raise Interrupted


def test_answer_file_resumes_from_the_parts_of_an_interrupted_run(
    sample_index, mixed: MixedQuestions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, result = sample_index
    out = tmp_path / "answers.parquet"
    with monkeypatch.context() as patch:
        patch.setattr(batch, "combine_parts", interrupt)  # killed after answering, before combining
        with pytest.raises(Interrupted):
            answer_file(mixed.path, out, result.version_dir, chunk_size=3, reader="candidates")
    assert len(list(parts_dir_for(out).glob("part-*.parquet"))) == 4 and not out.exists()

    monkeypatch.setattr(batch_answer, "open_answerer", interrupt)  # a recomputed part would need an answerer
    summary = answer_file(mixed.path, out, result.version_dir, chunk_size=3, reader="candidates")
    assert (summary.parts, summary.parts_reused, summary.questions) == (4, 4, 10)
    assert [r["question_id"] for r in rows_of(out)] == mixed.ids


def test_a_part_of_an_older_answer_record_is_answered_again(
    sample_index, mixed: MixedQuestions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, result = sample_index
    out = tmp_path / "answers.parquet"
    with monkeypatch.context() as patch:
        patch.setattr(batch, "combine_parts", interrupt)
        with pytest.raises(Interrupted):
            answer_file(mixed.path, out, result.version_dir, chunk_size=3, reader="candidates")
    # part 1 as a version without the route columns wrote it; its sidecar still claims the same work
    old = parts_dir_for(out) / "part-00001.parquet"
    pq.write_table(pq.read_table(old).drop_columns(["unit", "mode", "route"]), old)

    summary = answer_file(mixed.path, out, result.version_dir, chunk_size=3, reader="candidates")
    assert (summary.parts, summary.parts_reused, summary.questions) == (4, 3, 10)
    table = pq.read_table(out)
    assert table.schema.equals(ANSWER_RECORD_SCHEMA, check_metadata=False)
    rows = table.to_pylist()
    assert [r["question_id"] for r in rows] == mixed.ids
    for row in rows[3:6]:  # part 1, answered again: routed like the others
        if row["error"] is None:
            assert_routed(row, EngineConfig().modes)


def test_parts_of_a_changed_question_file_are_not_reused(
    sample_index, mixed: MixedQuestions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    _, result = sample_index
    questions = tmp_path / "questions.jsonl"
    questions.write_bytes(mixed.path.read_bytes())
    out = tmp_path / "answers.parquet"
    with monkeypatch.context() as patch:
        patch.setattr(batch, "combine_parts", interrupt)
        with pytest.raises(Interrupted):
            answer_file(questions, out, result.version_dir, chunk_size=3, reader="candidates")
    with questions.open("a") as f:
        f.write(json.dumps({"id": "added", "question": "Who founded Belgium?"}) + "\n")

    summary = answer_file(questions, out, result.version_dir, chunk_size=3, reader="candidates")
    assert (summary.parts, summary.parts_reused, summary.questions) == (4, 0, 11)
    assert [r["question_id"] for r in rows_of(out)] == [*mixed.ids, "added"]


def test_a_run_in_which_every_question_fails_is_a_failure_after_writing_everything(
    sample_index, mixed: MixedQuestions, tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Issue 17: every question raising (an engine that cannot read its index) used to end the batch
    as a success with all rows in error. Now the answers are written, then the run fails."""
    _, result = sample_index

    class Broken(FailingAnswerer):
        def answer(self, question: Question) -> AnswerRecord:
            raise OSError("index folder unreadable")

    monkeypatch.setattr(
        batch_answer, "open_answerer", lambda *a, **k: Broken(IndexReader.open(result.version_dir), "")
    )
    out = tmp_path / "answers.parquet"
    with pytest.raises(AnsweringFailed, match=r"failed, over the limit of 10%.*index folder unreadable"):
        answer_file(mixed.path, out, result.version_dir, chunk_size=4, reader="candidates")
    rows = rows_of(out)  # everything written, in order, before the run failed
    assert [r["question_id"] for r in rows] == mixed.ids
    assert all(r["error"] for r in rows)
    summary = answer_file(mixed.path, tmp_path / "again.parquet", result.version_dir, chunk_size=4,
                          reader="candidates", max_failure_rate=None)  # fmt: skip
    asked = len(mixed.ids) - len(mixed.rejected)
    assert (summary.failed, summary.errors) == (asked, len(mixed.ids))


def test_a_batch_goes_on_through_an_llm_server_outage_and_keeps_each_failed_reading(
    sample_index, tmp_path: Path
) -> None:
    """Issue 17: a real OpenAI-compatible server that fails its first requests (HTTP 500), then comes back.
    The batch neither stops nor fails: the questions read during the outage keep the candidate reader's
    answer, the later ones are read by the model again. The answers file used to drop the reading, so
    an outage left no trace in it; each row now keeps it (outcome, error naming the server) and the
    summary counts the failed readings."""
    _, result = sample_index
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(QUESTIONS.read_text().splitlines()[:6]) + "\n")
    said_unknown = ChatServer.chat_reply(json.dumps({"answer": "", "evidence": [], "unknown": True}))
    config = tmp_path / "engine.toml"
    with chat_server() as server:
        server.responses = [(500, "model worker crashed")] * 3  # the outage
        server.default = (200, said_unknown)  # then the server is back (and finds nothing)
        config.write_text(
            f'reader = "llm"\n[llm]\nbackend = "openai-compatible"\nbase_url = "{server.url}"\n'
            f"timeout_s = {FAULT_TIMEOUT_S}\n"
        )
        llm_out = tmp_path / "llm.parquet"
        summary = answer_file(questions, llm_out, result.version_dir, chunk_size=3, engine_config=config)
    candidates_out = tmp_path / "candidates.parquet"
    answer_file(questions, candidates_out, result.version_dir, chunk_size=3, reader="candidates")
    rows, candidate_rows = rows_of(llm_out), rows_of(candidates_out)
    assert (summary.questions, summary.errors, summary.failed) == (6, 0, 0)
    readings = [json.loads(r["reading"]) if r["reading"] else None for r in rows]
    outcomes = [r["outcome"] for r in readings if r is not None]
    failed = [i for i, r in enumerate(readings) if r is not None and r["outcome"] == "error"]
    assert 1 <= len(failed) <= 3 and summary.reading_failures == len(failed)
    # in input order: the outage, then the model reading again
    assert outcomes == ["error"] * len(failed) + ["unknown"] * (len(outcomes) - len(failed))
    assert len(outcomes) > len(failed)
    for i in failed:
        assert (rows[i]["answer"], rows[i]["confidence"]) == (
            candidate_rows[i]["answer"],
            candidate_rows[i]["confidence"],
        )
        assert server.url in readings[i]["error"] and "HTTP 500" in readings[i]["error"]
    assert all(rows[i]["answer"] is None for i, r in enumerate(readings) if r and r["outcome"] == "unknown")
    assert all(r["reading"] is None for r in candidate_rows)  # the candidate reader alone keeps no reading


BATCH_RUN = """
import sys
from pathlib import Path
from query.batch.jobs import answer_file

questions, out, index, config = map(Path, sys.argv[1:5])
answer_file(questions, out, index, chunk_size=2, engine_config=config)
"""


KILL_AT_REQUEST = 5
"""The LLM server kills the batch process when this request arrives: one request per question read."""


def test_a_killed_batch_resumes_from_its_finished_parts_and_answers_failed_ones_again(
    sample_index, tmp_path: Path
) -> None:
    """Issue 17: a real batch process, killed (SIGKILL, no clean-up) in the middle of its third chunk by the
    LLM server it reads with, whose first request also failed (HTTP 500). The re-run takes the finished
    part as written and answers the rest; the part holding the failed reading is answered again, now
    that the server is back (before, it was reused, keeping the candidate answer and its error)."""
    _, result = sample_index
    questions = tmp_path / "questions.jsonl"
    questions.write_text("\n".join(QUESTIONS.read_text().splitlines()[:6]) + "\n")
    out, config = tmp_path / "answers.parquet", tmp_path / "engine.toml"
    said_unknown = ChatServer.chat_reply(json.dumps({"answer": "", "evidence": [], "unknown": True}))
    batch_pid: list[int] = []
    with chat_server() as server:
        server.responses = [(500, "model worker crashed")]  # the first reading fails
        server.default = (200, said_unknown)
        server.before_reply = lambda n: n == KILL_AT_REQUEST and os.kill(batch_pid[0], signal.SIGKILL)
        config.write_text(
            f'reader = "llm"\n[llm]\nbackend = "openai-compatible"\nbase_url = "{server.url}"\n'
            f"timeout_s = {FAULT_TIMEOUT_S}\n"
        )
        args = [str(questions), str(out), str(result.version_dir), str(config)]
        with (tmp_path / "batch.log").open("w") as log:
            batch = subprocess.Popen(
                [sys.executable, "-c", BATCH_RUN, *args], stdout=log, stderr=subprocess.STDOUT
            )
        batch_pid.append(batch.pid)
        assert batch.wait(timeout=120) == -signal.SIGKILL, (tmp_path / "batch.log").read_text()[-2000:]
        assert not out.exists()
        finished = {
            int(p.stem.removeprefix("part-")): ChunkResult.model_validate_json(p.read_text())
            for p in parts_dir_for(out).glob("part-*.json")
        }
        assert sorted(finished) == [0, 1]  # two chunks of two questions, one request each, were written
        assert finished[0].reading_failures == 1 and finished[1].reading_failures == 0
        kept = rows_of(finished[1].path)

        server.before_reply = None
        summary = answer_file(questions, out, result.version_dir, chunk_size=2, engine_config=config)
    rows = rows_of(out)
    assert (summary.parts, summary.parts_reused, summary.questions) == (3, 1, 6)
    assert [r["question_id"] for r in rows] == [q.id for q in read_questions(questions).questions]
    assert rows[2:4] == kept  # the finished part, as the killed run wrote it
    readings = [json.loads(r["reading"]) for r in rows if r["reading"] is not None]
    assert readings and all(r["outcome"] == "unknown" for r in readings)  # part 0 was read again
    assert summary.reading_failures == 0 and not parts_dir_for(out).exists()
