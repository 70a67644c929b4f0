"""Question text is data (issue 17): whatever a question holds — Tantivy, Cypher or SQL syntax, 10 kB of
text, control characters, other scripts, rich markup — it is answered or refused cleanly, it never
changes the shape of a query the engine runs, and the index is the same afterwards.

"Shape" is checked on the queries that actually ran, captured where they leave our code: every Cypher
statement at ``GraphStore.execute`` (the one door to Kùzu), every parsed Tantivy query at the BM25
index's parser and every alias query at the alias index's searcher, every SQL statement at
``query.sql.guard.check_select`` (which every SELECT passes before it runs). The engine reads with the
candidate reader on the real sample index: these tests are about the query paths, not the LLM.
"""

from __future__ import annotations

import hashlib
import json
import re
from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import pyarrow.parquet as pq
import pytest
import tantivy

import query.sql.guard as guard
from index.bm25 import Bm25Index, en_stem_analyzer
from index.graph import GraphIndex
from query import Engine, EngineConfig
from query.read.candidates import UNKNOWN
from schemas.query import QueryResult

FAST = EngineConfig(reader="candidates")

NORMAL = "What was the population of Belgium in 2014?"
"""A question the sample answers (a KG fact); its answer must not change after the hostile ones."""

TANTIVY_SYNTAX = [
    'title:foo AND bar^3 "unclosed',
    "*",
    "field:[a TO b]",
    "-",
    "+",
    "~2",
    "\\",
    'What was the population of Belgium in 2014? title:Belgium^10 AND NOT "population',
    "What is population_of_Belgium in snake_case?",  # an underscore: one word to us, two to Tantivy
]
CYPHER_SYNTAX = [
    "' }) MATCH (n) DETACH DELETE n //",
    "What was the population of Belgium in 2014? ' }) MATCH (n) DETACH DELETE n //",
    "$param",
    "Who is `Entity`}) RETURN 1 //?",
    "RETURN 1",
]
SQL_SYNTAX = [
    "'; DROP TABLE question_table; --",
    '" OR 1=1',
    "UNION SELECT * FROM question_table",
    "Which city has the most inhabitants? '; DROP TABLE question_table; --",
]
HOSTILE_10KB = (NORMAL + " ' }) MATCH (n) DETACH DELETE n // '; DROP TABLE question_table; -- x:y^3 ") * 80
OTHER_TEXT = {
    "10 kB of mixed syntax": HOSTILE_10KB[:10_240],
    "10 kB one word": "A" * 10_240,
    "NUL": "What was the population\x00 of Belgium in 2014?",
    "escape sequence": "\x1b[2J\x1b[31mWhat was the population of Belgium in 2014?\x1b[0m",
    "carriage return": "What was the population of Belgium\r in 2014?",
    "line separator": "What was the population\u2028of Belgium in 2014?",
    "Arabic": "ما هو عدد سكان بلجيكا في عام 2014؟",
    "CJK": "2014年比利时的人口是多少\uff1f",  # a full-width question mark
    "Devanagari": "2014 में बेल्जियम की जनसंख्या क्या थी?",
    "emoji": "🇧🇪 What was the population of Belgium in 2014? 😀👍🏽",
    "RTL marks": "\u200fWhat was the \u202epopulation\u202c of Belgium in 2014?\u200e",
    "rich markup": "[red]What was the population of Belgium in 2014?[/red] [/] [link=x]",
}
HOSTILE = [*TANTIVY_SYNTAX, *CYPHER_SYNTAX, *SQL_SYNTAX, *OTHER_TEXT.values()]
NAMES = [q[:40] for q in [*TANTIVY_SYNTAX, *CYPHER_SYNTAX, *SQL_SYNTAX]] + list(OTHER_TEXT)

WALK_QUESTION = "Who was the interior decorator of the film Sunrise in 1927/28?"
WALK_HOSTILE = WALK_QUESTION + " ' }) MATCH (n) DETACH DELETE n // $param `Entity` RETURN 1"
"""A retrieve-read question that walks the graph from its entities, and the same with Cypher after it."""

