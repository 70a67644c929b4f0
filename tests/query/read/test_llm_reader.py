"""The LLM reader: the real bundled 0.5B model reading the sample index's evidence through the engine,
and (for the paths a real model takes only by chance) a scripted backend: retry, fallback, errors."""

from __future__ import annotations

import pytest

from query import Engine, EngineConfig
from query.evaluation.metrics import exact_match
from query.llm.backends import LlmError
from query.llm.bundled import FAST_MODEL
from query.llm.chat import Llm
from query.pipeline import StagedRun
from query.read.candidates import UNKNOWN, AnswerChoice, CandidateAnswerer
from query.read.llm_reader import LlmReader, LlmReaderSettings, answer_logprob, messages, window
from query.read.readers import CandidateReader
from query.retrieve.evidence_store import EvidenceRow
from tests.conftest import raw_entities
from tests.query.llm_server import FAULT_TIMEOUT_S, LLM_FAULTS, WHAT_TO_DO, faulty_llm_server
from tests.query.scripted_llm import Scripted

ARISTOTLE = "What was the name of Aristotle's father?"


@pytest.fixture(scope="module")
def llm_engine(sample_index, model_cache):
    _, result = sample_index
    config = EngineConfig.load(None, reader="llm", llm={"backend": FAST_MODEL, "cache_dir": str(model_cache)})
    with Engine.open(result.version_dir, config) as engine:
        yield engine


def _staged(engine: Engine, question: str) -> StagedRun:
    return engine.pipeline.run(engine.understand(question))


def _llm_reader(engine: Engine) -> LlmReader:
    reader = engine.pipeline.reader
    assert isinstance(reader, LlmReader), reader
    return reader


def test_reads_a_passage_and_cites_the_row_that_holds_the_answer(llm_engine: Engine) -> None:
    result = llm_engine.ask(ARISTOTLE)
    assert result.mode == "retrieve-read" and result.reader == f"llm:{FAST_MODEL}"
    assert exact_match(result.answer, ["Nicomachus"]) == 1.0
    reading = result.reading
    assert reading is not None and reading.outcome in {"supported", "normalized", "retried"}
    assert reading.model == FAST_MODEL and reading.shown == llm_engine.config.llm_reader.evidence
    assert reading.prompt_tokens > 100 and reading.completion_tokens > 5 and reading.ms > 0
    assert reading.answer_logprob is not None and reading.answer_logprob <= 0
    assert 0 < result.confidence <= 1
    holders = [e for e in result.evidence if e.evidence_id in result.supporting_evidence_ids]
    assert holders and all(result.answer in e.text for e in holders)
    assert result.timing("read_llm") > 0


def test_a_kg_quantity_is_answered_with_its_unit_apart(llm_engine: Engine) -> None:
    claim = raw_entities()["Q31"]["claims"]["P2046"][0]["mainsnak"]["datavalue"]["value"]
    amount = claim["amount"].lstrip("+")
    staged = _staged(llm_engine, "What is the area of Belgium?")
    rows = [r for r in staged.rows.values() if r.source_type == "kg" and r.provenance.property == "P2046"]
    assert rows, "the area statement is in the pool"
    fallback = AnswerChoice(UNKNOWN, None, 0.0, True, [], [])
    read = _llm_reader(llm_engine).read("What is the area of Belgium?", rows[:3], fallback)
    assert read.choice.answer.replace(",", "") == amount.split(".")[0]
    assert read.reading.unit == "square kilometre"
    assert read.choice.supporting == [rows[0].evidence_id] or rows[0].evidence_id in read.choice.supporting


def test_the_prompt_numbers_the_rows_and_cuts_long_ones_around_the_question(llm_engine: Engine) -> None:
    staged = _staged(llm_engine, ARISTOTLE)
    rows = [staged.rows[e] for e in staged.rankings["final"][:8]]
    settings = LlmReaderSettings(evidence=8, window_chars=200)
    system, user = messages(ARISTOTLE, rows, settings)
    assert system["role"] == "system" and "JSON" in system["content"]
    lines = user["content"].split("\n")
    assert lines[0] == "Evidence:" and lines[-1] == f"Question: {ARISTOTLE}"
    numbered = [line for line in lines if line.startswith("[")]
    assert [line.split("]")[0] for line in numbered] == [f"[{n}" for n in range(1, 9)]
    for row, line in zip(rows, numbered, strict=True):
        body = line.split(" · ", 1)[1]
        assert len(body) <= 200 + len(" … …") + 2
        if len(row.text) <= 200:
            assert body == " ".join(row.text.split())


