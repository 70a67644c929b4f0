"""The graph-critic's LLM validator: its score from the decision token, and the real bundled model judging
real rows of the sample index, alone and inside the mode's rounds."""

from __future__ import annotations

import math
import re

import pytest

from query import Engine, EngineConfig
from query.cli.ask import print_refinement
from query.llm.backends import Completion
from query.llm.chat import Llm, Reply
from query.modes.graph_critic import GraphCriticMode, GraphCriticSettings
from query.modes.graph_critic.llm_validator import Check, Judgement, LlmValidator, probability


def _reply(answerable: bool, sure: float | None) -> Reply:
    text = '{"answerable": ' + ("true" if answerable else "false") + "}"
    at = text.index("true" if answerable else "false")
    logprobs = (
        None if sure is None else [(0, at, -0.01), (at, at + 2, math.log(sure)), (at + 2, len(text), -0.2)]
    )
    return Reply(Judgement(answerable=answerable), Completion(text, 50, 6, 1.0, logprobs), [])


def test_the_score_is_the_decision_tokens_probability_turned_to_answerable() -> None:
    assert probability(_reply(True, 0.8)) == pytest.approx(0.8)
    assert probability(_reply(False, 0.9)) == pytest.approx(0.1)
    assert probability(_reply(True, None)) == 1.0 and probability(_reply(False, None)) == 0.0


def test_an_answer_checks_score_reads_the_correct_token() -> None:
    text = '{"correct": false}'
    at = text.index("false")
    reply = Reply(
        Check(correct=False), Completion(text, 50, 6, 1.0, [(0, at, -0.01), (at, at + 2, math.log(0.7))]), []
    )
    assert probability(reply) == pytest.approx(0.3)


@pytest.fixture(scope="module")
def engine(sample_index):
    _, built = sample_index
    with Engine.open(built.version_dir, EngineConfig(reader="candidates")) as engine:
        yield engine


def _rows(engine: Engine, query: str, holding: str | None):
    hits = engine.reader.bm25.search(query, 20)
    rows = engine.pipeline.store.get([h.evidence_id for h in hits])
    if holding is None:
        return rows[:3]
    return [row for row in rows if holding in row.text][:1]


def test_the_real_model_scores_rows_that_state_the_answer_above_rows_that_do_not(
    engine: Engine, small_llm: Llm
) -> None:
    validator = LlmValidator(small_llm, rows=3)
    question = "What was the name of Aristotle's father?"
    stating = _rows(engine, "Aristotle father Nicomachus", "Nicomachus")
    unrelated = _rows(engine, "Belgium area square kilometres", None)
    assert stating and unrelated and not any("Nicomachus" in row.text for row in unrelated)
    yes, no = validator.judge(question, stating), validator.judge(question, unrelated)
    assert yes.probability > no.probability
    assert yes.calls and yes.calls[0].purpose == "validate" and yes.ms > 0
    assert validator.judge(question, []).probability == 0.0  # nothing to read: rejected, no request


def test_the_real_model_checks_a_right_answer_above_a_wrong_one_on_the_same_rows(
    engine: Engine, small_llm: Llm
) -> None:
    checker = LlmValidator(small_llm, rows=3)
    question = "What was the name of Aristotle's father?"
    rows = _rows(engine, "Aristotle father Nicomachus", "Nicomachus")
    assert rows and "Nicomachus" in rows[0].text and "Proxenus" not in rows[0].text
    right = checker.check(question, "Nicomachus", rows)
    wrong = checker.check(question, "Proxenus of Atarneus", rows)  # a name the row does not give
    assert right.probability > wrong.probability
    assert right.calls and right.calls[0].purpose == "check"
    assert (
        checker.check(question, "", rows).probability == 0.0 and not checker.check(question, " ", rows).calls
    )


@pytest.mark.parametrize(
    ("validator", "said"),
    [("llm", "validator: P(the top rows state the answer)"), ("answer", "validator: P('")],
)
def test_the_mode_accepts_a_round_by_the_models_judgement_and_says_so(
    engine: Engine, small_llm: Llm, capsys: pytest.CaptureFixture[str], validator: str, said: str
) -> None:
    settings = GraphCriticSettings(
        validator=validator, accept_confidence=0.0, accept_probability=0.5, rounds=2
    )
    mode = GraphCriticMode(engine.pipeline, engine.reader.graph, settings, llm=small_llm)
    result = mode.run(engine.understand("What is the capital of Portugal?"))
    judged = [r for r in result.refinement if r.detail and r.detail.startswith(said)]
    assert judged, result.refinement
    for r in judged:
        score = float(re.search(r"= ([0-9.]+)", r.detail).group(1))
        assert r.accepted == (score >= 0.5)
    assert result.validated == any(r.accepted for r in result.refinement)
    print_refinement(result)  # the user sees each judged round's score, accepted or not
    printed = " ".join(capsys.readouterr().out.split())  # the console wraps long lines
    assert all(" ".join(r.detail.split()) in printed for r in judged), printed
