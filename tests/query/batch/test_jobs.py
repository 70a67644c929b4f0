"""Batch answering on the real sample index: question files, chunks, combining, failures and resuming."""

from __future__ import annotations

import json
import os
import shutil
import signal
import subprocess
import sys
from dataclasses import dataclass
from pathlib import Path

import polars as pl
import pyarrow as pa
import pyarrow.parquet as pq
import pytest

from index.reader import IndexReader
from index.versions import LEASE, PINS, VersionStore
from query.batch import jobs as batch
from query.batch.answerers import Bm25Answerer, EngineAnswerer
from query.batch.jobs import (
    ChunkResult,
    answer_chunk,
    answer_file,
    combine_parts,
    parts_dir_for,
    plan_chunks,
    read_questions,
)
from query.config import EngineConfig
from query.read.candidates import AnswerSettings
from schemas.answers import ANSWER_RECORD_SCHEMA, AnswerRecord, Question
from schemas.settings import HqaSettings
from tests.conftest import OTTQA, SAMPLES
from tests.query.llm_server import FAULT_TIMEOUT_S, ChatServer, chat_server

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
    assert not parts_dir.exists()  # parts are removed once the combined file is written


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


def test_a_planned_version_outlives_rebuilds_until_its_parts_are_combined(
    sample_index, mixed: MixedQuestions, tmp_path: Path
) -> None:
    """Issue 17: a batch pins the version it planned on. Without the pin, two rebuilds with
    keep_versions 1 before the chunks ran deleted it, and every chunk failed to open its index."""
    _, result = sample_index
    store = VersionStore(tmp_path / "indexes")
    manifest = store.manifest(result.version_dir)
    building = store.start("v1")
    shutil.copytree(
        result.version_dir, building, dirs_exist_ok=True, ignore=shutil.ignore_patterns(PINS, LEASE)
    )
    planned = store.publish(building, manifest.model_copy(update={"version": "v1"}))
    parts_dir = tmp_path / "parts"
    jobs = plan_chunks(mixed.path, store.root, parts_dir, chunk_size=5, reader="candidates")
    assert {j.index_version_dir for j in jobs} == {planned.resolve()}
    assert store.pins(planned) == [batch.pin_holder(parts_dir)]
    for name in ("v2", "v3"):  # rebuilds publish and prune while the chunks wait
        store.publish(store.start(name), manifest.model_copy(update={"version": name}))
        store.prune(keep=1)
    assert planned.is_dir() and not (store.root / "v2").exists()
    summary = combine_parts([answer_chunk(j) for j in jobs], tmp_path / "answers.parquet")
    assert summary.index_version == "v1" and summary.questions == len(mixed.ids)
    assert store.pins(planned) == []  # combined: the pin is gone, and the next prune takes the version
    assert store.prune(keep=1) == [planned] and not planned.exists()


def test_the_bm25_answerer_has_no_route(sample_index) -> None:
    _, result = sample_index
    answerer = Bm25Answerer(IndexReader.open(result.version_dir), k=5)
    try:
        record = answerer.answer(Question(id="q", question="population of Belgium"))
    finally:
        answerer.close()
    assert len(record.evidence_ids) == 5 and record.answerer == "bm25"
    assert (record.mode, record.unit, record.route) == (None, None, [])


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

    monkeypatch.setattr(batch, "open_answerer", interrupt)  # a recomputed part would need an answerer
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
        batch, "open_answerer", lambda *a, **k: Broken(IndexReader.open(result.version_dir), "")
    )
    out = tmp_path / "answers.parquet"
    with pytest.raises(
        batch.AnsweringFailed, match=r"failed, over the limit of 10%.*index folder unreadable"
    ):
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
        summary = answer_file(
            questions, llm_out, result.version_dir, chunk_size=3, settings=HqaSettings(engine_config=config)
        )
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
from schemas.settings import HqaSettings

questions, out, index, config = map(Path, sys.argv[1:5])
answer_file(questions, out, index, chunk_size=2, settings=HqaSettings(engine_config=config))
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
        settings = HqaSettings(engine_config=config)
        summary = answer_file(questions, out, result.version_dir, chunk_size=2, settings=settings)
    rows = rows_of(out)
    assert (summary.parts, summary.parts_reused, summary.questions) == (3, 1, 6)
    assert [r["question_id"] for r in rows] == [q.id for q in read_questions(questions).questions]
    assert rows[2:4] == kept  # the finished part, as the killed run wrote it
    readings = [json.loads(r["reading"]) for r in rows if r["reading"] is not None]
    assert readings and all(r["outcome"] == "unknown" for r in readings)  # part 0 was read again
    assert summary.reading_failures == 0 and not parts_dir_for(out).exists()
