"""The ``hqa`` command line, every subcommand in one place: ingest, build, info, ask, answer, eval."""

from query.cli.main import main

__all__ = ["main"]
