"""Benchmark loaders, answer and retrieval metrics, and the report writer."""

from __future__ import annotations

import json
from datetime import datetime
from pathlib import Path

import pytest

from query.evaluation import (
    AP_KS,
    HIT_KS,
    LOADERS,
    AnswerSpec,
    BenchmarkQuestion,
    ConfigSummary,
    KgqaLoader,
    OttqaLoader,
    QuestionEval,
    ReportMeta,
    ap_curve,
    evaluate_question,
    exact_match,
    first_presence_rank,
    gold_table_rank,
    load_benchmark,
    normalize_answer,
    read_report,
    summarize,
    token_f1,
    write_report,
)
from query.evaluation.metrics import calibrate_threshold, percentile

REPO = Path(__file__).resolve().parents[3]
OTTQA_DEV = REPO.parent / "shared" / "data" / "bench" / "ottqa" / "dev.json"
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


# --- normalization, EM, F1 -------------------------------------------------------------------------


@pytest.mark.parametrize(
    ("raw", "normalized"),
    [
        ("The Beatles", "beatles"),
        ("  A   tale of  two cities. ", "tale of two cities"),
        ("U.S.", "us"),
        ("Aristotle 's Poetics", "aristotle s poetics"),
        ("an Apple, the pear", "apple pear"),
        ("theatre", "theatre"),  # an article inside a word stays
        ("", ""),
    ],
)
def test_normalize_answer(raw: str, normalized: str) -> None:
    assert normalize_answer(raw) == normalized


def test_exact_match_classic_cases() -> None:
    assert exact_match("the Beatles", ["Beatles"]) == 1.0
    assert exact_match("Lynda La Plante.", "lynda la plante") == 1.0
    assert exact_match("Paris", ["London", "paris"]) == 1.0
    assert exact_match("Paris, France", ["Paris"]) == 0.0
    assert exact_match("Paris", []) == 0.0


def test_token_f1_classic_cases() -> None:
    assert token_f1("Paris", ["Paris"]) == 1.0
    # pred {new, york, city} vs gold {new, york}: P = 2/3, R = 1 -> F1 = 0.8
    assert token_f1("New York City", ["New York"]) == pytest.approx(0.8)
    # max over golds: 0.8 against "New York", 1.0 against "New York City"
    assert token_f1("New York City", ["New York", "new york city"]) == 1.0
    assert token_f1("Berlin", ["Paris"]) == 0.0
    # repeated tokens count once per occurrence: pred {a1, a1} vs gold {a1}: P = 1/2, R = 1 -> 2/3
    assert token_f1("x x", ["x"]) == pytest.approx(2 / 3)
    # an answer that normalizes to nothing matches only an empty prediction
    assert token_f1("the", ["a"]) == 1.0
    assert token_f1("Paris", ["the"]) == 0.0
    assert token_f1("Paris", []) == 0.0


# --- presence and gold-table rank ------------------------------------------------------------------


def test_presence_rank_respects_token_boundaries() -> None:
    texts = ["founded in 19950 by", "a year: 1995 .", "1995"]
    assert first_presence_rank(texts, ["1995"]) == 2
    assert first_presence_rank(["19950", "11995", "1995x"], ["1995"]) is None


def test_presence_rank_articles_case_and_punctuation() -> None:
    assert first_presence_rank(["nothing here", "Songs by Beatles, 1963"], ["the Beatles"]) == 2
    assert first_presence_rank(["THE BEATLES!"], ["beatles"]) == 1
    # evidence tokenized as released by OTT-QA still holds plainly written answers
    assert first_presence_rank(["attendance of 15 , 728 people"], ["15,728"]) == 1
    assert first_presence_rank(["Aristotle's Poetics"], ["Aristotle 's Poetics"]) == 1
    assert first_presence_rank(["born in the U.S."], ["US"]) == 1
    # a multi-token answer must appear as a contiguous sequence
    assert first_presence_rank(["La Plante, Lynda"], ["Lynda La Plante"]) is None


def test_presence_rank_on_non_ascii_punctuation() -> None:
    # the ASCII fast path and the per-character path must treat punctuation alike
    assert first_presence_rank(["Zürich \u2013 1,000 “people”"], ["1,000 people"]) == 1
    assert first_presence_rank(["Zürich \u2013 1,000 “people”"], ["Zürich"]) == 1
    assert first_presence_rank(["Zurich\u20141000"], ["1000"]) == 1
    assert normalize_answer("Zürich, “the” City!") == "zürich “ ” city"