def test_a_modes_note_comes_between_the_evidence_and_the_question(llm_engine: Engine) -> None:
    staged = _staged(llm_engine, ARISTOTLE)
    rows = [staged.rows[e] for e in staged.rankings["final"][:3]]
    note = "row [1] is the row SQL picked"
    _, user = messages(ARISTOTLE, rows, LlmReaderSettings(evidence=3), note)
    lines = [line for line in user["content"].split("\n") if line]
    assert lines[-2:] == [f"Note: {note}", f"Question: {ARISTOTLE}"]
    assert lines[-3].startswith("[3]")
    _, plain = messages(ARISTOTLE, rows, LlmReaderSettings(evidence=3))
    assert "Note:" not in plain["content"]


def test_the_real_model_reads_further_when_the_top_rows_are_about_something_else(llm_engine: Engine) -> None:
    staged = _staged(llm_engine, ARISTOTLE)
    holders = [r for r in staged.rows.values() if "Nicomachus" in r.text]
    belgium = _staged(llm_engine, "What is the area of Belgium?")
    others = [r for r in belgium.rows.values() if r.source_type == "kg" and "father" not in r.text][:2]
    assert holders and len(others) == 2 and not any("Nicomachus" in r.text for r in others)
    shipped = _llm_reader(llm_engine)
    reader = LlmReader(shipped.llm, shipped.fallback, LlmReaderSettings(evidence=2, read_further=True))
    fallback = AnswerChoice(UNKNOWN, None, 0.0, True, [], [])
    read = reader.read(ARISTOTLE, [*others, holders[0]], fallback)
    assert read.reading.further_from == 3 and read.reading.shown == 3
    assert exact_match(read.choice.answer, ["Nicomachus"]) == 1.0 and read.choice.supporting == [
        holders[0].evidence_id
    ]
    assert read.reading.cited in ([], [3])


def test_window_keeps_the_prefix_and_centres_on_the_question_words() -> None:
    text = (
        "Page / Section: "
        + " ".join(f"w{i}" for i in range(300))
        + " Nicomachus was his father "
        + "x " * 200
    )
    cut = window(text, {"father"}, 120)
    assert cut.startswith("Page / Section: … ") and cut.endswith(" …")
    assert "Nicomachus was his father" in cut and len(cut) <= 120 + 20


# -- the paths a real model takes only by chance, on a scripted backend ---------------------------------


def _row(n: int, text: str, source: str = "text") -> EvidenceRow:
    return EvidenceRow(f"e{n}", source, text, "T", "T", [], {})


ROWS = [
    _row(1, "Aristotle: His father Nicomachus was a physician ."),
    _row(2, "Plato: Plato taught Aristotle ."),
]
CANDIDATE = AnswerChoice("Nicomachus", None, 0.4, False, [], ["e1"])


def _reader(replies: list, **settings) -> tuple[LlmReader, Scripted]:
    backend = Scripted(replies)
    candidates = CandidateReader(CandidateAnswerer(), lambda _entity_id: None)
    return LlmReader(Llm(backend), candidates, LlmReaderSettings(**settings)), backend


def test_an_unsupported_answer_is_retried_once_with_what_was_wrong() -> None:
    reader, backend = _reader(
        [
            {"answer": "Nicomaque", "evidence": [1], "unknown": False},
            {"answer": "Nicomachus", "evidence": [1], "unknown": False},
        ]
    )
    read = reader.read(ARISTOTLE, ROWS, CANDIDATE)
    assert read.choice.answer == "Nicomachus" and read.choice.supporting == ["e1"]
    assert (
        read.reading.outcome == "retried"
        and read.reading.calls == 2
        and read.reading.raw_answer == "Nicomachus"
    )
    assert 'No evidence row writes "Nicomaque"' in backend.sent[1][-1]["content"]
    assert read.choice.confidence == pytest.approx(0.9 * 2.718281828**-0.1, rel=1e-3)


def test_unsupported_twice_falls_back_to_the_candidate_reader_and_says_so() -> None:
    wrong = {"answer": "Socrates", "evidence": [2], "unknown": False}
    read = _reader([wrong, wrong])[0].read(ARISTOTLE, ROWS, CANDIDATE)
    assert read.reading.outcome == "candidates" and read.choice.answer == "Nicomachus"
    assert read.choice.confidence == pytest.approx(0.2)
    without = _reader([wrong, wrong], fallback_to_candidates=False)[0].read(ARISTOTLE, ROWS, CANDIDATE)
    assert without.reading.outcome == "unsupported" and without.choice.unknown
    assert without.choice.answer == UNKNOWN and not without.choice.supporting


