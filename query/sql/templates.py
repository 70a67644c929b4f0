"""SQL for the common row operations, without an LLM: fixed shapes, quoted identifiers, bound values.

The shape comes from the operation (``TableOp.kind``), never from the question's text; column names
come from the table's own headers and are quoted; values are parameters. Superlatives rank with
``dense_rank`` so that rows tied at the asked place all come back and the mode can say it is a tie
rather than pick one silently.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any, Literal

from query.sql.guard import quote_identifier

TABLE = "question_table"
ROW = "row_index"


@dataclass(frozen=True)
class SqlQuery:
    sql: str
    params: list[Any]
    kind: Literal["superlative", "position", "count", "lookup"]


def superlative(
    measure: str, direction: Literal["max", "min"], k: int = 1, where: Sequence[tuple[str, Any]] = ()
) -> SqlQuery:
    """Rows at the k-th distinct value of ``measure``, largest first for max (ties all returned),
    among the rows ``where`` keeps (``conditions``)."""
    column = quote_identifier(measure)
    order = "DESC" if direction == "max" else "ASC"
    sql = (
        f"SELECT {ROW}, {column} AS value FROM {TABLE} WHERE {column} IS NOT NULL{conditions(where, 2)} "
        f"QUALIFY dense_rank() OVER (ORDER BY {column} {order}) = $1 ORDER BY {ROW}"
    )
    return SqlQuery(sql=sql, params=[k, *(value for _, value in where)], kind="superlative")


def position(k: int = 1, from_end: bool = False, where: Sequence[tuple[str, Any]] = ()) -> SqlQuery:
    """The k-th row in the table's own order, from the top or from the bottom, of the rows ``where``
    keeps (``conditions``)."""
    order = "DESC" if from_end else "ASC"
    kept = f" WHERE{conditions(where, 2)[4:]}" if where else ""
    sql = f"SELECT {ROW} FROM {TABLE}{kept} ORDER BY {ROW} {order} LIMIT 1 OFFSET $1"
    return SqlQuery(sql=sql, params=[k - 1, *(value for _, value in where)], kind="position")


def rows_where(where: Sequence[tuple[str, Any]]) -> SqlQuery:
    """Every row ``where`` keeps (``conditions``), in table order: the rows a question names by their
    values ("the 2009 final"), for the caller to check that they are exactly one."""
    kept = f" WHERE{conditions(where, 1)[4:]}" if where else ""
    sql = f"SELECT {ROW} FROM {TABLE}{kept} ORDER BY {ROW}"
    return SqlQuery(sql=sql, params=[value for _, value in where], kind="lookup")


def conditions(where: Sequence[tuple[str, Any]], first: int) -> str:
    """`` AND …`` for each (column, value) of ``where``, its value bound as ``$first``, ``$first+1``, …:
    the column equal to the value, or — for the ``row_index`` column — the row among a list of row
    indexes (the rows the caller matched, e.g. those whose cells mention a name the question writes)."""
    return "".join(
        f" AND list_contains(${n}, {ROW})" if name == ROW else f" AND {quote_identifier(name)} = ${n}"
        for n, (name, _) in enumerate(where, start=first)
    )


def count_rows() -> SqlQuery:
    """How many rows the table has (a count over one table's rows, no condition)."""
    return SqlQuery(sql=f"SELECT count(*) AS n FROM {TABLE}", params=[], kind="count")


def value_text(value: Any) -> str:
    """A SQL value as an answer: 3.0 → "3", 1234567.0 → "1,234,567", 83.456 as it is, a date as ISO."""
    if isinstance(value, float) and value.is_integer():
        value = int(value)
    if isinstance(value, int) and not isinstance(value, bool):
        return f"{value:,}" if abs(value) >= 10_000 else str(value)
    return str(value)