LIST_QUESTION = "Which of Bonn, Parma and Siena has the largest area?"
LIST_HOSTILE = [
    "Which of Bonn, Parma and Siena' -- has the largest area?",
    "Which of `Bonn`, Parma and Siena; has the largest area?",
    "Which of 'Bonn', \"Parma\" and Siena has the largest area?",
]
"""The same explicit-list question with SQL and Cypher punctuation the set reading still accepts."""
COUNT_QUESTION = "How many of the German cities have more than {} inhabitants?"
BENIGN = [
    NORMAL,
    WALK_QUESTION,
    LIST_QUESTION,
    COUNT_QUESTION.format("100,000"),
    COUNT_QUESTION.format("250,000"),
]


# -- what ran ----------------------------------------------------------------------------------------


@dataclass
class Ran:
    """Everything one question made the engine run, and what came back (or what was raised)."""

    result: QueryResult | None = None
    error: Exception | None = None
    cypher: list[tuple[str, dict[str, Any]]] = field(default_factory=list)
    parsed: list[tuple[str, str]] = field(default_factory=list)  # (text given to Tantivy's parser, query)
    alias_queries: list[str] = field(default_factory=list)
    alias_parsed: list[str] = field(default_factory=list)
    sql: list[str] = field(default_factory=list)


class _ParserSpy:
    """A Tantivy index that records what its query parser is given and what it makes of it."""

    def __init__(self, index: tantivy.Index, parsed: list):
        self._index, self._parsed = index, parsed

    def parse_query(self, text: str, fields: list[str]) -> tantivy.Query:
        query = self._index.parse_query(text, fields)
        self._parsed.append((text, repr(query)))
        return query

    def __getattr__(self, name: str) -> Any:
        return getattr(self._index, name)


class _SearcherSpy:
    """A Tantivy searcher that records every query it runs."""

    def __init__(self, searcher: Any, queries: list[str]):
        self._searcher, self._queries = searcher, queries

    def search(self, query: tantivy.Query, *args: Any, **kwargs: Any) -> Any:
        self._queries.append(repr(query))
        return self._searcher.search(query, *args, **kwargs)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._searcher, name)


class _AliasSpy(_ParserSpy):
    def __init__(self, index: tantivy.Index, parsed: list, queries: list[str]):
        super().__init__(index, parsed)
        self._queries = queries

    def searcher(self) -> _SearcherSpy:
        return _SearcherSpy(self._index.searcher(), self._queries)


@contextmanager
def recording(engine: Engine, ran: Ran) -> Iterator[Ran]:
    """Record into ``ran`` every Cypher statement, Tantivy parse, alias query and SQL statement run."""
    graph_store = engine.reader.graph.store
    bm25, aliases = engine.reader.bm25, engine.reader.aliases
    execute, check_select = graph_store.execute, guard.check_select

    def cypher(text: str, params: dict[str, Any] | None = None) -> list[dict[str, Any]]:
        ran.cypher.append((text, dict(params or {})))
        return execute(text, params)

    def sql(text: str, tables: Any) -> None:
        ran.sql.append(text)
        check_select(text, tables)

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(graph_store, "execute", cypher)
        patch.setattr(bm25, "_index", _ParserSpy(bm25._index, ran.parsed))
        patch.setattr(aliases, "_index", _AliasSpy(aliases._index, ran.alias_parsed, ran.alias_queries))
        patch.setattr(guard, "check_select", sql)
        yield ran


def ask(engine: Engine, question: str) -> Ran:
    ran = Ran()
    with recording(engine, ran):
        try:
            ran.result = engine.ask(question)
        except Exception as exc:  # kept: the tests say which exceptions are a clean refusal
            ran.error = exc
    return ran


# -- the index, before and after -------------------------------------------------------------------


