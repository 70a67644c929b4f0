"""Every OTT-QA sample question (data/samples/ottqa/dev.json) through ``Engine.ask`` with the candidate
reader, one JSON line each: the answer, whether it is a refusal, the mode and the answering route step.

    PYTHONPATH=<checkout> python docs/experiments/2026-11-27-answer-guard/ask_ottqa_sample.py \
        --index .state/indexes --out OUT.jsonl

Run once with the code before the change and once after (same index version); ``compare.py`` reads both.
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

from query.config import EngineConfig
from query.engine import Engine

REPO = Path(__file__).resolve().parents[3]


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument("--out", type=Path, required=True)
    parser.add_argument("--questions", type=Path, default=REPO / "data" / "samples" / "ottqa" / "dev.json")
    args = parser.parse_args()
    questions = json.loads(args.questions.read_text())
    with Engine.open(args.index, EngineConfig(reader="candidates")) as engine, args.out.open("w") as out:
        for q in questions:
            r = engine.ask(q["question"])
            row = {
                "id": q["question_id"],
                "q": q["question"],
                "gold": q["answer-text"],
                "answer": r.answer,
                "unknown": r.unknown,
                "mode": r.mode,
                "why": [s.reason for s in r.route if s.outcome == "answered"],
            }
            out.write(json.dumps(row) + "\n")


if __name__ == "__main__":
    main()
