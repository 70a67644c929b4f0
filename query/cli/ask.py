"""``hqa ask`` and ``hqa answer``: one question, readable or as JSON; a question file, into Parquet."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from query.cli.console import console, error_console, shown
from query.llm.backends import LLM_BACKENDS
from schemas.answers import question_text
from schemas.query import QueryResult, ScoredEvidence, TableSql
from schemas.settings import HqaSettings


def add_reader_options(p: argparse.ArgumentParser) -> None:
    """--reader and --llm: who reads the answer, and which model when it is the LLM."""
    p.add_argument(
        "--reader",
        choices=("llm", "candidates"),
        help="'llm': the instruct model reads the evidence (seconds a question); "
        "'candidates': the candidate reader (milliseconds); default from the engine config",
    )
    p.add_argument(
        "--llm",
        choices=LLM_BACKENDS.names(),
        metavar="BACKEND",
        help=f"LLM backend: {', '.join(LLM_BACKENDS)}",
    )


def add_ask(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer questions against the current index, with the evidence")
    p.add_argument("questions", nargs="+", help="one or more questions")
    p.add_argument("--index", type=Path, help="index root or version (default <state_dir>/indexes)")
    p.add_argument("--engine-config", type=Path, help="engine config (TOML/YAML)")
    add_reader_options(p)
    p.add_argument("--evidence", type=int, default=5, help="evidence rows to show (default 5)")
    p.add_argument("--json", action="store_true", help="print each result as one JSON line")


def add_answer(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("answer", help="answer a question file (JSONL or Parquet) into an answers Parquet")
    p.add_argument("--in", dest="questions", type=Path, required=True, help="questions .jsonl or .parquet")
    p.add_argument("--out", type=Path, required=True, help="answers .parquet")
    p.add_argument("--index", type=Path, help="index root or version (default <state_dir>/indexes)")
    p.add_argument("--chunk-size", type=int, help="questions per resumable part (default from settings)")
    p.add_argument("--k", type=int, default=30, help="evidence rows kept per answer")
    p.add_argument(
        "--reader", choices=("llm", "candidates"), help="who reads the answers; default: the engine config's"
    )


def engine_config(args: argparse.Namespace, settings: HqaSettings):
    from query.config import EngineConfig

    overrides: dict = {}
    if getattr(args, "reader", None):
        overrides["reader"] = args.reader
    if getattr(args, "llm", None):
        overrides["llm"] = {"backend": args.llm}
    config = EngineConfig.load(args.engine_config or settings.engine_config, **overrides)
    if config.property_table is None:  # the settings' data folder holds the property table
        config = config.model_copy(update={"property_table": settings.property_table})
    return config


def refused_questions(questions: list[str]) -> list[str]:
    """Why each question that cannot be asked is refused (``schemas.answers.question_text``), numbered
    as given: an empty one, or one whose bytes were not UTF-8 (argv decodes them to lone surrogates)."""
    refused = []
    for i, question in enumerate(questions, start=1):
        try:
            question_text(question)
        except ValueError as exc:
            refused.append(f"question {i} ({shown(repr(question)[:80])}): {shown(exc)}")
    return refused


def cmd_ask(args: argparse.Namespace, settings: HqaSettings) -> int:
    from query.engine import Engine

    refused = refused_questions(args.questions)
    if refused:  # before the index and the models are loaded: nothing is asked until every question can be
        for reason in refused:
            error_console.print(f"[red]hqa ask: refused[/red] {reason}", highlight=False, soft_wrap=True)
        return 2
    with console.status("opening the index and loading models"):
        config = engine_config(args, settings)
        engine = Engine.open(args.index or settings.index_dir, config, state_dir=settings.state_dir)
    with engine:
        for question in args.questions:
            result = engine.ask(question)
            if args.json:
                print(result.model_dump_json())
            else:
                print_result(result, args.evidence)
    return 0


def cmd_answer(args: argparse.Namespace, settings: HqaSettings) -> int:
    from query.batch.combine import AnsweringFailed
    from query.batch.jobs import answer_file

    try:
        summary = answer_file(
            args.questions,
            args.out,
            args.index or settings.index_dir,
            args.chunk_size or settings.airflow.qa_chunk_size,
            k=args.k,
            engine_config=settings.engine_config,
            reader=args.reader,
            max_failure_rate=settings.answer_max_failure_rate,
        )
    except AnsweringFailed as exc:
        console.print(f"[red]answer failed:[/red] {shown(exc)}")
        return 1
    console.print(shown(summary.model_dump_json(indent=2)))
    return 0


def provenance_line(e: ScoredEvidence) -> str:
    p = e.provenance
    where = [p.source]
    if e.page_title:
        where.append(f"page {e.page_title!r}")
    if p.section_path:
        where.append("§ " + " / ".join(p.section_path))
    if p.table_id is not None:
        where.append(f"table {p.table_id} row {p.row_index}")
    if p.infobox_key:
        where.append(f"infobox {p.infobox_template}.{p.infobox_key}")
    if p.statement_id:
        where.append(f"statement {p.statement_id} ({p.property})")
    return ", ".join(where)


def print_result(result: QueryResult, evidence: int) -> None:
    """One result, readable. Every piece of data goes through ``shown``: the question is the user's text,
    the answer, labels and evidence are the dumps' text, and none of it is markup."""
    answer = "[yellow]unknown[/]" if result.unknown else f"[bold green]{shown(result.answer)}[/]"
    unit = f" [green]{shown(result.unit)}[/]" if result.unit and not result.unknown else ""
    console.print(f"\n[bold]Q:[/] {shown(result.question)}")
    console.print(
        f"[bold]A:[/] {answer}{unit}   confidence {result.confidence:.2f}  "
        f"mode [bold]{shown(result.mode)}[/] ({shown(result.reader)})"
    )
    if result.answer_entity_id and not result.unknown:
        # the entity's id is provenance, on a line of its own: the answer is a name and never carries it
        console.print(f"[dim]  answer entity: {shown(result.answer_entity_id)} (Wikidata)[/]")
    for step in result.route:
        said = f"{step.mode} {step.outcome} (estimate {step.estimate:.2f}): {step.reason}"
        console.print(f"[dim]  route: {shown(said)}[/]")
    for fact in result.facts[:3]:
        qualifiers = f"; {fact.qualifiers}" if fact.qualifiers else ""
        said = (
            f"statement {fact.statement_id}: {fact.subject_label or fact.subject} ({fact.subject}) — "
            f"{fact.property_label or fact.property} ({fact.property}) — {fact.value}{qualifiers}  "
            f"[{fact.rank}]"
        )
        console.print(f"[dim]  {shown(said)}[/]")
    if result.table is not None:
        print_table(result.table)
    if result.refinement:
        print_refinement(result)
    intent = result.intent
    best = [(link.mention.text, link.best) for link in result.links if link.best]
    links = ", ".join(f"{text} → {cand.entity_id} ({cand.label})" for text, cand in best)
    said = (
        f"intent: {intent.answer_type}; relation {intent.relation!r}; "
        f"properties {[p.property for p in intent.properties[:2]]}; years {intent.time.years}; "
        f"links: {links or '-'}"
    )
    console.print(f"[dim]{shown(said)}[/]")
    table = Table(show_lines=False, box=None, pad_edge=False)
    for column in ("#", "source", "score", "evidence", "provenance"):
        table.add_column(column, overflow="fold")
    support = set(result.supporting_evidence_ids)
    for i, e in enumerate(result.evidence, start=1):  # the top rows, and any row the answer was read from
        if i > evidence and e.evidence_id not in support:
            continue
        mark = "*" if e.evidence_id in support else ""
        text = e.text if len(e.text) <= 200 else e.text[:199] + "…"
        table.add_row(f"{i}{mark}", e.source_type, f"{e.score:.3f}", shown(text), shown(provenance_line(e)))
    console.print(table)
    if result.reading is not None:
        console.print(f"[dim]{shown(reading_line(result))}[/]")
    stages = ", ".join(f"{t.stage} {t.ms:.0f}" for t in result.timings)
    console.print(f"[dim]ms: {shown(stages)}   (* = supports the answer)[/]")


