"""``hqa models``: the bundled LLMs — installed?, assembled?, checked — and assembling them ahead of use."""

from __future__ import annotations

import argparse

from rich.table import Table

from query.cli.console import console, shown
from schemas.settings import HqaSettings


def add_models(sub: argparse._SubParsersAction) -> None:
    p = sub.add_parser("models", help="list the bundled LLMs; --assemble builds them into the model cache")
    p.add_argument("names", nargs="*", help="models to assemble (default: every installed one)")
    p.add_argument("--assemble", action="store_true", help="assemble and checksum them now, not on first use")
    p.add_argument(
        "--distill",
        action="store_true",
        help="distil the static embedder (minilm-l6-m2v-256) from the bundled MiniLM into the embedding "
        "cache's models/ folder now, not at the first build that asks for it",
    )


def cmd_models(args: argparse.Namespace, settings: HqaSettings) -> int:
    if args.distill:
        return _distill(settings)
    from query.llm.bundled import BUNDLED_MODELS, ModelInstallError, model_path
    from query.llm.settings import LlmSettings

    cache = LlmSettings().in_state_dir(settings.state_dir).cache_dir
    unknown = [n for n in args.names if n not in BUNDLED_MODELS]
    if unknown:
        said = f"unknown models {unknown}; bundled: {', '.join(BUNDLED_MODELS)}"
        console.print(f"[red]{shown(said)}[/]")
        return 2
    table = Table(title=f"Bundled LLMs (cache {cache})")
    for column in ("model", "chat", "parts", "installed", "assembled", "licence"):
        table.add_column(column, overflow="fold")
    failed = 0
    for name, model in BUNDLED_MODELS.items():
        try:
            model.part_paths()
            installed = "yes"
        except ModelInstallError as exc:
            installed = shown(f"no: {exc}")  # the pip command's "[models-extra]" is not markup
        target = cache / model.file_name
        if args.assemble and installed == "yes" and (not args.names or name in args.names):
            with console.status(f"assembling {name}"):
                try:
                    model_path(name, cache)
                except ModelInstallError as exc:
                    failed += 1
                    console.print(f"[red]{shown(exc)}[/]")
        assembled = "yes (sha256 checked)" if target.is_file() else "no (on first use)"
        chat = "yes" if model.chat else "completion only"
        table.add_row(name, chat, str(len(model.parts)), installed, assembled, model.licence)
    console.print(table)
    return 1 if failed else 0


def _distill(settings: HqaSettings) -> int:
    """Make the distilled embedder where index builds look for it (once; a second call only reports)."""
    from index.build_stages import DISTILLED_MODELS
    from index.static_embedder import ensure_distilled_minilm, read_info

    with console.status("distilling the static embedder from MiniLM (a few minutes)"):
        path = ensure_distilled_minilm(settings.embedding_cache_dir / DISTILLED_MODELS)
    info = read_info(path)
    console.print(f"{info.model_name}: {info.dimension}-d, {path} (distilled in {info.seconds:.0f} s)")
    return 0
