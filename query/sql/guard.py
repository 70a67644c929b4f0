"""One read-only SELECT over the question's own table, checked before it runs and bounded while it runs.

SQL reaches this module from two places: the templates (fixed shapes, identifiers quoted, values bound
as parameters) and, when an LLM is configured, a model that writes it from the table's schema. Neither
is trusted. ``check_select`` parses the text with DuckDB's own parser (``json_serialize_sql``, which
serializes SELECT statements only) and walks the tree: exactly one statement, every table reference
a known table or one of the query's own CTEs, no table functions (``read_csv``, ``duckdb_settings``),
every named function on an allow-list. ``run_select`` then runs it on a fresh in-memory connection
that holds only the registered Arrow tables, with file access switched off and the configuration
locked, one thread, a memory cap and a wall-clock limit (``interrupt`` from a timer): a check that
missed something still finds nothing to read or write.
"""

from __future__ import annotations

import json
import threading
import time
from collections.abc import Iterator, Mapping, Sequence
from typing import Any

import duckdb
import pyarrow as pa
from pydantic import BaseModel, Field

_FUNCTIONS = """count sum avg mean min max median mode quantile_cont quantile_disc
    stddev stddev_samp stddev_pop
    variance var_samp var_pop corr covar_samp covar_pop arg_max arg_min argmax argmin max_by min_by first
    last any_value list list_contains string_agg group_concat count_star bool_and bool_or
    abs round floor ceil ceiling sign sqrt power pow ln log log10 log2 exp greatest least
    coalesce nullif ifnull cast try_cast
    lower upper lcase ucase length trim ltrim rtrim substr substring replace concat contains
    starts_with ends_with prefix suffix position strpos instr like_escape regexp_matches
    year month day date_part datepart extract date_diff datediff date_trunc datetrunc strftime
    row_number rank dense_rank percent_rank cume_dist ntile lag lead first_value last_value nth_value
    """
ALLOWED_FUNCTIONS = frozenset(_FUNCTIONS.split())
"""Aggregates, arithmetic, text, dates and window functions: what a question over one table needs."""

SELECT_NODES = frozenset({"SELECT_NODE", "SET_OPERATION_NODE", "CTE_NODE"})
ALLOWED_FROM = frozenset({"BASE_TABLE", "JOIN", "SUBQUERY", "EMPTY", "EMPTY_FROM"})


class SqlRejected(ValueError):
    """The SQL is not one read-only SELECT over the known tables; the message says what broke the rule."""


class UnknownTable(SqlRejected):
    """The SQL reads a table by a name that is not the question's table (a model naming it after its page)."""

    def __init__(self, name: str, known: Sequence[str]):
        super().__init__(f"reads table {name!r}; known: {sorted(known)}")
        self.name = name


class SqlFailed(RuntimeError):
    """The SQL passed the check but DuckDB could not run it (a binder error, a type error, the limit)."""


class SqlLimits(BaseModel):
    """Bounds on one run: the answer is a row or a number, never a dump of the table."""

    timeout_s: float = Field(2.0, gt=0)
    max_rows: int = Field(1000, gt=0)
    memory_limit: str = "256MB"


class SqlResult(BaseModel):
    """What a SELECT returned, with the SQL and its parameters as they ran."""

    sql: str
    params: list[Any] = Field(default_factory=list)
    columns: list[str]
    rows: list[list[Any]]
    truncated: bool = Field(False, description="more rows than max_rows were returned; the rest dropped")
    ms: float


def _parse(sql: str) -> dict[str, Any]:
    con = duckdb.connect(":memory:")
    try:
        (text,) = con.execute("SELECT json_serialize_sql(?)", [sql]).fetchone()  # type: ignore[misc]
    finally:
        con.close()
    tree = json.loads(text)
    if tree.get("error"):
        raise SqlRejected(f"not one SELECT statement: {tree.get('error_message', 'unparseable')}")
    return tree


def _dicts(node: Any) -> Iterator[dict[str, Any]]:
    if isinstance(node, dict):
        yield node
        for value in node.values():
            yield from _dicts(value)
    elif isinstance(node, list):
        for value in node:
            yield from _dicts(value)