def test_presence_rank_edge_cases() -> None:
    assert first_presence_rank([], ["x"]) is None
    assert first_presence_rank(["the a an"], ["the"]) is None  # answers that normalize to nothing are ignored
    assert first_presence_rank(["alpha", "beta"], ["gamma", "beta"]) == 2


def test_gold_table_rank_counts_distinct_tables() -> None:
    tables = [None, "T1", "T1", None, "T2", "T1", "T3"]
    assert gold_table_rank(tables, "T1") == 1
    assert gold_table_rank(tables, "T2") == 2
    assert gold_table_rank(tables, "T3") == 3
    assert gold_table_rank(tables, "T9") is None
    assert gold_table_rank(tables, None) is None


def test_evaluate_question_scores_one_result() -> None:
    question = BenchmarkQuestion(
        id="q", question="Who?", answers=[AnswerSpec(text="Lynda La Plante")], gold_table_id="T2"
    )
    result = evaluate_question(
        question,
        "base",
        evidence_texts=["no", "created by Lynda La Plante in 1991"],
        evidence_table_ids=["T1", "T1", "T2"],
        prediction="lynda la plante",
        answered=True,
        timings_ms={"retrieve": 5.0},
    )
    assert (result.presence_rank, result.pool_size, result.gold_table_rank) == (2, 2, 2)
    assert (result.em, result.f1, result.has_gold_table) == (1.0, 1.0, True)
    refrained = evaluate_question(
        question, "base", evidence_texts=[], prediction="Lynda La Plante", answered=False
    )
    assert (refrained.em, refrained.f1, refrained.presence_rank) == (0.0, 0.0, None)


# --- summarize -------------------------------------------------------------------------------------


def _eval(qid: str, **fields) -> QuestionEval:
    return QuestionEval(question_id=qid, config="c", **fields)


def _hand_made_evals() -> list[QuestionEval]:
    return [
        # q1: answer at rank 1, gold table 1st, answered right
        _eval("q1", presence_rank=1, pool_size=50, gold_table_rank=1, prediction="a", answered=True, em=1.0,
              f1=1.0, timings_ms={"retrieve": 10.0, "read": 30.0, "total": 40.0}),
        # q2: answer at rank 7, gold table 4th, answered wrongly (half F1)
        _eval("q2", presence_rank=7, pool_size=50, gold_table_rank=4, prediction="b", answered=True, em=0.0,
              f1=0.5, timings_ms={"retrieve": 20.0, "read": 40.0, "total": 60.0}),
        # q3: answer at rank 250, gold table absent, said unknown
        _eval("q3", presence_rank=250, pool_size=500, prediction="unknown", answered=False,
              timings_ms={"retrieve": 30.0, "read": 50.0, "total": 80.0}),
        # q4: answer absent, gold table 20th, said unknown
        _eval("q4", pool_size=1000, gold_table_rank=20, prediction="unknown", answered=False,
              timings_ms={"retrieve": 40.0, "read": 60.0, "total": 100.0}),
        # q5: failed; its (impossible) figures must be ignored: a miss everywhere
        _eval("q5", presence_rank=1, gold_table_rank=1, answered=True, em=1.0, f1=1.0, error="boom",
              timings_ms={"retrieve": 9999.0, "total": 9999.0}),
    ]  # fmt: skip


