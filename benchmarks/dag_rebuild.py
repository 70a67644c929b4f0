"""What running the rebuild through Airflow costs beside running the same steps in one process.

    .venv/bin/python benchmarks/dag_rebuild.py [--work DIR] [--out benchmarks/results]

On the bundled sample dumps, each in a fresh state folder sharing one embedding cache (filled by a
warm-up build first, so embedding, which both paths share unchanged, does not drown the comparison):
- ``hqa build --samples`` (the in-process baseline) and its re-run with nothing changed;
- ``airflow dags test hqa_index_rebuild`` (SQLite, in-process task runner) and its unchanged re-run.
The ratio is baseline seconds / Airflow seconds: the share of in-process speed the DAG keeps.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import tempfile
from pathlib import Path

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import machine, run_command  # noqa: E402

BIN = Path(sys.executable).parent


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--work", type=Path, help="scratch folder (default: a temporary one)")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    work = args.work or Path(tempfile.mkdtemp(prefix="hqa-dag-bench-"))
    base = {**os.environ, "HF_HUB_OFFLINE": "1", "TRANSFORMERS_OFFLINE": "1", "HQA_PROGRESS": "0"}
    base["HQA_EMBEDDING_CACHE"] = str(work / "embeddings")
    hqa = [str(BIN / "hqa"), "build", "--samples"]

    warmup = run_command(hqa, {**base, "HQA_STATE_DIR": str(work / "warmup")}, REPO)
    cli_env = {**base, "HQA_STATE_DIR": str(work / "cli")}
    cli, cli_again = run_command(hqa, cli_env, REPO), run_command(hqa, cli_env, REPO)

    airflow_env = {
        **base,
        "HQA_STATE_DIR": str(work / "dag"),
        "AIRFLOW_HOME": str(work / "airflow"),
        "AIRFLOW__CORE__DAGS_FOLDER": str(REPO / "dags"),
        "AIRFLOW__CORE__LOAD_EXAMPLES": "False",
    }
    run_command([str(BIN / "airflow"), "db", "migrate"], airflow_env, REPO)
    dag_cmd = [str(BIN / "airflow"), "dags", "test", "hqa_index_rebuild"]
    dag, dag_again = run_command(dag_cmd, airflow_env, REPO), run_command(dag_cmd, airflow_env, REPO)
    report = json.loads((work / "dag" / "reports" / "rebuild-latest.json").read_text())
    assert report["up_to_date"], "the unchanged DAG re-run rebuilt something"

    rows = [
        ("full rebuild, warm embedding cache", cli, dag),
        ("re-run, nothing changed", cli_again, dag_again),
    ]
    result = {
        "command": "benchmarks/dag_rebuild.py",
        "machine": machine(),
        "warmup_seconds": round(warmup, 1),
        "rows": [
            {"case": c, "hqa_build_s": round(a, 1), "airflow_s": round(b, 1), "ratio": round(a / b, 2)}
            for c, a, b in rows
        ],
    }
    lines = [
        "# Rebuild through Airflow vs in process (bundled samples)",
        "",
        f"Command: `.venv/bin/python {result['command']}`  ",
        f"Machine: {result['machine']}  ",
        f"Warm-up build (fills the shared embedding cache): {result['warmup_seconds']} s",
        "",
        "| case | `hqa build --samples` s | `airflow dags test hqa_index_rebuild` s | ratio |",
        "|---|--:|--:|--:|",
        *[f"| {r['case']} | {r['hqa_build_s']} | {r['airflow_s']} | {r['ratio']} |" for r in result["rows"]],
        "",
        "Both include process start-up (imports of torch, LanceDB, Kùzu, Airflow); the Airflow column",
        "also parses the DAG files, syncs them to the SQLite metadata DB and runs each task via the SDK.",
    ]
    args.out.mkdir(parents=True, exist_ok=True)
    (args.out / "dag_rebuild.json").write_text(json.dumps(result, indent=2))
    (args.out / "dag_rebuild.md").write_text("\n".join(lines) + "\n")
    print("\n".join(lines))
    if args.work is None:
        shutil.rmtree(work, ignore_errors=True)


if __name__ == "__main__":
    main()