def _cte_names(tree: dict[str, Any]) -> set[str]:
    names = set()
    for node in _dicts(tree):
        cte_map = node.get("cte_map")
        if isinstance(cte_map, dict):
            for entry in cte_map.get("map", []):
                if isinstance(entry, dict) and isinstance(entry.get("key"), str):
                    names.add(entry["key"].lower())
    return names


def check_select(sql: str, tables: Sequence[str]) -> None:
    """Raise ``SqlRejected`` unless ``sql`` is one SELECT reading only ``tables`` with allowed functions."""
    if not sql.strip():
        raise SqlRejected("empty SQL")
    tree = _parse(sql)
    statements = tree.get("statements", [])
    if len(statements) != 1:
        raise SqlRejected(f"{len(statements)} statements; one SELECT is allowed")
    known = {t.lower() for t in tables} | _cte_names(tree)
    for node in _dicts(statements[0]):
        kind = node.get("type")
        if "from_table" in node and isinstance(node["from_table"], dict):
            source = node["from_table"].get("type")
            if source not in ALLOWED_FROM:
                raise SqlRejected(f"reads from a {str(source).lower().replace('_', ' ')}; only the table")
        if kind == "TABLE_FUNCTION":
            raise SqlRejected("calls a table function; only the question's table may be read")
        if kind == "BASE_TABLE":
            name = str(node.get("table_name", "")).lower()
            if node.get("catalog_name") or node.get("schema_name") not in ("", "main", None):
                raise SqlRejected(f"names a catalog or schema ({name}); only the question's table")
            if name not in known:
                raise UnknownTable(name, sorted(known))
        if kind == "RECURSIVE_CTE_NODE":
            raise SqlRejected("a recursive CTE; a question over one table needs none")
        if node.get("class") in ("FUNCTION", "WINDOW", "AGGREGATE") and not node.get("is_operator"):
            name = str(node.get("function_name", "")).lower()
            if node.get("schema") or node.get("catalog"):
                raise SqlRejected(f"calls {name} through a schema; plain functions only")
            if name not in ALLOWED_FUNCTIONS:
                raise SqlRejected(f"calls {name}(), which is not on the allow-list")
        if node.get("type") == "SELECT_NODE" and node.get("sample"):
            raise SqlRejected("TABLESAMPLE makes the answer random")


def run_select(
    sql: str,
    tables: Mapping[str, pa.Table],
    params: Sequence[Any] = (),
    limits: SqlLimits | None = None,
) -> SqlResult:
    """Check ``sql``, then run it over ``tables`` (name → Arrow table) on a sealed in-memory DuckDB."""
    limits = limits or SqlLimits()
    check_select(sql, list(tables))
    con = duckdb.connect(":memory:", config={"threads": 1, "memory_limit": limits.memory_limit})
    timer = threading.Timer(limits.timeout_s, con.interrupt)
    started = time.perf_counter()
    try:
        for name, table in tables.items():
            con.register(name, table)
        con.execute("SET enable_external_access = false")
        con.execute("SET lock_configuration = true")
        timer.start()
        try:
            cursor = con.execute(sql, list(params))
            rows = cursor.fetchmany(limits.max_rows + 1)
            columns = [d[0] for d in cursor.description or []]
        except duckdb.InterruptException as exc:
            raise SqlFailed(f"stopped after the {limits.timeout_s:g} s limit") from exc
        except duckdb.Error as exc:
            raise SqlFailed(f"{type(exc).__name__}: {str(exc).splitlines()[0]}") from exc
    finally:
        timer.cancel()
        con.close()
    return SqlResult(
        sql=sql,
        params=list(params),
        columns=columns,
        rows=[list(r) for r in rows[: limits.max_rows]],
        truncated=len(rows) > limits.max_rows,
        ms=round((time.perf_counter() - started) * 1000, 3),
    )


def quote_identifier(name: str) -> str:
    """A column or table name as a DuckDB identifier, whatever characters a table header holds."""
    return '"' + name.replace('"', '""') + '"'
