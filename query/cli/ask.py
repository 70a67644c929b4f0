"""``hqa ask`` and ``hqa answer``: one question, readable or as JSON; a question file, into Parquet."""

from __future__ import annotations

import argparse
from pathlib import Path

from rich.table import Table

from query.cli.console import console
from schemas.query import QueryResult, ScoredEvidence
from schemas.settings import HqaSettings

LLM_CHOICES = ("none", "llama-cpp", "openai-compatible")


def add_ask(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("ask", help="answer questions against the current index, with the evidence")
    p.add_argument("questions", nargs="+", help="one or more questions")
    p.add_argument("--index", type=Path, help="index root or version (default <state_dir>/indexes)")
    p.add_argument("--engine-config", type=Path, help="engine config (TOML/YAML)")
    p.add_argument("--llm", choices=LLM_CHOICES, help="read the answer with an LLM backend")
    p.add_argument("--evidence", type=int, default=5, help="evidence rows to show (default 5)")
    p.add_argument("--json", action="store_true", help="print each result as one JSON line")


def add_answer(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("answer", help="answer a question file (JSONL or Parquet) into an answers Parquet")
    p.add_argument("--in", dest="questions", type=Path, required=True, help="questions .jsonl or .parquet")
    p.add_argument("--out", type=Path, required=True, help="answers .parquet")
    p.add_argument("--index", type=Path, help="index root or version (default <state_dir>/indexes)")
    p.add_argument("--chunk-size", type=int, help="questions per resumable part (default from settings)")
    p.add_argument("--k", type=int, default=30, help="evidence rows kept per answer")


def engine_config(args: argparse.Namespace, settings: HqaSettings):
    from query.config import EngineConfig

    overrides = {"llm": {"backend": args.llm}} if getattr(args, "llm", None) else {}
    return EngineConfig.load(args.engine_config or settings.engine_config, **overrides)


def cmd_ask(args: argparse.Namespace, settings: HqaSettings) -> int:
    from query.engine import Engine

    with console.status("opening the index and loading models"):
        engine = Engine.open(args.index or settings.index_dir, engine_config(args, settings), settings)
    with engine:
        for question in args.questions:
            result = engine.ask(question)
            if args.json:
                print(result.model_dump_json())
            else:
                print_result(result, args.evidence)
    return 0


def cmd_answer(args: argparse.Namespace, settings: HqaSettings) -> int:
    from query.batch.jobs import answer_file

    summary = answer_file(
        args.questions,
        args.out,
        args.index or settings.index_dir,
        args.chunk_size or settings.airflow.qa_chunk_size,
        k=args.k,
        settings=settings,
    )
    console.print(summary.model_dump_json(indent=2))
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
    answer = "[yellow]unknown[/]" if result.unknown else f"[bold green]{result.answer}[/]"
    entity = f" ({result.answer_entity_id})" if result.answer_entity_id else ""
    unit = f" [green]{result.unit}[/]" if result.unit and not result.unknown else ""
    console.print(f"\n[bold]Q:[/] {result.question}")
    console.print(
        f"[bold]A:[/] {answer}{unit}{entity}   confidence {result.confidence:.2f}  "
        f"mode [bold]{result.mode}[/] ({result.reader})"
    )
    for step in result.route:
        console.print(
            f"[dim]  route: {step.mode} {step.outcome} (estimate {step.estimate:.2f}): {step.reason}[/]"
        )
    for fact in result.facts[:3]:
        qualifiers = f"; {fact.qualifiers}" if fact.qualifiers else ""
        console.print(
            f"[dim]  statement {fact.statement_id}: {fact.subject_label or fact.subject} ({fact.subject}) — "
            f"{fact.property_label or fact.property} ({fact.property}) — {fact.value}{qualifiers}  "
            f"[{fact.rank}][/]"
        )
    intent = result.intent
    best = [(link.mention.text, link.best) for link in result.links if link.best]
    links = ", ".join(f"{text} → {cand.entity_id} ({cand.label})" for text, cand in best)
    console.print(
        f"[dim]intent: {intent.answer_type}; relation {intent.relation!r}; "
        f"properties {[p.property for p in intent.properties[:2]]}; years {intent.time.years}; "
        f"links: {links or '-'}[/]"
    )
    table = Table(show_lines=False, box=None, pad_edge=False)
    for column in ("#", "source", "score", "evidence", "provenance"):
        table.add_column(column, overflow="fold")
    support = set(result.supporting_evidence_ids)
    for i, e in enumerate(result.evidence[:evidence], start=1):
        mark = "*" if e.evidence_id in support else ""
        text = e.text if len(e.text) <= 200 else e.text[:199] + "…"
        table.add_row(f"{i}{mark}", e.source_type, f"{e.score:.3f}", text, provenance_line(e))
    console.print(table)
    stages = ", ".join(f"{t.stage} {t.ms:.0f}" for t in result.timings)
    console.print(f"[dim]ms: {stages}   (* = supports the answer)[/]")
