"""One bare state-exchange step in a process of its own, with the code ``PYTHONPATH`` names first.

    PYTHONPATH=CHECKOUT python benchmarks/scale/exchange_step.py NAME

Settings come from the environment as on a worker (``HQA_STATE_DIR`` the scratch,
``HQA_REMOTE__STATE_URL``, ``HQA_REMOTE__ENDPOINT``, the checkpoint settings). The step pulls the
state's ``ingest/probe`` folder, writes one small file there and pushes it: the smallest step a rebuild
has, so its seconds are the exchange's own (reading the change log, one blob and one record written).
The exchange logs its line to the output; a last line of JSON gives the step's seconds alone, without
the interpreter's start and imports. Nothing here inserts a path: it measures whichever checkout
``PYTHONPATH`` names (``exchange_run.py`` runs the code before checkpoints and this one's).
"""

from __future__ import annotations

import json
import logging
import sys
import time


def main(argv: list[str]) -> int:
    (name,) = argv
    logging.basicConfig(level=logging.INFO, format="%(asctime)s %(name)s %(levelname)s %(message)s")
    from index.state_exchange import StateExchange
    from schemas.settings import HqaSettings

    settings = HqaSettings()
    exchange = StateExchange.from_settings(settings)
    if exchange is None:
        raise SystemExit("HQA_REMOTE__STATE_URL is not set: there is no exchange to measure")
    folder = settings.ingest_dir / "probe"
    started = time.perf_counter()
    with exchange.step(f"probe {name}", exchange.scope([folder])):
        folder.mkdir(parents=True, exist_ok=True)
        (folder / f"{name}.txt").write_text(name)
    print(json.dumps({"seconds": round(time.perf_counter() - started, 4)}), flush=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
