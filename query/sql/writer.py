"""SQL written by the instruct model from a table's schema and a few of its rows, then checked and run.

The templates cover a superlative and a place in the table's order; a count with a condition ("how
many of the clubs are from Minsk"), a comparison between named rows or a superlative under a filter
needs SQL shaped by the question. The coder model writes it: the prompt holds the table's columns
(SQL name, type, original header), a few rows, and the question; the reply is held to the schema
``{"sql": …}`` while it is generated. The SQL is then only text from a model: ``run_select`` checks it
(one SELECT over ``question_table``, allowed functions only) and runs it sealed. A reply that does not
pass is answered once more with the error quoted and the table's column names listed (on OTT-QA most
failed replies named a column the table lacks: "wins", "city", "population"); after that the writer
gives up and says why. A ranking needs the row it picks, not just a cell of it (the answer may be on
the page that row links to): SQL that runs but returns no ``row_index`` for such a question is
answered once more asking for it, within the same two tries.

On OTT-QA the 1.5B model named the table after its page in 13 of 32 replies ("FROM 2017_pba_draft",
"FROM list_of_youtubers", or an unquoted "FROM 1959_in_Norwegian_football" that does not parse), so the
page title is given as where the table comes from, not as a name, and SQL that reads exactly one
table under another name gets the question's table under that name: the connection still holds that
one Arrow table and nothing else.
"""

from __future__ import annotations

from dataclasses import dataclass

import pyarrow as pa
from pydantic import BaseModel, Field

from query.llm.backends import LlmError
from query.llm.chat import Llm
from query.sql.guard import (
    SqlFailed,
    SqlLimits,
    SqlRejected,
    SqlResult,
    UnknownTable,
    check_select,
    run_select,
)
from query.sql.templates import ROW, TABLE

SYSTEM_PROMPT = f"""You write one DuckDB SQL SELECT statement that answers a question from one table.
The table is named {TABLE}; it is already the table the question is about, so words that name the
table (its page, league, season or year) are not conditions. Use only its columns, exactly as named.
NUMBER columns hold numbers (NULL when a cell had none), DATE columns dates, TEXT columns the cell text.
To pick rows, select {ROW} first, then the column that answers. To count, select count(*).

Example. Columns: {ROW} INTEGER, team TEXT -- 'Team', wins NUMBER -- 'W', city TEXT -- 'City'
Question: How many teams of the 2010 league won more than 10 games?
SQL: SELECT count(*) FROM {TABLE} WHERE wins > 10
Question: Which team in the 2010 league had the second most wins?
SQL: SELECT {ROW}, team FROM {TABLE} WHERE wins IS NOT NULL ORDER BY wins DESC LIMIT 1 OFFSET 1
Question: How many teams from Leeds took part in the 2010 league?
SQL: SELECT count(*) FROM {TABLE} WHERE city = 'Leeds'"""
MAX_CELL = 40


class SqlReply(BaseModel):
    sql: str = Field(description=f"one SELECT over {TABLE}")


@dataclass
class WrittenSql:
    """What the writer produced: the result that ran, or why there is none; the model's attempts."""

    result: SqlResult | None
    attempts: list[str]
    error: str | None = None
    prompt_tokens: int = 0
    completion_tokens: int = 0


def table_prompt(question: str, schema: str, sample: pa.Table, title: str = "") -> str:
    """The user message: the table's title, columns, a few rows (cells cut short), the question."""
    rows = []
    for row in sample.to_pylist():
        cells = [str(v)[:MAX_CELL] if v is not None else "NULL" for v in row.values()]
        rows.append(" | ".join(cells))
    return (
        (f"The table {TABLE} is from the page: {title}\n" if title else "") + f"Columns: {schema}\n"
        f"First rows ({' | '.join(sample.column_names)}):\n" + "\n".join(rows) + f"\n\nQuestion: {question}"
    )


def _names(sql: str, table: pa.Table) -> dict[str, pa.Table]:
    """The names the SQL may read the table by: ``question_table``, and the one other name the SQL
    uses for it when it reads exactly one table (``FROM list_of_youtubers``)."""
    names = {TABLE: table}
    try:
        check_select(sql, [TABLE])
    except UnknownTable as exc:
        try:
            check_select(sql, [TABLE, exc.name])  # a second unknown table, or another fault, stays refused
        except SqlRejected:
            return names
        names[exc.name] = table
    except SqlRejected:
        pass
    return names


class SqlWriter:
    def __init__(
        self, llm: Llm, max_tokens: int = 200, sample_rows: int = 5, limits: SqlLimits | None = None
    ):
        self.llm, self.max_tokens, self.sample_rows = llm, max_tokens, sample_rows
        self.limits = limits or SqlLimits()

    def write(
        self, question: str, schema: str, table: pa.Table, title: str = "", want_row: bool = False
    ) -> WrittenSql:
        """SQL for ``question`` over ``table`` (registered as ``question_table``), run; at most 2 tries.

        ``want_row``: the question picks a row, so a result without ``row_index`` first is asked again.
        """
        sample = table.slice(0, self.sample_rows)
        messages = [
            {"role": "system", "content": SYSTEM_PROMPT},
            {"role": "user", "content": table_prompt(question, schema, sample, title)},
        ]
        written = WrittenSql(result=None, attempts=[])
        for _ in range(2):
            try:
                reply = self.llm.chat_reply(messages, SqlReply, max_tokens=self.max_tokens, purpose="sql")
            except LlmError as exc:
                written.error = f"the model failed: {exc}"
                return written
            written.prompt_tokens += sum(c.prompt_tokens for c in reply.calls)
            written.completion_tokens += sum(c.completion_tokens for c in reply.calls)
            sql = reply.value.sql.strip().rstrip(";").strip()
            written.attempts.append(sql)
            try:
                written.result = run_select(sql, _names(sql, table), limits=self.limits)
                written.error = None
            except (SqlRejected, SqlFailed) as exc:
                written.error = f"{type(exc).__name__}: {exc}"
                correction = (
                    f"That SQL cannot run ({exc}). The columns of {TABLE} are exactly: "
                    f"{', '.join(table.column_names)}. Write one corrected SELECT."
                )
            else:
                if not want_row or written.result.columns[:1] == [ROW]:
                    return written
                correction = (
                    f"That SQL returns {', '.join(written.result.columns)}, not the row the question picks. "
                    f"Select {ROW} first, then the column that answers."
                )
            messages += [
                {"role": "assistant", "content": reply.completion.text},
                {"role": "user", "content": correction},
            ]
        return written