def test_summarize_hand_computed() -> None:
    summary = summarize("c", "hand-made", _hand_made_evals(), settings={"k": 100})
    assert (summary.questions, summary.errors, summary.answered) == (5, 1, 2)
    # presence ranks of the 5: 1, 7, 250, None, (error)
    assert summary.ap == pytest.approx({1: 0.2, 5: 0.2, 10: 0.4, 30: 0.4, 100: 0.4, 1000: 0.6})
    assert set(summary.ap) == set(AP_KS)
    # gold table ranks: 1, 4, None, 20, (error)
    assert summary.hit == pytest.approx({1: 0.2, 5: 0.4, 10: 0.4, 30: 0.6, 100: 0.6})
    assert set(summary.hit) == set(HIT_KS)
    assert summary.mrr == pytest.approx((1 + 1 / 4 + 0 + 1 / 20 + 0) / 5)
    assert summary.gold_table_questions == 5
    assert summary.em == pytest.approx(1 / 5)
    assert summary.f1 == pytest.approx(1.5 / 5)
    assert summary.refrain_rate == pytest.approx(3 / 5)  # two "unknown", one error
    assert summary.precision_answered == pytest.approx(1 / 2)
    assert summary.mean_pool_size == pytest.approx((50 + 50 + 500 + 1000) / 4)
    # latency over the 4 questions without error; p50 of 40, 60, 80, 100 = 70, p95 = 80 + 0.85 * 20
    assert list(summary.latency_ms) == ["retrieve", "read", "total"]
    assert summary.latency_ms["total"] == pytest.approx({"p50": 70.0, "p95": 97.0, "mean": 70.0})
    assert summary.latency_ms["retrieve"]["p50"] == pytest.approx(25.0)
    assert summary.settings == {"k": 100}


def test_summarize_without_gold_tables_or_answers() -> None:
    evals = [
        _eval("a", presence_rank=3, has_gold_table=False, answered=False),
        _eval("b", has_gold_table=False, answered=False, timings_ms={"x": 2.0, "y": 3.0}),
    ]
    summary = summarize("c", "kgqa", evals)
    assert summary.gold_table_questions == 0
    assert summary.mrr == 0.0 and summary.hit[1] == 0.0
    assert summary.precision_answered == 0.0 and summary.refrain_rate == 1.0
    assert summary.latency_ms["total"]["mean"] == 5.0  # no "total" stage given: the sum of the stages


def test_summarize_rejects_other_configs_and_handles_empty() -> None:
    with pytest.raises(ValueError, match="other configs: d"):
        summarize("c", "", [_eval("a"), QuestionEval(question_id="b", config="d")])
    empty = summarize("c", "nothing", [])
    assert empty.questions == 0 and empty.ap[1] == 0.0 and empty.latency_ms == {}


def test_ap_curve_and_percentile() -> None:
    evals = _hand_made_evals()
    assert ap_curve(evals, [1, 7, 6, 300]) == pytest.approx({1: 0.2, 7: 0.4, 6: 0.2, 300: 0.6})
    assert percentile([5.0], 95) == 5.0
    assert percentile([1.0, 2.0, 3.0, 4.0], 50) == 2.5
    with pytest.raises(ValueError):
        percentile([], 50)


def test_threshold_sweep_hand_computed() -> None:
    # best-candidate confidence and whether that candidate is right; the last one was not read
    evals = [
        _eval("a", confidence=0.6, candidate_em=1.0),
        _eval("b", confidence=0.3, candidate_em=1.0),
        _eval("c", confidence=0.25, candidate_em=0.0),
        _eval("d", confidence=0.1, candidate_em=0.0),
        _eval("e", confidence=0.01, candidate_em=0.0),
        _eval("f"),
    ]
    calibration = calibrate_threshold(evals, grid=(0.0, 0.2, 0.3, 0.5, 0.9))
    points = {p.threshold: p for p in calibration.points}
    assert points[0.0].answered == 1.0 and points[0.0].precision == pytest.approx(2 / 5)
    assert points[0.2].answered == pytest.approx(3 / 5) and points[0.2].em == pytest.approx(2 / 5)
    # at 0.3 both right answers are kept and every wrong one refused: F1 1.0, the recommendation
    assert points[0.3].precision == 1.0 and points[0.3].f1 == 1.0 and calibration.chosen == 0.3
    assert points[0.5].f1 == pytest.approx(2 * 1.0 * 0.5 / 1.5)
    assert points[0.9].answered == 0.0 and points[0.9].f1 == 0.0
    # summaries carry the sweep only when the configuration was read
    assert summarize("c", "read", evals).threshold is not None
    assert summarize("c", "not read", [_eval("x")]).threshold is None


def test_question_eval_failed() -> None:
    failed = QuestionEval.failed("q", "c", "timeout", {"total": 3.0})
    assert failed.error == "timeout" and not failed.answered and failed.presence_rank is None


# --- OTT-QA loader ---------------------------------------------------------------------------------


