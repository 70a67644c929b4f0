"""The table-sql mode's graph path: a set of entities → a table built for the question → SQL (→ a test).

``EntitySetPlanner`` (``query.modes.table_sql.set_planner``) turns the words into an entity set by a
fixed Cypher and into values from the typed statements; ``query.tabulate.set_tables`` lays them out as
the table the SQL runs over and the user sees; this module picks the SELECT for the kind of question, runs
it on the guarded DuckDB connection, and says the answer:

- count over a threshold, superlative / ordinal, aggregate (sum, average, median, variance, standard
  deviation): the SQL computes the answer;
- distribution, correlation, variance test: the SQL selects the values and a SciPy test reads them
  (``query.sql.stats``); the answer is the verdict ("yes"/"no" at ``alpha``) or Pearson's r, and the
  test with its p-value goes in ``result.table.test``;
- relationship: each member's country (P17) from its best-rank statement, a GROUP BY counts them
  ("which country has the most cities"); a count of a set in a named country is the set's size.

An answer the table cannot support is never given as sure: no values at all is "unknown" with the
table shown; too few values for a test, overlapping samples, or units that differ is a ``SetDeclined``
with the reason, and the next mode answers.
"""

from __future__ import annotations

import time
from collections.abc import Callable
from dataclasses import dataclass, field

from query.modes.base import Understanding
from query.modes.table_sql.set_planner import EntitySetPlanner, SetDeclined, SetMembers
from query.modes.table_sql.settings import NAME
from query.retrieve.evidence_store import EvidenceStore
from query.sql import stats
from query.sql.guard import SqlFailed, SqlRejected, SqlResult, run_select
from query.sql.templates import TABLE, SqlQuery, count_rows, superlative, value_text
from query.tabulate.set_tables import SetTable, members_table, relation_table, sets_table, values_table
from query.understand.entity_sets import SetQuestion
from schemas.answers import StageTiming
from schemas.query import QueryResult, StatisticalTest, TableSql

_OPERATORS = frozenset({">", ">=", "<", "<="})


@dataclass
class Computed:
    """What one kind of question made of its table: the answer and everything shown with it."""

    table: SetTable
    members: SetMembers
    query: SqlQuery
    sql: str
    operation: str
    answer: str
    entity_id: str | None = None
    selected: list[int] = field(default_factory=list)
    used: list[int] = field(default_factory=list)  # rows the answer was computed from (their evidence cited)
    value: str | None = None
    unit: str | None = None
    notes: list[str] = field(default_factory=list)
    test: StatisticalTest | None = None
    unknown: bool = False
    confidence: float = 0.9


def _holds(value: float, operator: str, threshold: float | None) -> bool:
    if threshold is None:
        return False
    return {
        ">": value > threshold,
        ">=": value >= threshold,
        "<": value < threshold,
        "<=": value <= threshold,
    }[operator]


def _set_name(noun: str | None, modifiers: tuple[str, ...]) -> str:
    return " ".join([*modifiers, noun or "entities"])


