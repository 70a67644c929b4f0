"""What every graph-critic benchmark shares: the fixed sample of questions and its two folds, per-question
rows that resume, and the evidence columns (Hit@1, Hit@5, MRR@5).

``graph_critic_llm.py`` (maintained) and the graph-critic studies under ``docs/experiments/`` draw the same
sample (``--sample``, ``--seed``) and split it into the same tuning and report folds, so their rows can be
compared question by question.
"""

from __future__ import annotations

import argparse
import hashlib
import json
from collections.abc import Callable
from pathlib import Path
from typing import Any

from ingest.progress import progress


def fold_of(question_id: str, seed: int, tune_share: float = 0.3) -> str:
    digest = hashlib.blake2b(f"{seed}:{question_id}".encode(), digest_size=8).digest()
    return "tune" if int.from_bytes(digest, "big") / 2**64 < tune_share else "report"


def resumed_rows(path: Path, questions: list, label: str, answer: Callable[[Any], dict]) -> dict[str, dict]:
    """Each question's row by id: from ``path`` (rows of an earlier, interrupted run), else ``answer(q)``,
    appended to ``path`` as soon as it is made, so a stopped run resumes where it stopped."""
    done = {r["id"]: r for r in map(json.loads, path.read_text().splitlines())} if path.is_file() else {}
    bar = progress(label, total=len(questions), unit="question")
    with open(path, "a") as out:
        for q in questions:
            if q.id not in done:
                done[q.id] = row = answer(q)
                out.write(json.dumps(row) + "\n")
                out.flush()
            bar.update(1)
    bar.close()
    return done


BENCHMARKS = {"ottqa": "OTT-QA dev", "kgqa": "the KG question set"}


def sample_arguments(parser: argparse.ArgumentParser) -> None:
    """The index and the fixed dev sample (``--sample``, ``--seed``) every graph-critic benchmark shares."""
    parser.add_argument("--index", type=Path, required=True)
    parser.add_argument(
        "--questions",
        type=Path,
        required=True,
        help="OTT-QA folder or dev.json; with --benchmark kgqa a question file (benchmarks/kg_questions)",
    )
    parser.add_argument("--benchmark", choices=sorted(BENCHMARKS), default="ottqa", help="question format")
    parser.add_argument("--sample", type=int, default=500)
    parser.add_argument("--seed", type=int, default=7)


def hits(ranks: list[int | None]) -> tuple[str, str, str]:
    n = len(ranks)
    if not n:
        return "-", "-", "-"
    hit1 = 100 * sum(r == 1 for r in ranks) / n
    hit5 = 100 * sum(r is not None and r <= 5 for r in ranks) / n
    mrr = sum(1 / r for r in ranks if r) / n
    return f"{hit1:.1f}", f"{hit5:.1f}", f"{mrr:.3f}"
