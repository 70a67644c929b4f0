"""benchmarks/kg_set_questions.py: the committed multi-entity question set is what the script makes of
the sample dumps, and the script — the answer key — imports no project code."""

from __future__ import annotations

import ast
import json
import subprocess
import sys
from collections import Counter

from tests.conftest import REPO, SAMPLES

SCRIPT = REPO / "benchmarks" / "kg_set_questions.py"
COMMITTED = REPO / "benchmarks" / "kg_set_questions" / "questions.jsonl"
KINDS = {"superlative", "ordinal", "count", "aggregate", "comparison", "variance", "distribution",
         "correlation", "variance test", "relationship"}  # fmt: skip


def test_the_committed_set_is_regenerated_byte_for_byte(tmp_path):
    out = tmp_path / "questions.jsonl"
    dumps = sorted((SAMPLES / "wikidata").glob("*.json.bz2"))
    command = [
        sys.executable,
        str(SCRIPT),
        *(a for d in dumps for a in ("--dump", str(d))),
        "--out",
        str(out),
    ]
    subprocess.run(command, check=True, capture_output=True, cwd=REPO)
    assert out.read_bytes() == COMMITTED.read_bytes()
    kinds = Counter(json.loads(line)["type"] for line in out.read_text().splitlines())
    assert set(kinds) == KINDS and sum(kinds.values()) >= 80


def test_the_answer_key_imports_no_project_code():
    tree = ast.parse(SCRIPT.read_text())
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m.split(".")[0] for m in modules} & {"schemas", "ingest", "index", "query", "dags"}
