"""benchmarks/kg_set_questions.py: the committed multi-entity question set is what the script makes of
the sample dumps, and the script — the answer key — imports no project code."""

from __future__ import annotations

import ast
import json
import math
import subprocess
import sys
from collections import Counter

from tests.conftest import REPO, SAMPLES

SCRIPT = REPO / "benchmarks" / "kg_set_questions.py"
COMMITTED = REPO / "benchmarks" / "kg_set_questions" / "questions.jsonl"
KINDS = {"superlative", "ordinal", "count", "aggregate", "comparison", "variance", "distribution",
         "correlation", "variance test", "relationship"}  # fmt: skip


P_VALUE_REL_TOL = 1e-8
"""p-values come from SciPy over libm, whose last digits differ between CPUs; the script writes 10
significant digits, and a regenerated p-value must agree with the committed one to 8."""


def same_record(made: dict, committed: dict) -> bool:
    """Equal records: a float to ``P_VALUE_REL_TOL`` (never byte for byte), everything else exactly."""
    if made.keys() != committed.keys():
        return False
    for key, value in made.items():
        other = committed[key]
        if isinstance(value, float) or isinstance(other, float):
            if not math.isclose(value, other, rel_tol=P_VALUE_REL_TOL):
                return False
        elif value != other:
            return False
    return True


def test_the_committed_set_is_what_the_script_makes(tmp_path):
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
    made = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    committed = [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]
    assert len(made) == len(committed)
    differ = [(m, c) for m, c in zip(made, committed, strict=True) if not same_record(m, c)]
    assert not differ, differ[:3]
    kinds = Counter(record["type"] for record in made)
    assert set(kinds) == KINDS and sum(kinds.values()) >= 80


def test_the_answer_key_imports_no_project_code():
    tree = ast.parse(SCRIPT.read_text())
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m.split(".")[0] for m in modules} & {"schemas", "ingest", "index", "query", "dags"}


def test_a_float_is_compared_to_a_tolerance_not_byte_for_byte():
    """The two p-values a second machine wrote for kgset-0109 differ in their last digits: equal here."""
    record = {"id": "kgset-0109", "p_value": 0.0698464138919243}
    assert same_record({**record, "p_value": 0.06984641389192442}, record)
    assert not same_record({**record, "p_value": 0.0698465}, record)
    assert not same_record({**record, "answers": ["yes"]}, {**record, "answers": ["no"]})