class SetAnswerer:
    def __init__(
        self,
        planner: EntitySetPlanner,
        store: EvidenceStore,
        *,
        display_rows: int,
        alpha: float,
        min_test_values: int,
        index_version: str = "",
    ):
        self.planner, self.store = planner, store
        self.display_rows, self.alpha, self.min_test_values = display_rows, alpha, min_test_values
        self.index_version = index_version

    def _run(self, query: SqlQuery, table: SetTable) -> SqlResult:
        try:
            return run_select(query.sql, {TABLE: table.arrow}, query.params)
        except (SqlRejected, SqlFailed) as exc:
            raise SetDeclined(f"the SQL over the entity table failed: {exc}") from exc

    # -- the kinds --------------------------------------------------------------------------------------

    def _values(self, asked: SetQuestion, understanding: Understanding) -> Computed:
        """Count over a threshold, superlative / ordinal, aggregate: one quantity, the SQL computes."""
        members = self.planner.members(asked, understanding)
        values = self.planner.values(members.entities, asked.measure, understanding)
        table = values_table([values])
        label = values.property_label
        if asked.kind == "count":
            operator = asked.operator if asked.operator in _OPERATORS else ">"
            query = SqlQuery(
                f"SELECT count(*) AS n FROM {TABLE} WHERE value {operator} $1", [asked.threshold], "count"
            )
            operation = f"count: {label} {operator} {asked.threshold:g}"
        elif asked.kind == "aggregate":
            function = asked.aggregate or "sum"  # from a fixed set: sum, avg, median, var_samp, stddev_samp
            query = SqlQuery(
                f"SELECT {function}(value) AS value FROM {TABLE} WHERE value IS NOT NULL", [], "count"
            )
            operation = f"aggregate: {label} ({function})"
        else:
            query = superlative("value", asked.direction or "max", asked.k)
            operation = f"superlative: {label} ({asked.direction}, place {asked.k})"
        out = self._run(query, table)
        known = [i for i, v in enumerate(table.data["value"]) if v is not None]
        done = Computed(table, members, query, out.sql, operation, answer="unknown")
        if values.missing:
            done.notes.append(f"{values.missing} of {len(values.cells)} entities have no {label} statement")
        if not known:  # the set is known, its values are not: no number can be given
            done.notes.append("the index holds no value to compute the answer from")
            done.unknown, done.confidence = True, 0.0
            return done
        done.confidence = 0.9 if not values.missing else max(0.3, 0.9 * len(known) / len(values.cells))
        if asked.kind == "count":
            done.answer = done.value = value_text(out.rows[0][0])
            done.used = [i for i in known if _holds(table.data["value"][i], operator, asked.threshold)]
            done.notes.append(f"counted over the {len(known)} with a value")
        elif asked.kind == "aggregate":
            total = out.rows[0][0]
            if total is None:  # a variance of one value
                raise SetDeclined(f"{asked.aggregate} needs more values than the {len(known)} the set has")
            done.answer = done.value = value_text(round(total, 2) if isinstance(total, float) else total)
            done.used = known
            if asked.aggregate == "var_samp" and values.unit:  # a variance is in the unit squared
                done.notes.append(f"in ({values.unit})²")
            else:
                done.unit = values.unit
            done.notes.append(f"{asked.aggregate} over the {len(known)} with a value")
        else:
            if not out.rows:
                raise SetDeclined(f"no entity of the set has a {label} value")
            done.selected = done.used = [int(r[0]) for r in out.rows]
            done.entity_id, done.answer = table.entities[done.selected[0]]
            done.value = value_text(out.rows[0][1])
            if len(done.selected) > 1:
                done.notes.append(f"{len(done.selected)} entities tie")
        return done

    def _members_count(self, asked: SetQuestion, understanding: Understanding) -> Computed:
        """ "How many of the cities are in Germany": the size of the set the question names."""
        members = self.planner.members(asked, understanding)
        table = members_table(members.entities)
        query = count_rows()
        out = self._run(query, table)
        answer = value_text(out.rows[0][0])
        done = Computed(
            table, members, query, out.sql, f"count: members in {asked.place}", answer, value=answer
        )
        done.used = list(range(len(members.entities)))
        done.notes.append("a member counts when its best-rank statements give the class and the country")
        return done

    def _group(self, asked: SetQuestion, understanding: Understanding) -> Computed:
        """ "Which country has the most cities": the members' countries, counted by a GROUP BY."""
        members = self.planner.members(asked, understanding)
        table = relation_table(members.entities, self.planner.statements, "P17", "country")
        order = "DESC" if asked.direction != "min" else "ASC"
        query = SqlQuery(
            f"SELECT related_id, related, count(*) AS n FROM {TABLE} WHERE related_id IS NOT NULL "
            f"GROUP BY related_id, related QUALIFY dense_rank() OVER (ORDER BY count(*) {order}) = $1 "
            "ORDER BY related_id",
            [asked.k],
            "superlative",
        )
        out = self._run(query, table)
        operation = f"relationship: members per country ({asked.direction}, place {asked.k})"
        done = Computed(table, members, query, out.sql, operation, answer="unknown")
        if not out.rows:
            raise SetDeclined("no member of the set has a country statement")
        winner, name, count = out.rows[0]
        done.answer, done.entity_id, done.value = name or winner, winner, value_text(count)
        done.selected = done.used = [i for i, r in enumerate(table.data["related_id"]) if r == winner]
        if len(out.rows) > 1:
            done.notes.append(f"{len(out.rows)} countries tie with {count} members each")
            done.confidence = 0.45
        missing = sum(r is None for r in table.data["related_id"])
        if missing:
            done.notes.append(f"{missing} of {len(table.entities)} entities have no country statement")
        return done

    def _test(self, asked: SetQuestion, understanding: Understanding) -> Computed:
        """Distribution, correlation, variance test: the SQL selects the values, a SciPy test reads them."""
        members = self.planner.members(asked, understanding)
        first = self.planner.values(members.entities, asked.measure, understanding)
        if asked.kind == "correlation":
            second = self.planner.values(members.entities, asked.measure2 or "", understanding)
            table = values_table([first, second])
            both = "value IS NOT NULL AND value2 IS NOT NULL"
            query = SqlQuery(f"SELECT row_index, value, value2 FROM {TABLE} WHERE {both}", [], "count")
            out = self._run(query, table)
            test = self._tested(
                stats.correlation, [r[1] for r in out.rows], [r[2] for r in out.rows], self.alpha
            )
            operation = f"correlation: {first.property_label} and {second.property_label}"
            answer = (
                ("yes" if test.p_value < self.alpha else "no") if asked.yes_no else f"{test.statistic:.2f}"
            )
        elif asked.kind == "variance test":
            noun, modifiers = asked.other or (None, ())
            other = SetQuestion(
                kind="count", noun=noun, modifiers=modifiers, members=(), measure=asked.measure
            )
            others = self.planner.members(other, understanding)
            shared = {e for e, _ in members.entities} & {e for e, _ in others.entities}
            if shared:
                raise SetDeclined(
                    f"the two sets share {len(shared)} entities; a test of two samples needs them apart"
                )
            second = self.planner.values(others.entities, asked.measure, understanding)
            if first.unit != second.unit:
                raise SetDeclined(
                    f"{first.property_label} is in {first.unit} for one set, {second.unit} for the other"
                )
            names = (_set_name(asked.noun, asked.modifiers), _set_name(noun, modifiers))
            table = sets_table([(names[0], first), (names[1], second)])
            query = SqlQuery(f"SELECT sample, value FROM {TABLE} WHERE value IS NOT NULL", [], "count")
            out = self._run(query, table)
            samples = [[v for s, v in out.rows if s == name] for name in names]
            test = self._tested(stats.variance_test, samples[0], samples[1], self.alpha)
            operation = f"variance test: {first.property_label}, {names[0]} against {names[1]}"
            answer = "yes" if test.p_value < self.alpha else "no"
            params = {"first": members.params, "second": others.params}
            members = SetMembers(
                members.entities + others.entities, members.query, params, members.capped or others.capped
            )
        else:
            table = values_table([first])
            query = SqlQuery(f"SELECT value FROM {TABLE} WHERE value IS NOT NULL", [], "count")
            out = self._run(query, table)
            test = self._tested(stats.normality, [r[0] for r in out.rows], None, self.alpha)
            operation = f"distribution: is {first.property_label} normal"
            answer = "no" if test.p_value < self.alpha else "yes"
        used = [i for i, v in enumerate(table.data["value"]) if v is not None]
        done = Computed(
            table, members, query, out.sql, operation, answer, used=used, test=test, confidence=0.8
        )
        done.value = f"{test.name}: statistic {test.statistic:.4g}, p = {test.p_value:.3g}, n = {test.n}"
        done.notes.append(test.verdict)
        return done

    def _tested(
        self,
        test: Callable[..., StatisticalTest],
        first: list[float],
        second: list[float] | None,
        alpha: float,
    ) -> StatisticalTest:
        try:
            if second is None:
                return test(first, alpha, self.min_test_values)
            return test(first, second, alpha, self.min_test_values)
        except stats.TooFewValues as exc:
            raise SetDeclined(str(exc)) from exc

    # -- the answer -------------------------------------------------------------------------------------

    def answer(self, understanding: Understanding, asked: SetQuestion) -> QueryResult:
        started = time.perf_counter()
        if asked.kind in ("distribution", "correlation", "variance test"):
            done = self._test(asked, understanding)
        elif asked.kind == "group":
            done = self._group(asked, understanding)
        elif asked.kind == "count" and asked.place is not None:
            done = self._members_count(asked, understanding)
        else:
            done = self._values(asked, understanding)
        if done.members.capped:
            done.notes.append(f"the set was cut at {len(done.members.entities)} entities")
        table = done.table
        shown = list(range(min(len(table.cells), self.display_rows)))
        shown += [i for i in done.selected if i >= self.display_rows]  # chosen rows always shown
        trace = TableSql(
            source="graph",
            set_query=done.members.query,
            set_params=done.members.params,
            title=table.title,
            columns=table.columns,
            rows=[table.view(i) for i in shown],
            total_rows=len(table.cells),
            operation=done.operation,
            sql=done.sql,
            params=list(done.query.params),
            selected=done.selected,
            value=done.value,
            note="; ".join(done.notes) or None,
            test=done.test,
        )
        cited = [e for i in done.used[:10] for e in table.evidence[i]]
        rows = self.store.get(cited)
        timings = dict(understanding.timings)
        timings["table_sql"] = (time.perf_counter() - started) * 1000
        return QueryResult(
            question=understanding.question,
            answer=done.answer,
            answer_entity_id=done.entity_id,
            unknown=done.unknown,
            confidence=round(done.confidence, 3),
            evidence=[r.scored(1.0 / (1 + i), retrieved_by=[NAME]) for i, r in enumerate(rows)],
            supporting_evidence_ids=[r.evidence_id for r in rows],
            intent=understanding.intent,
            links=understanding.links,
            timings=[StageTiming(stage=k, ms=round(v, 3)) for k, v in timings.items()],
            reader=NAME,
            index_version=self.index_version,
            unit=done.unit,  # only a total, an average or a spread carries the quantity's unit
            table=trace,
        )


__all__ = ["NAME", "SetAnswerer"]
