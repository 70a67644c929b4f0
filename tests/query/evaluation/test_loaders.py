"""Benchmark loaders: OTT-QA and KGQA question files read, and broken ones refused with their position."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from query.evaluation import (
    LOADERS,
    KgqaLoader,
    OttqaLoader,
    first_presence_rank,
    load_benchmark,
)

REPO = Path(__file__).resolve().parents[3]
OTTQA_DEV = REPO.parent / "shared" / "data" / "bench" / "ottqa" / "dev.json"


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