def test_ottqa_loader_on_real_dev_set() -> None:
    if not OTTQA_DEV.is_file():
        pytest.skip(f"OTT-QA dev set not found at {OTTQA_DEV} (the shared benchmark data is not mounted)")
    raw = json.loads(OTTQA_DEV.read_text())[:5]
    questions = load_benchmark("ottqa", OTTQA_DEV, limit=5)
    assert [q.id for q in questions] == [r["question_id"] for r in raw]
    for q, r in zip(questions, raw, strict=True):
        assert q.question == r["question"]
        assert q.gold_table_id == r["table_id"]
        assert [a.text for a in q.answers] == [r["answer-text"]]
        assert "question_postag" not in q.meta
    # the folder holding dev.json works too, and without a limit everything is read
    assert len(OttqaLoader().load(OTTQA_DEV.parent)) == len(json.loads(OTTQA_DEV.read_text()))


def test_ottqa_loader_on_fixture_copy(tmp_path: Path) -> None:
    items = [
        {"question_id": "a1", "question": "Who created it ?", "table_id": "T_1",
         "answer-text": "Lynda La Plante", "question_postag": "WP VBD PRP ."},
        {"question_id": "a2", "question": "When ?", "table_id": "T_2", "answer-text": "1995",
         "where": "table"},
        {"question_id": "a3", "question": "Where ?", "table_id": "T_3", "answer-text": "Oslo"},
    ]  # fmt: skip
    (tmp_path / "dev.json").write_text(json.dumps(items))
    questions = OttqaLoader().load(tmp_path, limit=2)
    assert [q.id for q in questions] == ["a1", "a2"]
    assert questions[1].answers[0].text == "1995" and questions[1].meta == {"where": "table"}
    assert questions[0].answer_texts() == ["Lynda La Plante"]
    assert OttqaLoader().load(tmp_path / "dev.json", limit=0) == []


def test_ottqa_loader_errors(tmp_path: Path) -> None:
    bad = tmp_path / "dev.json"
    bad.write_text(
        json.dumps([{"question_id": "a", "question": "Q?", "answer-text": "x"}, {"question_id": "b"}])
    )
    with pytest.raises(ValueError, match=r"dev\.json, item 1: no question"):
        OttqaLoader().load(bad)
    bad.write_text(json.dumps([{"question_id": "a", "question": "Q?", "answer-text": ""}]))
    with pytest.raises(ValueError, match=r"item 0: no answer"):
        OttqaLoader().load(bad)
    bad.write_text(json.dumps([{"question_id": "a", "question": "Q?", "answer-text": "x"}] * 2))
    with pytest.raises(ValueError, match="appears twice"):
        OttqaLoader().load(bad)
    bad.write_text("[{")
    with pytest.raises(ValueError, match="not valid JSON"):
        OttqaLoader().load(bad)
    empty = tmp_path / "empty"
    empty.mkdir()
    with pytest.raises(FileNotFoundError, match=r"without dev\.json"):
        OttqaLoader().load(empty)
    with pytest.raises(ValueError, match="limit"):
        OttqaLoader().load(bad, limit=-1)


# --- KGQA loader -----------------------------------------------------------------------------------

COMPMIX_STYLE = [
    {
        "question_id": "cm-1",
        "question": "who played jon snow in game of thrones?",
        "entities": [{"id": "Q23572", "label": "Game of Thrones"}],
        "answers": [{"id": "Q1382711", "label": "Kit Harington"}],
        "domain": "tvseries",
        "answer_src": "kb",
    },
    {
        "question_id": "cm-2",
        "question": "When was the series first aired?",
        "entities": ["Q23572"],
        "answers": [{"id": "2011-04-17T00:00:00Z", "label": "17 April 2011"}],
        "domain": "tvseries",
    },
    {"question_id": "cm-3", "question": "How many seasons?", "entities": [], "answers": ["8"]},
]

TIMEQUESTIONS_STYLE = [
    {
        "Id": 17,
        "Question": "Who was the US president when the Berlin wall fell?",
        "Temporal question type": ["Implicit"],
        "Answer": [
            {"AnswerType": "Entity", "AnswerArgument": "Q23505", "EntityLabel": "George H. W. Bush",
             "WikidataQid": "Q23505"}
        ],
    },
    {
        "Id": 18,
        "Question": "When did Apollo 11 land?",
        "Answer": [{"AnswerType": "Value", "AnswerArgument": "1969-07-20T00:00:00Z"}],
    },
]  # fmt: skip


