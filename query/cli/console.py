"""The one rich console the ``hqa`` commands print to, and ``shown`` for every piece of data it prints."""

import re
import sys

from rich.console import Console
from rich.markup import escape

# Piped output (CI logs, Airflow) gets a width that fits the tables instead of 80 columns.
console = Console(width=None if sys.stdout.isatty() else 140)
error_console = Console(stderr=True, width=None if sys.stderr.isatty() else 140)
"""Refusals and failures: on stderr, so a caller reading stdout (``--json``) gets only results."""

_UNPRINTABLE = re.compile(r"[\x00-\x1f\x7f-\x9f\u2028\u2029\ud800-\udfff]")
"""C0 and C1 control characters, the Unicode line and paragraph separators, lone surrogates."""


def shown(text: object) -> str:
    """``text`` (a question, an answer, evidence, a label: data) ready to sit inside rich markup.

    Data is printed as it is, never read as markup or as terminal control: "[red]" in a question stays
    "[red]" (and "[/]" would otherwise stop the command with a MarkupError), an escape sequence
    ("\\x1b[2J") or a carriage return does not recolour, clear or overwrite the terminal, and a lone
    surrogate, which no terminal encoding can write, does not crash the output. Such characters are shown
    as their Python escapes (``\\x1b``), so the user still sees that they are there.
    """
    visible = _UNPRINTABLE.sub(lambda m: m[0].encode("unicode_escape").decode("ascii"), str(text))
    return escape(visible)