def test_the_model_saying_unknown_is_unknown() -> None:
    read = _reader([{"answer": "", "evidence": [], "unknown": True}])[0].read(ARISTOTLE, ROWS, CANDIDATE)
    assert read.choice.unknown and read.reading.outcome == "unknown" and read.reading.calls == 1


def test_an_answer_under_the_threshold_is_unknown() -> None:
    reply = {"answer": "Nicomachus", "evidence": [1], "unknown": False}
    read = _reader([reply], min_confidence=0.95)[0].read(ARISTOTLE, ROWS, CANDIDATE)
    assert read.choice.unknown and read.reading.outcome == "below-threshold"


def test_a_backend_failure_keeps_the_candidate_answer_and_records_the_error() -> None:
    read = _reader([LlmError("POST http://x/v1/chat/completions returned HTTP 500")])[0].read(
        ARISTOTLE, ROWS, CANDIDATE
    )
    assert read.choice is CANDIDATE and read.reading.outcome == "error" and "HTTP 500" in read.reading.error


def test_answer_logprob_averages_the_answer_tokens_only() -> None:
    reader, _ = _reader([{"answer": "Nicomachus", "evidence": [1], "unknown": False}])
    reply = reader.llm.chat_reply([{"role": "user", "content": "q"}])
    text = reply.completion.text
    start = text.index("Nicomachus")
    reply.completion.logprobs = [
        (i, i + 1, -1.0 if start <= i < start + 10 else -9.0) for i in range(len(text))
    ]
    assert answer_logprob(reply) == pytest.approx(-1.0)


def test_an_engine_whose_model_cannot_load_answers_with_candidates_and_says_why(
    sample_index, tmp_path
) -> None:
    _, result = sample_index
    config = EngineConfig.load(
        None, reader="llm", llm={"backend": "gguf", "model_path": str(tmp_path / "x.gguf")}
    )
    with Engine.open(result.version_dir, config) as engine:
        answer = engine.ask(ARISTOTLE)
    assert answer.reader == "candidates" and exact_match(answer.answer, ["Nicomachus"]) == 1.0
    assert answer.reading is not None and answer.reading.outcome == "unavailable"
    assert "x.gguf does not exist" in (answer.reading.error or "")


@pytest.mark.parametrize("fault", LLM_FAULTS)
def test_an_engine_whose_llm_server_fails_answers_with_candidates_and_records_why(
    sample_index, fault: str
) -> None:
    """Issue 17: a real OpenAI-compatible server that refuses, hangs, errs or ignores the schema costs the
    question its LLM reading, never its answer: the candidate reader's answer stands, and the reading
    says the server failed, which server, and what to do."""
    _, result = sample_index
    with faulty_llm_server(fault) as url:
        llm = {"backend": "openai-compatible", "base_url": url, "timeout_s": FAULT_TIMEOUT_S}
        with Engine.open(result.version_dir, EngineConfig.load(None, reader="llm", llm=llm)) as engine:
            answer = engine.ask(ARISTOTLE)
            pipeline = engine.pipeline
            candidates = pipeline.read(_staged(engine, ARISTOTLE), pipeline.candidates).choice
    assert answer.mode == "retrieve-read" and answer.reader == "llm:openai-compatible"
    assert (answer.answer, answer.confidence) == (candidates.answer, candidates.confidence)
    assert exact_match(answer.answer, ["Nicomachus"]) == 1.0
    reading = answer.reading
    assert reading is not None and reading.outcome == "error" and reading.raw_answer is None
    assert url in (reading.error or "") and WHAT_TO_DO[fault] in (reading.error or ""), reading.error
    # what the failure cost is in the reading (before: 0 calls, 0 ms, 0 tokens whatever it took): a
    # broken reply costs its repair request too, a failed request is never retried, a hung server its timeout
    assert reading.calls == (2 if fault == "broken-json" else 1)
    assert reading.prompt_tokens == (2 * 42 if fault == "broken-json" else 0)  # the server's usage
    if fault == "timeout":
        assert reading.ms >= FAULT_TIMEOUT_S * 1000 * 0.9


def test_an_answer_that_repeats_the_question_is_retried() -> None:
    reader, backend = _reader(
        [
            {"answer": "Aristotle", "evidence": [1], "unknown": False},
            {"answer": "Nicomachus", "evidence": [1], "unknown": False},
        ]
    )
    read = reader.read(ARISTOTLE, ROWS, CANDIDATE)
    assert read.choice.answer == "Nicomachus" and read.reading.outcome == "retried"
    assert '"Aristotle" is part of the question' in backend.sent[1][-1]["content"]


