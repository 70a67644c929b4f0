"""``python -m tests.fuzz``: see ``tests/fuzz/cli.py``."""

import sys

from tests.fuzz.cli import main

sys.exit(main())