def test_kgqa_loader_compmix_style(tmp_path: Path) -> None:
    path = tmp_path / "dev_set.json"
    path.write_text(json.dumps(COMPMIX_STYLE))
    questions = KgqaLoader().load(path)
    first, second, third = questions
    assert first.id == "cm-1" and first.entities == ["Q23572"]
    assert first.answers[0].text == "Kit Harington" and first.answers[0].entity_id == "Q1382711"
    assert first.meta == {"domain": "tvseries", "answer_src": "kb"}
    assert first.gold_table_id is None
    assert second.entities == ["Q23572"]
    assert second.answers[0].entity_id is None
    assert second.answer_texts() == ["17 April 2011", "2011-04-17T00:00:00Z", "2011-04-17"]
    assert third.answers[0].text == "8"
    # the same items as JSONL, and through the registry
    jsonl = tmp_path / "dev_set.jsonl"
    jsonl.write_text("\n".join(json.dumps(item) for item in COMPMIX_STYLE) + "\n\n")
    assert load_benchmark("kgqa", jsonl) == questions
    assert len(load_benchmark("kgqa", jsonl, limit=1)) == 1


def test_kgqa_loader_timequestions_style(tmp_path: Path) -> None:
    path = tmp_path / "test.json"
    path.write_text(json.dumps(TIMEQUESTIONS_STYLE))
    bush, apollo = KgqaLoader().load(tmp_path)  # the folder's only question file
    assert bush.id == "17" and bush.question.startswith("Who was the US president")
    assert bush.answers[0].text == "George H. W. Bush" and bush.answers[0].entity_id == "Q23505"
    assert bush.answers[0].aliases == []
    assert bush.meta == {"Temporal question type": "Implicit"}
    assert apollo.answers[0].text == "1969-07-20T00:00:00Z"
    assert apollo.answers[0].aliases == ["1969-07-20"]
    assert first_presence_rank(["Apollo 11 landed on 1969-07-20 ."], apollo.answer_texts()) == 1


def test_kgqa_loader_errors(tmp_path: Path) -> None:
    path = tmp_path / "q.json"
    path.write_text(json.dumps([COMPMIX_STYLE[0], {"question_id": "x", "answers": ["a"]}]))
    with pytest.raises(ValueError, match=r"q\.json, item 1: no question"):
        KgqaLoader().load(path)
    path.write_text(json.dumps([{"Id": 1, "Question": "Q?", "Answer": []}]))
    with pytest.raises(ValueError, match=r"item 0: no answers"):
        KgqaLoader().load(path)
    path.write_text(json.dumps([{"id": 1, "question": "Q?", "answers": [{"label": "", "id": ""}]}]))
    with pytest.raises(ValueError, match=r"item 0: no answers"):
        KgqaLoader().load(path)
    jsonl = tmp_path / "q.jsonl"
    jsonl.write_text(json.dumps(COMPMIX_STYLE[0]) + "\n\n{not json\n")
    with pytest.raises(ValueError, match=r"q\.jsonl, line 3: malformed JSON"):
        KgqaLoader().load(jsonl)
    assert len(KgqaLoader().load(jsonl, limit=1)) == 1  # the bad line lies beyond the limit
    jsonl.write_text(json.dumps(COMPMIX_STYLE[0]) + "\n" + json.dumps({"question": "Q?"}) + "\n")
    with pytest.raises(ValueError, match=r"line 2: no answers"):
        KgqaLoader().load(jsonl)
    with pytest.raises(ValueError, match="pass the question file"):
        KgqaLoader().load(tmp_path)  # two question files: ambiguous
    with pytest.raises(FileNotFoundError):
        KgqaLoader().load(tmp_path / "missing.json")
    with pytest.raises(ValueError, match="unknown benchmark format 'squad'; known: kgqa, ottqa"):
        load_benchmark("squad", path)
    assert set(LOADERS) == {"ottqa", "kgqa"}


# --- report ----------------------------------------------------------------------------------------


def _meta() -> ReportMeta:
    return ReportMeta(
        title="OTT-QA dev, first 5",
        command="hqa eval --benchmark ottqa --limit 5",
        benchmark="ottqa",
        questions_path="/data/ottqa/dev.json",
        index_version="v1",
        limit=5,
        machine={"cores": 2, "memory_gib": 8.0, "cpu": "test", "python": "3.11"},
        started=datetime(2025, 1, 2, 3, 4, 5),
        seconds=12.5,
        notes=["hand-made figures"],
    )


