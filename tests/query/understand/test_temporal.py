"""Time constraints: full dates, years and cue words, with the tokens they use."""

from __future__ import annotations

import pytest

from query.understand import temporal
from query.understand.tokens import tokenize
from schemas.query import Intent


def texts(intent: Intent) -> list[str]:
    return [m.text for m in intent.mentions]


def test_time_cues_in_order(extractor):
    intent = extractor.run("Who was the first president of Algeria before 1990?")
    assert intent.time.cues == ["first", "before"]
    assert intent.time.years == [1990]
    assert texts(intent) == ["Algeria"]
    assert extractor.run("When was the most recent Segunda Liga player of the month born ?").time.cues == [
        "last"
    ]
    assert extractor.run("What was the latest album of Aristotle since 2001?").time.cues == ["last", "since"]


def test_first_name_is_no_time_cue(extractor):
    intent = extractor.run(
        "What was the first name of the protected area in the Philippines located in La Union ?"
    )
    assert intent.time.cues == []


@pytest.mark.parametrize(
    "question",
    [
        "What happened in Belgium on 1 January 2015?",
        "What happened in Belgium on January 1, 2015?",
        "What happened in Belgium on 2015-01-01?",
        "What happened in Belgium on January 1 , 2015 ?",
    ],
)
def test_full_dates_become_iso(extractor, question):
    intent = extractor.run(question)
    assert intent.time.dates == ["2015-01-01"]
    assert intent.time.years == [2015]
    assert texts(intent) == ["Belgium"]  # the month is no mention


def test_impossible_dates_are_dropped_but_keep_their_year(extractor):
    intent = extractor.run("What happened in Belgium on 31 February 2015?")
    assert intent.time.dates == [] and intent.time.years == [2015]


def test_years_in_names_counts_and_ranges(extractor):
    intent = extractor.run("Where is the 2018 Reno 1868 FC season transfer participant being sent ?")
    assert intent.time.years == [2018]  # 1868 belongs to the club's name
    intent = extractor.run("This Kishore Kumar song had a lyricist that penned over 1500 songs ?")
    assert intent.time.years == []
    intent = extractor.run("What position does 2009\u201310 season Canucks player Rob Davison hold ?")
    assert intent.time.years == [2009, 2010]
    intent = extractor.run("Which player retired in Sept 2017 ?")
    assert intent.time.years == [2017] and texts(intent) == []


def test_dates_report_the_spans_they_were_read_from():
    question = "Between 3 May 1990 and May 4, 1991, what happened?"
    found, spans = temporal.dates(question)
    assert found == ["1990-05-03", "1991-05-04"]
    assert [question[s:e] for s, e in spans] == ["3 May 1990", "May 4, 1991"]


def test_years_leave_the_date_spans_alone_and_mark_their_tokens():
    question = "What changed between 3 May 1990 and 1995?"
    tokens = tokenize(question)
    _, spans = temporal.dates(question)
    found, used = temporal.years(question, tokens, spans)
    assert found == [1995]
    assert [tokens[i].text for i in used] == ["1995"]
    assert {tokens[i].text for i in temporal.time_tokens(question, tokens, spans)} == {"3", "May", "1990"}


def test_cues_inside_a_mention_do_not_count():
    tokens = tokenize("Who won The Last Samurai award before 2000?")
    last = next(i for i, t in enumerate(tokens) if t.text == "Last")
    cues, used = temporal.cues(tokens, {last})
    assert cues == ["before"] and last not in used


@pytest.mark.parametrize(
    ("question", "years"),
    [
        ("How many lived in Chile in nineteen eighty-two?", [1982]),
        ("How many lived in Chile in nineteen eighty two?", [1982]),
        ("Belgium's population in the year two thousand", [2000]),
        ("What was it in two thousand and twelve?", [2012]),
        ("Chile's census of twenty ten", [2010]),
        ("Was it founded in eighteen hundred?", [1800]),
        ("Two thousand people live there", []),  # an amount, not a year
        ("Chile is split into nineteen regions", []),  # a count
        ("It has twenty-five districts", []),
        ("Brazil's HDI back in oh-six?", [2006]),  # a year by its last two digits, after "in"
        ("Chile's population in '95", [1995]),
        ("GDP of Belgium in \u201912?", [2012]),
        ("Rock 'n' roll in Chile", []),  # an apostrophe with no two digits after a lead word
        ("He scored 12 in 95 games", []),  # digits without the apostrophe: a number
    ],
)
def test_years_said_in_words_are_years(extractor, question, years):
    intent = extractor.run(question)
    assert intent.time.years == years
    if years:  # the words of the year are a time, not the relation
        assert "nineteen" not in (intent.relation or "") and "thousand" not in (intent.relation or "")