@dataclass(frozen=True)
class IndexState:
    files: dict[str, str]  # path in the version folder → sha256
    graph: dict[str, int]  # Kùzu node and edge counts per table
    bm25_docs: int
    vectors: int
    normal: tuple[str, bool, tuple[str, ...], str]  # answer, unknown, evidence ids, mode

    @classmethod
    def of(cls, engine: Engine) -> IndexState:
        root = engine.reader.path
        files = {
            str(p.relative_to(root)): hashlib.sha256(p.read_bytes()).hexdigest()
            for p in sorted(root.rglob("*"))
            if p.is_file()
        }
        normal = engine.ask(NORMAL)
        return cls(
            files=files,
            graph=engine.reader.graph.counts(),
            bm25_docs=tantivy.Index.open(str(engine.reader.bm25.path))
            .searcher()
            .num_docs,  # fresh, not cached
            vectors=engine.reader.vectors.count(),
            normal=(
                normal.answer,
                normal.unknown,
                tuple(e.evidence_id for e in normal.evidence),
                normal.mode,
            ),
        )


@dataclass
class Opened:
    engine: Engine
    before: IndexState


@pytest.fixture(scope="module")
def opened(sample_index) -> Iterator[Opened]:
    _, result = sample_index
    with Engine.open(result.version_dir, FAST) as engine:
        yield Opened(engine, IndexState.of(engine))


@pytest.fixture(scope="module")
def engine(opened: Opened) -> Engine:
    return opened.engine


@pytest.fixture(scope="module")
def asked(engine: Engine) -> dict[str, Ran]:
    """Every hostile and benign question asked once, with what each one ran."""
    return {question: ask(engine, question) for question in [*HOSTILE, WALK_HOSTILE, *LIST_HOSTILE, *BENIGN]}


@pytest.fixture(scope="module")
def cypher_vocabulary(engine: Engine) -> set[str]:
    """Every Cypher text the graph index can send, from calling each of its queries with plain values."""
    ran = Ran()
    graph: GraphIndex = engine.reader.graph
    with recording(engine, ran):
        graph.facts("Q31", limit=100_000)  # both directions: "in" runs when "out" is not full
        graph.evidence_for_entity("Q31")
        graph.lead_evidence(["Q31"])
        graph.linked_pages("Belgium")
        graph.pages_via_table_cells("Belgium")
        graph.classes()
        graph.members("Q183", ["Q515"], 10)
        graph.relations()
        graph.ego(["Q31"], ["P17"], 5)
        graph.page_evidence(["Q31"], 5)
    return {text for text, _ in ran.cypher}


# -- answered or refused cleanly -------------------------------------------------------------------


@pytest.mark.parametrize("question", HOSTILE, ids=NAMES)
def test_a_hostile_question_is_answered_cleanly(engine: Engine, asked: dict[str, Ran], question: str) -> None:
    """An answer or "unknown" from one mode, and a result that serializes: the question is just text."""
    ran = asked[question]
    assert ran.error is None, f"{type(ran.error).__name__}: {ran.error}"
    result = ran.result
    assert isinstance(result, QueryResult) and result.question == question
    assert result.answer.strip() and result.unknown == (result.answer == UNKNOWN)
    answered = [step.mode for step in result.route if step.outcome == "answered"]
    assert answered == [result.mode] and result.mode in engine.config.modes
    again = QueryResult.model_validate_json(result.model_dump_json())  # what --json and the batch write
    assert again.question == question and again.answer == result.answer


@pytest.mark.parametrize(
    ("question", "why"),
    [("", "empty"), ("   \t\n ", "empty"), ("Population of Belgium\ud800?", "not valid Unicode")],
    ids=["empty", "whitespace", "lone surrogate"],
)
def test_an_empty_or_non_unicode_question_is_refused_before_retrieval(
    engine: Engine, question: str, why: str
) -> None:
    """Nothing asked, or no text at all: a ValueError saying which (the batch reader rejects the same
    lines), raised when the intent is built, before any index is queried for it."""
    # before: "" and whitespace ran the whole pipeline to answer "unknown"; a lone surrogate (what Python
    # makes of argv bytes that are not UTF-8) crashed the embedder's tokenizer and came out as
    # NoModeAnswered, a RuntimeError, after every retriever but the dense one had run
    ran = ask(engine, question)
    assert isinstance(ran.error, ValueError) and why in str(ran.error)
    assert not (ran.cypher or ran.parsed or ran.sql), "refused before retrieval (alias lookups may have run)"


# -- the shape of every query ----------------------------------------------------------------------