# -- reading further down the ranking when the top rows give nothing ---------------------------------------

UNRELATED = [_row(n, f"Row {n}: nothing about anyone's father .") for n in range(1, 3)]
FURTHER = [*UNRELATED, _row(3, "Aristotle: His father Nicomachus was a physician .")]
UNKNOWN_REPLY = {"answer": "", "evidence": [], "unknown": True}


def test_an_unknown_from_the_top_rows_reads_the_next_rows_once_and_cites_them_by_their_place() -> None:
    reader, backend = _reader(
        [UNKNOWN_REPLY, {"answer": "Nicomachus", "evidence": [1], "unknown": False}],
        evidence=2,
        read_further=True,
    )
    read = reader.read(ARISTOTLE, FURTHER, CANDIDATE)
    assert read.choice.answer == "Nicomachus" and read.choice.supporting == ["e3"]
    r = read.reading
    assert r.outcome == "supported" and r.further_from == 3 and r.cited == [3]
    assert r.shown == 3 and r.calls == 2 and r.prompt_tokens == 20
    assert "[1] passage · Aristotle: His father Nicomachus" in backend.sent[1][-1]["content"]
    assert "Row 1" not in backend.sent[1][-1]["content"]


def test_nothing_in_the_next_rows_either_keeps_the_first_reading_and_its_cost_says_both() -> None:
    wrong = {"answer": "Socrates", "evidence": [1], "unknown": False}
    reader, backend = _reader([wrong, wrong, UNKNOWN_REPLY], evidence=2, read_further=True)
    read = reader.read(ARISTOTLE, FURTHER, CANDIDATE)
    assert read.reading.outcome == "candidates" and read.choice.answer == "Nicomachus"  # the first window's
    assert read.reading.further_from == 3 and read.reading.calls == 3 and not backend.replies


def test_no_further_read_when_off_when_answered_or_when_a_note_points_at_the_top_rows() -> None:
    off, backend = _reader([UNKNOWN_REPLY], evidence=2)
    assert off.read(ARISTOTLE, FURTHER, CANDIDATE).reading.further_from is None and len(backend.sent) == 1
    answered = _reader([{"answer": "Nicomachus", "evidence": [1], "unknown": False}], read_further=True)[0]
    assert answered.read(ARISTOTLE, ROWS, CANDIDATE).reading.further_from is None
    noted, backend = _reader([UNKNOWN_REPLY], evidence=2, read_further=True)
    assert noted.read(ARISTOTLE, FURTHER, CANDIDATE, note="row 1 was chosen").reading.further_from is None
    assert len(backend.sent) == 1


PLATO_FIRST = [
    _row(1, "Plato: Plato taught Aristotle ."),
    _row(2, "Aristotle: His father Nicomachus was a physician ."),
]


def _said(answer: str, row: int = 1) -> dict:
    return {"answer": answer, "evidence": [row], "unknown": False}


def test_an_unsure_answer_reads_on_and_the_more_confident_answer_wins() -> None:
    # first window: "Platon" is in no row, the retry's "Plato" is (confidence times 0.9); then "Nicomachus"
    reader, _ = _reader(
        [_said("Platon"), _said("Plato"), _said("Nicomachus")],
        evidence=1,
        read_further=True,
        further_below=0.85,
    )
    read = reader.read(ARISTOTLE, PLATO_FIRST, CANDIDATE)
    assert read.choice.answer == "Nicomachus" and read.choice.supporting == ["e2"]
    assert read.reading.further_from == 2 and read.reading.cited == [2] and read.reading.calls == 3
    # the other way round: the first answer is surer, so it stays, and the cost says both reads
    reader, _ = _reader(
        [_said("Plato"), _said("Nicomaque"), _said("Nicomachus")],
        evidence=1,
        read_further=True,
        further_below=0.95,
    )
    kept = reader.read(ARISTOTLE, PLATO_FIRST, CANDIDATE)
    assert kept.choice.answer == "Plato" and kept.reading.cited == [1] and kept.reading.calls == 3
    assert kept.reading.further_from == 2 and kept.choice.confidence > 0.85
    # a sure answer does not read on
    sure, backend = _reader([_said("Plato")], evidence=1, read_further=True, further_below=0.5)
    assert (
        sure.read(ARISTOTLE, PLATO_FIRST, CANDIDATE).reading.further_from is None and len(backend.sent) == 1
    )
