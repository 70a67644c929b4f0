"""``hqa serve``: the engine over HTTP (``query.serve``), on 127.0.0.1 unless told otherwise and given
a token (from ``--token-file`` or ``HQA_SERVE_TOKEN``, never from a flag's value)."""

from __future__ import annotations

import argparse
import json
import sys
from pathlib import Path

from query.cli.ask import add_reader_options, engine_config
from query.cli.console import error_console, shown
from schemas.settings import HqaSettings


def add_serve(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("serve", help="answer over HTTP: JSON API, event stream and the evidence page")
    p.add_argument("--index", type=Path, help="index root (default <state_dir>/indexes); follows current")
    p.add_argument("--engine-config", type=Path, help="engine config (TOML/YAML)")
    add_reader_options(p)
    p.add_argument("--host", default="127.0.0.1", help="address to bind (default 127.0.0.1)")
    p.add_argument("--port", type=int, default=8000)
    p.add_argument(
        "--token-file", type=Path, help=f"file whose first line is the bearer token (or set {_env()})"
    )
    p.add_argument("--llm-slots", type=int, help="questions the LLM reads at once (default 1)")
    p.add_argument("--llm-queue", type=int, help="questions that may wait for the LLM, then 429 (default 4)")
    p.add_argument("--fast-slots", type=int, help="candidate-reader questions at once (default 2)")
    p.add_argument("--fast-queue", type=int, help="candidate-reader questions that may wait (default 16)")
    p.add_argument("--deadline", type=float, help="seconds a request may take unless it asks less (60)")
    p.add_argument("--max-question-chars", type=int, help="longer questions get 413 (default 1000)")
    p.add_argument("--max-batch", type=int, help="questions one /v1/batch may carry (default 16)")
    p.add_argument("--cors-origin", action="append", default=[], help="allow this origin (repeatable)")
    p.add_argument(
        "--malloc-arenas",
        type=int,
        help="glibc malloc arenas (default 2: flat RSS across versions; 0 = glibc's)",
    )
    p.add_argument("--openapi", type=Path, help="write the OpenAPI document to this file and exit")


def _env() -> str:
    from query.serve.settings import TOKEN_ENV

    return TOKEN_ENV


def serve_settings(args: argparse.Namespace):
    from query.serve.settings import ServeSettings, read_token

    given = {
        "llm_slots": args.llm_slots,
        "llm_queue": args.llm_queue,
        "fast_slots": args.fast_slots,
        "fast_queue": args.fast_queue,
        "deadline_s": args.deadline,
        "max_question_chars": args.max_question_chars,
        "max_batch": args.max_batch,
        "malloc_arenas": args.malloc_arenas,
    }
    return ServeSettings(
        host=args.host,
        port=args.port,
        token=read_token(args.token_file),
        cors_origins=args.cors_origin,
        **{k: v for k, v in given.items() if v is not None},
    )


def cmd_serve(args: argparse.Namespace, settings: HqaSettings) -> int:
    import uvicorn

    from query.live import LiveEngine
    from query.serve import create_app
    from query.serve.arenas import cap_malloc_arenas

    try:
        serve = serve_settings(args)
    except (ValueError, OSError) as exc:  # pydantic's ValidationError is a ValueError
        error_console.print(f"[red]hqa serve: refused[/red] {shown(exc)}", highlight=False, soft_wrap=True)
        return 2
    cap_malloc_arenas(serve.malloc_arenas)  # before the engine's threads start
    config = engine_config(args, settings)
    root = args.index or settings.index_dir
    app = create_app(lambda: LiveEngine(root, config, state_dir=settings.state_dir), config.reader, serve)
    if args.openapi is not None:
        args.openapi.write_text(json.dumps(app.openapi(), indent=2, sort_keys=True) + "\n", encoding="utf-8")
        print(f"wrote {args.openapi}", file=sys.stderr)
        return 0
    uvicorn.run(app, host=serve.host, port=serve.port, log_level="info" if args.verbose else "warning")
    return 0