_QUOTED = re.compile(r'"(?:[^"\\]|\\.)*"')  # a term's text in Tantivy's Debug output of a query


def _query_kinds(query: str) -> set[str]:
    """The query types in Tantivy's Debug output, terms blanked (a term may spell 'RangeQuery')."""
    return set(re.findall(r"\b(\w+Query)\b", _QUOTED.sub('""', query)))


@pytest.mark.parametrize("question", HOSTILE, ids=NAMES)
def test_cypher_is_fixed_text_whatever_the_question(
    asked: dict[str, Ran], cypher_vocabulary: set[str], question: str
) -> None:
    """A question may choose among the graph index's statements, never write or change one."""
    assert {text for text, _ in asked[question].cypher} <= cypher_vocabulary


def test_hostile_values_reach_kuzu_only_as_parameters(engine: Engine, cypher_vocabulary: set[str]) -> None:
    """Ids, titles and relations that are Cypher themselves run the very statements plain ids run, and
    match nothing: each value is a bound parameter (an id or title looked up by its node key, a number
    computed from it), never query text."""
    graph: GraphIndex = engine.reader.graph
    payloads = ["' }) MATCH (n) DETACH DELETE n //", "$param", "`Entity`", "x' OR 1=1 RETURN 1 //"]
    ran = Ran()
    with recording(engine, ran):
        for payload in payloads:
            assert graph.facts(payload) == []
            assert graph.evidence_for_entity(payload) == []
            assert graph.linked_pages(payload, source_kind=payload, relation=payload) == []
            assert graph.members(payload, [payload], 10) == ([], {
                "country": payload, "any_country": False, "classes": [payload], "any_class": False,
                "limit": 10,
            })  # fmt: skip
            assert graph.ego([payload], [payload], 5) == ([], False)
    assert {text for text, _ in ran.cypher} <= cypher_vocabulary  # the same statements as for plain ids
    values = [v for _, params in ran.cypher for v in params.values()]
    sent = {s for v in values for s in (v if isinstance(v, list) else [v]) if isinstance(s, str)}
    assert set(payloads) <= sent  # every payload went to Kùzu, as a parameter, verbatim


def test_cypher_after_a_question_walks_the_graph_with_the_same_statements(asked: dict[str, Ran]) -> None:
    """The same question with Cypher appended walks from the same entities with the same statements."""
    benign, hostile = asked[WALK_QUESTION], asked[WALK_HOSTILE]
    assert benign.result is not None and hostile.result is not None
    assert hostile.result.mode == benign.result.mode == "retrieve-read"
    walked = {text for text, _ in benign.cypher}
    assert walked and {text for text, _ in hostile.cypher} == walked
    # the walk starts from the linked entities (an entity's node key: index.graph.node_key)
    start = {p["key"] for _, p in benign.cypher if "key" in p}
    assert start and start <= {p["key"] for _, p in hostile.cypher if "key" in p}


@pytest.mark.parametrize("question", HOSTILE, ids=NAMES)
def test_the_bm25_parser_sees_only_words_and_makes_an_or_of_terms(
    engine: Engine, asked: dict[str, Ran], question: str
) -> None:
    """Field names, boosts, ranges, phrases, wildcards and operators never reach Tantivy's parser: it is
    given words only, and every word becomes one optional term of the text field."""
    ran = asked[question]
    analyzer = en_stem_analyzer()
    text_field = re.search(r"field=(\d+)", repr(engine.reader.bm25._index.parse_query("census", ["text"])))
    assert text_field is not None
    for text, query in ran.parsed:
        assert re.fullmatch(r"[^\W_]+(?: [^\W_]+)*", text), f"syntax reached the parser: {text!r}"
        assert _query_kinds(query) <= {"BooleanQuery", "TermQuery", "EmptyQuery"}, query
        assert set(re.findall(r"\((Should|Must|MustNot),", query)) <= {"Should"}, query
        assert set(re.findall(r"field=(\d+)", query)) <= {text_field[1]}, query
        terms = re.findall(r'Term\(field=\d+, type=Str, "((?:[^"\\]|\\.)*)"\)', query)
        assert set(terms) == set(analyzer.analyze(text)), "every word is one term, nothing else"


