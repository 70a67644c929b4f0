"""``python -m query.cli``: the same as the ``hqa`` command."""

import sys

from query.cli.main import main

sys.exit(main())
