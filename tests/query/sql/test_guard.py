"""The SQL guard: only one SELECT over the question's table runs, bounded in time and rows, on DuckDB."""

from __future__ import annotations

import pyarrow as pa
import pytest

from query.sql.guard import SqlFailed, SqlLimits, SqlRejected, check_select, quote_identifier, run_select

CITIES = pa.table(
    {
        "city": ["Santiago", "Valparaíso", "Concepción", "Temuco", "Arica"],
        "population": [6_257_516, 296_655, 223_574, None, 221_364],
        "region": ["Metropolitana", "Valparaíso", "Biobío", "Araucanía", "Arica y Parinacota"],
    }
)
TABLES = {"cities": CITIES}


def test_a_select_runs_over_the_registered_arrow_table() -> None:
    rows = CITIES.to_pylist()
    known = [r for r in rows if r["population"] is not None]
    expected = sorted(known, key=lambda r: -r["population"])[1]["city"]  # second most populous
    result = run_select(
        "SELECT city FROM cities WHERE population IS NOT NULL ORDER BY population DESC LIMIT 1 OFFSET 1",
        TABLES,
    )
    assert result.rows == [[expected]] and result.columns == ["city"] and not result.truncated
    count = run_select("SELECT count(*) AS n FROM cities WHERE population > $1", TABLES, [250_000])
    assert count.rows == [[sum(1 for r in known if r["population"] > 250_000)]]
    assert count.params == [250_000]


@pytest.mark.parametrize(
    ("sql", "why"),
    [
        ("", "empty"),
        ("DELETE FROM cities", "not one SELECT"),
        ("DROP TABLE cities", "not one SELECT"),
        ("SELECT 1; SELECT 2", "2 statements"),
        ("SELECT * FROM read_csv('/etc/passwd')", "table function"),
        ("SELECT * FROM (SELECT * FROM read_parquet('x.parquet'))", "table function"),
        ("SELECT * FROM duckdb_settings()", "table function"),
        ("SELECT * FROM other_table", "reads table 'other_table'"),
        ("SELECT * FROM cities, secrets", "reads table 'secrets'"),
        ("SELECT getenv('HOME')", "getenv"),
        ("SELECT current_setting('threads')", "current_setting"),
        ("SELECT sum(population) OVER (ORDER BY read_blob('x')) FROM cities", "read_blob"),
        (
            "WITH RECURSIVE r(n) AS (SELECT 1 UNION ALL SELECT n + 1 FROM r) SELECT count(*) FROM r",
            "recursive",
        ),
        ("SELECT * FRM cities", "not one SELECT"),
    ],
)
def test_anything_but_one_select_over_the_table_is_rejected_before_it_runs(sql: str, why: str) -> None:
    with pytest.raises(SqlRejected, match=why):
        run_select(sql, TABLES)


def test_ctes_windows_and_subqueries_over_the_table_pass() -> None:
    check_select(
        "WITH known AS (SELECT * FROM cities WHERE population IS NOT NULL) "
        "SELECT city, rank() OVER (ORDER BY population DESC) AS r FROM known "
        "WHERE population >= (SELECT median(population) FROM known)",
        ["cities"],
    )


def test_runtime_errors_and_the_time_limit_are_sqlfailed_not_crashes() -> None:
    with pytest.raises(SqlFailed, match="not found"):
        run_select("SELECT elevation FROM cities", TABLES)
    cross = ", ".join(f"cities c{i}" for i in range(14))  # 5**14 rows: far beyond the limit
    with pytest.raises(SqlFailed, match="limit"):
        run_select(f"SELECT count(*) FROM {cross}", TABLES, limits=SqlLimits(timeout_s=0.5))


def test_rows_are_capped_and_the_cap_is_said() -> None:
    result = run_select("SELECT city FROM cities", TABLES, limits=SqlLimits(max_rows=2))
    assert len(result.rows) == 2 and result.truncated


def test_a_hostile_column_name_is_only_a_name_once_quoted() -> None:
    name = 'x" FROM cities; DROP TABLE cities; --'
    table = {"t": pa.table({name: [1, 2, 3]})}
    result = run_select(f"SELECT max({quote_identifier(name)}) FROM t", table)
    assert result.rows == [[3]]


def test_template_conditions_bind_values_and_row_lists() -> None:
    """A place in order and a ranking among the rows a question names: an equal cell, or the row indexes
    the caller matched (``list_contains``), each bound as a parameter and run on DuckDB."""
    from query.sql.templates import ROW, TABLE, position, superlative

    table = pa.table(
        {
            ROW: pa.array(range(6), pa.int32()),
            "opponent": ["Pfalz", "Rumpler", "Rumpler", "Fokker", "Rumpler", "Fokker"],
            "score": [5.0, 9.0, 7.0, 8.0, 3.0, 1.0],
        }
    )
    rumplers = [i for i, o in enumerate(table.column("opponent").to_pylist()) if o == "Rumpler"]
    last = position(1, from_end=True, where=[("opponent", "Rumpler")])
    assert run_select(last.sql, {TABLE: table}, last.params).rows == [[max(rumplers)]]
    second = position(2, where=[(ROW, [0, 3, 5])])
    assert "list_contains($2, row_index)" in second.sql
    assert run_select(second.sql, {TABLE: table}, second.params).rows == [[3]]
    lowest = superlative("score", "min", 1, [("opponent", "Rumpler"), (ROW, [1, 2, 3])])
    assert lowest.params == [1, "Rumpler", [1, 2, 3]]
    assert run_select(lowest.sql, {TABLE: table}, lowest.params).rows == [[2, 7.0]]


def test_rows_where_returns_every_row_both_conditions_keep() -> None:
    """The lookup's SELECT: the rows an equal cell and a row list both keep, in table order."""
    from query.sql.templates import ROW, TABLE, rows_where

    table = pa.table({ROW: pa.array(range(4), pa.int32()), "medal": ["Gold", "Silver", "Gold", "Gold"]})
    golds = [i for i, m in enumerate(table.column("medal").to_pylist()) if m == "Gold"]
    kept = rows_where([("medal", "Gold"), (ROW, [0, 1, 3])])
    assert kept.sql.count("$") == 2 and kept.params == ["Gold", [0, 1, 3]]
    assert run_select(kept.sql, {TABLE: table}, kept.params).rows == [[i] for i in golds if i in (0, 1, 3)]