@pytest.mark.parametrize("question", HOSTILE, ids=NAMES)
def test_alias_lookups_build_their_queries_without_the_parser(asked: dict[str, Ran], question: str) -> None:
    """Entity linking looks mentions up with term and fuzzy-term queries it builds; nothing is parsed."""
    ran = asked[question]
    assert not ran.alias_parsed
    for query in ran.alias_queries:
        assert _query_kinds(query) <= {"BooleanQuery", "TermQuery", "FuzzyTermQuery"}, query


def test_an_underscore_does_not_turn_a_word_into_a_phrase_query(engine: Engine) -> None:
    # before the fix, "snake_case" reached the parser as one word, which the field's tokenizer split in
    # two: the parser made a PhraseQuery, a query type the user's text had chosen
    bm25: Bm25Index = engine.reader.bm25
    ran = Ran()
    with recording(engine, ran):
        bm25.search("population_of_Belgium snake_case", 5)
    ((text, query),) = ran.parsed
    assert text == "population of belgium snake case" and "PhraseQuery" not in query


def test_list_questions_with_sql_punctuation_run_the_same_sql(asked: dict[str, Ran]) -> None:
    """Quotes, backticks, ';' and '--' around the members change neither the SQL, its parameters, the
    entity set nor the answer."""
    benign = asked[LIST_QUESTION]
    assert benign.result is not None and benign.result.table is not None and benign.sql
    for question in LIST_HOSTILE:
        ran = asked[question]
        assert ran.result is not None and ran.result.mode == "table-sql", question
        table = ran.result.table
        assert table is not None
        assert ran.sql == benign.sql and table.sql == benign.result.table.sql
        assert (
            table.params == benign.result.table.params and table.set_params == benign.result.table.set_params
        )
        assert ran.result.answer == benign.result.answer


def test_a_value_from_the_question_reaches_sql_only_as_a_parameter(asked: dict[str, Ran]) -> None:
    """The one thing a question writes into a set question's SQL, its threshold, is a bound parameter."""
    low, high = asked[COUNT_QUESTION.format("100,000")], asked[COUNT_QUESTION.format("250,000")]
    assert low.result is not None and high.result is not None
    assert low.result.mode == high.result.mode == "table-sql"
    assert low.sql == high.sql and "100" not in low.sql[0] and "250" not in high.sql[0]
    assert low.result.table.params == [100_000.0] and high.result.table.params == [250_000.0]


@pytest.mark.parametrize("question", HOSTILE, ids=NAMES)
def test_no_question_text_reaches_sql(asked: dict[str, Ran], question: str) -> None:
    """Whatever SQL a hostile question leads to is a template: none of the question's SQL is in it."""
    for sql in asked[question].sql:
        for fragment in ("DROP", "1=1", "UNION", "--", ";", "MATCH"):
            assert fragment not in sql, sql


def test_junk_in_a_set_question_is_declined_not_read_as_any_class(engine: Engine) -> None:
    """Junk where the set's noun goes is a reason to decline, not licence to count something else."""
    # before: a noun that names no class ("zorblaxes", or "--" after "cities'") left only the country,
    # and the count ran over every German entity instead of declining
    for question, noun in [
        ("How many of the German zorblaxes have more than 100,000 inhabitants?", "zorblax"),
        ("How many of the German cities' -- have more than 100,000 inhabitants?", "--"),
    ]:
        result = engine.ask(question)
        step = next(s for s in result.route if s.mode == "table-sql")
        assert step.outcome == "declined" and f"'{noun}' names no class" in step.reason, step
        assert result.mode != "table-sql"


# -- the batch path and the CLI --------------------------------------------------------------------