TABLE_ROWS_SHOWN = 12


def print_table(trace: TableSql) -> None:
    """The table the table-sql mode computed over (the chosen rows marked), the SQL and its result."""
    console.print(
        f"[dim]  table: {shown(trace.title)} ({trace.source}, {trace.total_rows} rows); "
        f"{shown(trace.operation)}[/]"
    )
    rows = trace.rows[:TABLE_ROWS_SHOWN]
    rows += [r for r in trace.rows[TABLE_ROWS_SHOWN:] if r.row_index in trace.selected]
    grid = Table(show_lines=False, box=None, pad_edge=False)
    grid.add_column("row", overflow="fold")
    for column in trace.columns:
        grid.add_column(shown(f"{column.header} ({column.type})"), overflow="fold")
    for row in rows:
        mark = "→" if row.row_index in trace.selected else ""
        cells = [shown(c.text if len(c.text) <= 40 else c.text[:39] + "…") for c in row.cells]
        grid.add_row(f"{mark}{row.row_index}", *cells)
    console.print(grid)
    if len(trace.rows) > len(rows):
        console.print(f"[dim]  … {trace.total_rows - len(rows)} more rows[/]")
    if trace.set_query is not None:
        console.print(
            f"[dim]  entity set: {shown(trace.set_query)}  params {shown(str(trace.set_params))}[/]"
        )
    params = f"  params {trace.params}" if trace.params else ""
    console.print(f"[dim]  SQL: {shown(trace.sql + params)}[/]")
    value = f"; value {trace.value}" if trace.value is not None else ""
    note = f"; {trace.note}" if trace.note else ""
    console.print(f"[dim]  rows returned: {shown(f'{trace.selected}{value}{note}')}[/]")
    if trace.test is not None:
        t = trace.test
        said = f"{t.name}, statistic {t.statistic:.4g}, p = {t.p_value:.3g}, n = {t.n}; {t.verdict}"
        console.print(f"[dim]  test: {shown(said)}[/]")


