"""The SQL writer's mechanics with a scripted model (a real model writes SQL in the mode's tests)."""

from __future__ import annotations

import pyarrow as pa

from query.llm.chat import Llm
from query.sql.templates import TABLE
from query.sql.writer import SqlWriter, table_prompt
from tests.query.scripted_llm import Scripted

TABLE_DATA = pa.table(
    {
        "row_index": [0, 1, 2, 3],
        "club": ["BATE Borisov", "Minsk", "Dinamo Minsk", "Gomel"],
        "location": ["Borisov", "Minsk", "Minsk", "Gomel"],
        "capacity": [5402.0, 36900.0, 4500.0, 14307.0],
    }
)
SCHEMA = "row_index INTEGER, club TEXT -- 'Club', location TEXT -- 'Location', capacity NUMBER -- 'Capacity'"


def test_a_good_reply_runs_and_its_rows_come_back() -> None:
    backend = Scripted([{"sql": f"SELECT count(*) FROM {TABLE} WHERE location = 'Minsk';"}])
    written = SqlWriter(Llm(backend)).write("How many clubs are from Minsk?", SCHEMA, TABLE_DATA)
    assert written.error is None and written.result is not None
    assert written.result.rows == [[sum(1 for x in TABLE_DATA["location"].to_pylist() if x == "Minsk")]]
    prompt = backend.sent[0][1]["content"]
    assert "capacity NUMBER -- 'Capacity'" in prompt and "BATE Borisov" in prompt and "Minsk?" in prompt


def test_a_rejected_reply_gets_one_correction_with_the_error_quoted() -> None:
    backend = Scripted(
        [
            {"sql": "SELECT * FROM read_csv('/etc/passwd')"},
            {"sql": f"SELECT row_index, club FROM {TABLE} ORDER BY capacity DESC LIMIT 1"},
        ]
    )
    written = SqlWriter(Llm(backend)).write("Which club has the largest capacity?", SCHEMA, TABLE_DATA)
    assert written.result is not None and written.result.rows == [[1, "Minsk"]]
    assert len(written.attempts) == 2 and "table function" in backend.sent[1][-1]["content"]


def test_two_bad_replies_end_with_the_reason_and_no_result() -> None:
    backend = Scripted([{"sql": "DROP TABLE question_table"}, {"sql": "SELECT nosuch FROM question_table"}])
    written = SqlWriter(Llm(backend)).write("Which club?", SCHEMA, TABLE_DATA)
    assert written.result is None and "not found" in (written.error or "")
    assert len(written.attempts) == 2


def test_a_failing_model_is_an_error_not_a_crash() -> None:
    from query.llm.backends import LlmError

    written = SqlWriter(Llm(Scripted([LlmError("server down")]))).write("Which club?", SCHEMA, TABLE_DATA)
    assert written.result is None and "server down" in (written.error or "")


def test_long_cells_are_cut_in_the_prompt() -> None:
    table = pa.table({"row_index": [0], "notes": ["x" * 500]})
    assert "x" * 41 not in table_prompt("q", "notes TEXT", table)


def test_a_table_named_after_its_page_is_the_question_table_and_two_names_are_refused() -> None:
    """OTT-QA: the model wrote 'FROM list_of_youtubers' in 13 of 32 replies; it reads the one table."""
    backend = Scripted([{"sql": "SELECT count(*) FROM belarusian_premier_league WHERE location = 'Minsk'"}])
    written = SqlWriter(Llm(backend)).write(
        "How many clubs are from Minsk?", SCHEMA, TABLE_DATA, "Belarusian"
    )
    assert written.error is None and written.result is not None and written.result.rows == [[2]]
    assert f"The table {TABLE} is from the page: Belarusian" in backend.sent[0][1]["content"]
    two = Scripted(
        [{"sql": "SELECT * FROM clubs, stadiums"}, {"sql": "SELECT * FROM clubs JOIN stadiums ON 1=1"}]
    )
    refused = SqlWriter(Llm(two)).write("Which club?", SCHEMA, TABLE_DATA)
    assert refused.result is None and "reads table" in (refused.error or "")


def test_a_failed_reply_is_told_the_columns_the_table_has() -> None:
    """On OTT-QA most failed replies named a column the table lacks; the correction lists the real ones."""
    backend = Scripted(
        [
            {"sql": f"SELECT count(*) FROM {TABLE} WHERE city = 'Minsk'"},
            {"sql": f"SELECT count(*) FROM {TABLE} WHERE location = 'Minsk'"},
        ]
    )
    written = SqlWriter(Llm(backend)).write("How many clubs are from Minsk?", SCHEMA, TABLE_DATA)
    correction = backend.sent[1][-1]["content"]
    assert '"city" not found' in correction
    assert "exactly: row_index, club, location, capacity." in correction
    assert written.result is not None and written.result.rows == [[2]]


def test_a_ranking_answered_by_a_bare_cell_is_asked_for_its_row() -> None:
    largest = max(range(4), key=lambda i: TABLE_DATA["capacity"][i].as_py())
    bare = {"sql": f"SELECT club FROM {TABLE} ORDER BY capacity DESC LIMIT 1"}
    with_row = {"sql": f"SELECT row_index, club FROM {TABLE} ORDER BY capacity DESC LIMIT 1"}
    backend = Scripted([bare, with_row])
    question = "Which club has the largest capacity?"
    written = SqlWriter(Llm(backend)).write(question, SCHEMA, TABLE_DATA, want_row=True)
    assert "not the row the question picks" in backend.sent[1][-1]["content"]
    assert written.result is not None and written.result.rows == [
        [largest, TABLE_DATA["club"][largest].as_py()]
    ]
    assert len(written.attempts) == 2
    count = Scripted([bare])  # without want_row (a count's value is the answer) the first result stands
    once = SqlWriter(Llm(count)).write(question, SCHEMA, TABLE_DATA)
    assert once.result is not None and once.result.columns == ["club"] and len(once.attempts) == 1
