"""The one rich console the ``hqa`` commands print to."""

import sys

from rich.console import Console

# Piped output (CI logs, Airflow) gets a width that fits the tables instead of 80 columns.
console = Console(width=None if sys.stdout.isatty() else 140)