def print_refinement(result: QueryResult) -> None:
    """The graph-critic rounds as a short trace: what was walked, what came back, what the critic said."""
    verdict = "accepted by the critic" if result.validated else "not accepted: the most confident round"
    console.print(f"[dim]  refinement path ({len(result.refinement)} rounds; {verdict}):[/]")
    for r in result.refinement:
        walked = f" entities {', '.join(r.entities)}" if r.entities else ""
        walked += (
            f"; relations {', '.join(r.relations)}"
            if r.relations
            else ("; any relation" if r.entities else "")
        )
        # an accepted round shows why too when the critic said it (the LLM validator's score)
        said = (
            (f"accepted ({r.detail})" if r.detail else "accepted")
            if r.accepted
            else f"rejected: {r.feedback} ({r.detail})"
        )
        line = f"{r.round}. {r.module}{walked} → {r.answer} ({r.confidence:.2f}); {said}; {r.ms:.0f} ms"
        console.print(f"[dim]    {shown(line)}[/]")
        for path in r.paths[:3]:
            console.print(f"[dim]       path: {shown(path)}[/]")
        if r.note:
            console.print(f"[dim]       note: {shown(r.note)}[/]")


def reading_line(result: QueryResult) -> str:
    """What the LLM reader did: its outcome, what it first said and cited, and what it cost."""
    r = result.reading
    assert r is not None
    if r.outcome == "unavailable":
        return f"LLM reader unavailable, the candidate reader answered: {r.error}"
    said = f'; the model said "{r.raw_answer}" citing {r.cited}' if r.raw_answer is not None else ""
    error = f"; error: {r.error}" if r.error else ""
    further = (
        f" (rows 1-{r.further_from - 1} gave no sure answer: read on from row {r.further_from})"
        if r.further_from
        else ""
    )
    return (
        f"read by {r.model}: {r.outcome}{said}{further}; {r.shown} rows shown, {r.prompt_tokens} prompt + "
        f"{r.completion_tokens} completion tokens, {r.calls} call(s), {r.ms / 1000:.1f} s{error}"
    )