def _summaries() -> list[ConfigSummary]:
    evals = _hand_made_evals()
    base = summarize("bm25", "BM25 only", [e.model_copy(update={"config": "bm25"}) for e in evals])
    better = [e.model_copy(update={"config": "hybrid", "presence_rank": 2 if e.presence_rank is None else 1,
                                   "confidence": 0.5, "candidate_em": e.em})
              for e in evals]  # fmt: skip
    untimed = [e.model_copy(update={"config": "no-timings", "timings_ms": {}}) for e in evals]
    return [
        base,
        summarize("hybrid", "BM25 + dense | fused", better, settings={"k": 100}),
        summarize("no-timings", "timings off", untimed),
    ]


def test_write_report_writes_all_files(tmp_path: Path) -> None:
    summaries = _summaries()
    paths = write_report(tmp_path / "out", summaries, _meta())
    assert [p.name for p in paths.files] == ["report.json", "report.md", "ap_at_k.png", "latency.png"]
    for png in (paths.ap_plot, paths.latency_plot):
        assert png is not None and png.read_bytes()[:8] == PNG_SIGNATURE
    assert sorted(p.name for p in (tmp_path / "out").iterdir()) == sorted(p.name for p in paths.files)

    report = read_report(paths.json_path)
    assert report.meta == _meta()
    assert [s.config for s in report.summaries] == ["bm25", "hybrid", "no-timings"]
    assert report.summaries[0].ap == summaries[0].ap  # int keys survive the JSON round trip

    md = paths.markdown.read_text()
    assert md.startswith("# OTT-QA dev, first 5\n")
    assert "```\nhqa eval --benchmark ottqa --limit 5\n```" in md
    assert "cores 2" in md
    main_rows = [line for line in md.splitlines() if line.startswith("| ")]
    assert main_rows[0].startswith(
        "| Config | Questions | Errors | AP@1 | AP@5 | AP@10 | AP@30 | AP@100 | AP@1000"
    )
    assert main_rows[1].startswith("| bm25 (baseline) | 5 | 1 | 20.0 | 20.0 | 40.0 | 40.0 | 40.0 | 60.0 |")
    assert main_rows[2].startswith("| hybrid | 5 | 1 | 60.0 |")
    assert '- **hybrid**: BM25 + dense | fused — `{"k": 100}`' in md
    # vs baseline: hybrid has AP@30 = AP@100 = 80 (4 of 5, the error misses) against 40
    assert "| hybrid | 80.0 | +40.0 | 80.0 | +40.0 |" in md
    assert "| bm25 | total | 70.0 | 97.0 | 70.0 |" in md
    assert "![ap_at_k](ap_at_k.png)" in md and "- hand-made figures" in md
    # only the read configuration has a threshold sweep: 4 questions without error, 1 right, all at 0.5
    assert "## Answer threshold" in md and "| bm25 | 0.00 |" not in md
    assert "| hybrid | **0.00** | 100.0 | 25.0 | 25.0 | 0.400 |" in md
    assert "| hybrid | 0.50 | 100.0 | 25.0 | 25.0 | 0.400 |" in md


def test_write_report_only_baseline_without_timings(tmp_path: Path) -> None:
    only = QuestionEval(question_id="a", config="base", presence_rank=1, has_gold_table=False)
    summary = summarize("base", "no timings", [only])
    paths = write_report(tmp_path, [summary], _meta())
    assert paths.latency_plot is None and not (tmp_path / "latency.png").exists()
    assert paths.ap_plot.read_bytes()[:8] == PNG_SIGNATURE
    md = paths.markdown.read_text()
    assert "Only the baseline was run." in md and "No configuration recorded timings." in md
    assert "| base (baseline) | 1 | 0 | 100.0 |" in md
    assert "| n/a | n/a | n/a |" in md  # Hit@1, Hit@10, MRR without gold tables
    assert not list(tmp_path.glob(".*.tmp"))


def test_write_report_rejects_bad_input(tmp_path: Path) -> None:
    with pytest.raises(ValueError, match="at least one"):
        write_report(tmp_path, [], _meta())
    base = _summaries()[0]
    with pytest.raises(ValueError, match="repeated: bm25"):
        write_report(tmp_path, [base, base], _meta())