def test_a_question_file_with_hostile_lines_answers_each_or_rejects_it(sample_index, tmp_path: Path) -> None:
    """The batch path: one row per line, hostile questions answered with their text kept byte for byte,
    a line that is not Unicode or asks nothing rejected with its line number; no question fails."""
    from query.batch.jobs import answer_file

    _, built = sample_index
    lines = [
        json.dumps({"id": "tantivy", "question": TANTIVY_SYNTAX[0]}),
        json.dumps({"id": "cypher", "question": CYPHER_SYNTAX[0]}),
        json.dumps({"id": "sql", "question": SQL_SYNTAX[0]}),
        json.dumps({"id": "controls", "question": OTHER_TEXT["NUL"] + OTHER_TEXT["escape sequence"]}),
        json.dumps({"id": "scripts", "question": OTHER_TEXT["Arabic"] + OTHER_TEXT["emoji"]}),
        json.dumps({"id": "markup", "question": OTHER_TEXT["rich markup"]}),
        json.dumps({"id": "long", "question": OTHER_TEXT["10 kB of mixed syntax"]}),
        '{"id": "surrogate", "question": "Belgium\\ud800?"}',  # a lone surrogate escape: not Unicode
        json.dumps({"id": "blank", "question": "  \t "}),
    ]
    path = tmp_path / "questions.jsonl"
    path.write_text("\n".join(lines) + "\n", encoding="utf-8")
    out = tmp_path / "answers.parquet"
    summary = answer_file(path, out, built.version_dir, chunk_size=4, reader="candidates")
    rows = pq.read_table(out).to_pylist()
    ids = ["tantivy", "cypher", "sql", "controls", "scripts", "markup", "long", "", "blank"]
    assert [r["question_id"] for r in rows] == ids  # one row per line, in order; no id read from line 8
    asked_rows, rejected = rows[:7], rows[7:]
    for row, line in zip(asked_rows, lines[:7], strict=True):
        assert row["error"] is None and row["question"] == json.loads(line)["question"]  # kept exactly
    assert rejected[0]["error"].startswith("rejected input line 8: not valid JSON")
    assert rejected[1]["error"] == "rejected input line 9: missing or empty 'question'"
    assert summary.questions == len(lines) and summary.errors == 2 and summary.failed == 0


def test_hqa_ask_prints_hostile_text_literally(sample_index, capsys) -> None:
    """What the user typed is printed as typed: markup stays text, control characters are made visible."""
    from query.cli.main import main

    _, built = sample_index
    questions = [OTHER_TEXT["rich markup"], "[/]", OTHER_TEXT["escape sequence"], "-"]
    argv = ["ask", "--index", str(built.version_dir), "--reader", "candidates", "--evidence", "2", "--"]
    # before: "[red]" was read as markup (the question printed without it) and "[/]" stopped the
    # command with rich's MarkupError; an escape sequence reached the terminal as it was
    assert main([*argv, *questions]) == 0
    out = capsys.readouterr().out
    assert f"Q: {OTHER_TEXT['rich markup']}" in out
    assert "Q: [/]" in out and "Q: -" in out
    assert "\x1b" not in out and "Q: \\x1b[2J\\x1b[31mWhat was the population" in out
    assert out.count("\nA: ") == len(questions)


def test_hqa_ask_refuses_empty_and_undecodable_questions_before_loading_anything(capsys) -> None:
    """Exit code 2 and every reason on stderr, before the index is opened (the path here does not exist)."""
    from query.cli.main import main

    # "\udcff" is what Python puts in sys.argv for the byte 0xff of a question that is not UTF-8
    code = main(["ask", "--index", "/nonexistent", "What?", "   ", "Belgium\udcff?"])
    captured = capsys.readouterr()
    assert code == 2 and captured.out == ""
    assert "question 2 ('   '): the question is empty" in captured.err
    assert "question 3" in captured.err and "not valid Unicode" in captured.err


# -- afterwards ------------------------------------------------------------------------------------


def test_the_index_is_unchanged_after_every_hostile_question(opened: Opened, asked: dict[str, Ran]) -> None:
    """DETACH DELETE and DROP TABLE were only words: every file of the version, every count and the
    answer to a plain question are what they were before the first hostile question."""
    assert len(asked) >= len(HOSTILE)  # every hostile question has run (the fixture asks them all)
    after = IndexState.of(opened.engine)
    before = opened.before
    assert after.graph == before.graph and after.bm25_docs == before.bm25_docs
    assert after.vectors == before.vectors
    assert after.files == before.files
    assert after.normal == before.normal and not after.normal[1]
