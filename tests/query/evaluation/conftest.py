"""Hand-made question evaluations the metric and report tests share, with figures computed by hand."""

from __future__ import annotations

from query.evaluation import QuestionEval


def question_eval(qid: str, **fields) -> QuestionEval:
    return QuestionEval(question_id=qid, config="c", **fields)


def hand_made_evals() -> list[QuestionEval]:
    ev = question_eval
    return [
        # q1: answer at rank 1, gold table 1st, answered right
        ev("q1", presence_rank=1, pool_size=50, gold_table_rank=1, prediction="a", answered=True, em=1.0,
           f1=1.0, timings_ms={"retrieve": 10.0, "read": 30.0, "total": 40.0}),
        # q2: answer at rank 7, gold table 4th, answered wrongly (half F1)
        ev("q2", presence_rank=7, pool_size=50, gold_table_rank=4, prediction="b", answered=True, em=0.0,
           f1=0.5, timings_ms={"retrieve": 20.0, "read": 40.0, "total": 60.0}),
        # q3: answer at rank 250, gold table absent, said unknown
        ev("q3", presence_rank=250, pool_size=500, prediction="unknown", answered=False,
           timings_ms={"retrieve": 30.0, "read": 50.0, "total": 80.0}),
        # q4: answer absent, gold table 20th, said unknown
        ev("q4", pool_size=1000, gold_table_rank=20, prediction="unknown", answered=False,
           timings_ms={"retrieve": 40.0, "read": 60.0, "total": 100.0}),
        # q5: failed; its (impossible) figures must be ignored: a miss everywhere
        ev("q5", presence_rank=1, gold_table_rank=1, answered=True, em=1.0, f1=1.0, error="boom",
           timings_ms={"retrieve": 9999.0, "total": 9999.0}),
    ]  # fmt: skip
