"""The ``hqa`` command line: thin argument parsing over the library functions the DAGs call too."""

from __future__ import annotations

import argparse
import logging
import sys
from pathlib import Path

from query.cli.ask import add_answer, add_ask, cmd_answer, cmd_ask
from query.cli.eval import add_eval, cmd_eval
from query.cli.index import (
    add_build,
    add_index,
    add_info,
    add_verify,
    cmd_build,
    cmd_index,
    cmd_info,
    cmd_verify,
)
from query.cli.ingest import add_ingest, cmd_ingest
from query.cli.models import add_models, cmd_models
from query.cli.serve import add_serve, cmd_serve
from query.cli.sync import add_sync, cmd_sync
from schemas.settings import HqaSettings


def build_parser() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(prog="hqa", description="Hybrid QA over Wikipedia and Wikidata")
    parser.add_argument("--config", type=Path, help="settings file (TOML or YAML)")
    parser.add_argument("--state-dir", type=Path, help="where generated data goes (default .state/)")
    parser.add_argument("-v", "--verbose", action="store_true")
    sub = parser.add_subparsers(dest="command", required=True)
    add_ingest(sub)
    add_build(sub)
    add_info(sub)
    add_verify(sub)
    add_index(sub)
    add_sync(sub)
    add_ask(sub)
    add_answer(sub)
    add_eval(sub)
    add_models(sub)
    add_serve(sub)
    return parser


def main(argv: list[str] | None = None) -> int:
    argv = sys.argv[1:] if argv is None else list(argv)
    args = build_parser().parse_args(argv)
    args.argv = argv  # reports record the command that made them
    logging.basicConfig(
        level=logging.INFO if args.verbose else logging.WARNING,
        format="%(asctime)s %(levelname)s %(name)s: %(message)s",
    )
    settings = HqaSettings.load(
        args.config,
        state_dir=args.state_dir,
        language=getattr(args, "language", None),
        workers=getattr(args, "workers", None),
        max_error_rate=getattr(args, "max_error_rate", None),
    )
    if args.command == "ingest":
        return cmd_ingest(args, settings)
    if args.command == "build":
        return cmd_build(args, settings)
    if args.command == "info":
        return cmd_info(args, settings)
    if args.command == "verify":
        return cmd_verify(args, settings)
    if args.command == "index":
        return cmd_index(args, settings)
    if args.command == "sync":
        return cmd_sync(args, settings)
    if args.command == "ask":
        return cmd_ask(args, settings)
    if args.command == "answer":
        return cmd_answer(args, settings)
    if args.command == "eval":
        return cmd_eval(args, settings)
    if args.command == "models":
        return cmd_models(args, settings)
    if args.command == "serve":
        return cmd_serve(args, settings)
    raise AssertionError(f"unhandled command {args.command}")
