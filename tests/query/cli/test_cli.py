"""The ``hqa`` command line, run as a user would run it."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from pathlib import Path

import polars as pl

from tests.conftest import REPO


def test_ingest_samples_prints_a_summary_and_writes_every_table(tmp_path: Path) -> None:
    env = {**os.environ, "HQA_PROGRESS": "0", "HQA_STATE_DIR": str(tmp_path / "state"), "COLUMNS": "200"}
    result = subprocess.run(
        [sys.executable, "-m", "query.cli", "ingest", "--samples"],
        cwd=REPO,
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
        check=False,
    )
    assert result.returncode == 0, result.stderr
    assert "Ingest summary" in result.stdout and "quarantined" in result.stdout
    out = tmp_path / "state" / "ingest"
    for table in (
        "entities",
        "statements",
        "properties",
        "pages",
        "passages",
        "infobox_fields",
        "table_rows",
        "links",
        "quarantine",
    ):
        assert list((out / table).glob("*.parquet")), table
    runs = [json.loads(p.read_text()) for p in (out / "_runs").glob("*.json")]
    assert {r["reader"] for r in runs} == {"wikidata", "wikipedia", "ottqa"}
    assert sum(r["quarantined"] for r in runs) == 0  # the real samples are clean
    assert pl.read_parquet(out / "statements" / "wikidata-sample-items.all.parquet").height == 12_599
    assert pl.read_parquet(out / "dangling_references.parquet").height > 0


def test_bad_arguments_are_reported(tmp_path: Path) -> None:
    result = subprocess.run(
        [sys.executable, "-m", "query.cli", "ingest", "--shard", "rows:1:2", "--out", str(tmp_path)],
        cwd=REPO,
        capture_output=True,
        text=True,
        timeout=120,
        check=False,
    )
    assert result.returncode != 0
    assert "shard must look like" in result.stderr


def test_models_names_the_extra_that_installs_a_missing_model(tmp_path: Path, monkeypatch, capsys) -> None:
    """`make demo` installs only the default model; `hqa models` must show the pip command for the others
    whole: "[models-extra]" printed through rich would otherwise vanish as a markup tag."""
    from dataclasses import replace

    from query.cli.console import console
    from query.cli.main import main
    from query.llm import bundled

    model = bundled.BUNDLED_MODELS["qwen2.5-coder-0.5b-instruct"]
    missing = replace(model, parts=(("hqa_not_installed_part1", "data/part01.bin"),), distributions=("x==1",))
    monkeypatch.setitem(bundled.BUNDLED_MODELS, model.name, missing)
    monkeypatch.setattr(console, "width", 600)  # one line a row: the cell is not folded
    assert main(["--state-dir", str(tmp_path), "models"]) == 0
    out = capsys.readouterr().out
    assert f"-e '.[{model.extra}]'" in out and model.extra == "models-extra"


def test_build_reports_up_to_date_and_info_lists_versions(sample_index, sample_ingest, capsys) -> None:
    from query.cli.main import main

    settings, _ = sample_index
    state = ["--state-dir", str(settings.state_dir)]
    build = [*state, "build", "--skip-ingest", "--out", str(sample_ingest.out_dir)]
    assert main(build) == 0  # builds if another test left a version made with other settings current
    capsys.readouterr()
    assert main(build) == 0
    assert "is up to date with the ingest output" in capsys.readouterr().out
    assert main([*state, "info"]) == 0
    out = capsys.readouterr().out
    assert "Index versions under" in out and "evidence_kg" in out and "wordllama-l2-256" in out


def test_ask_reads_with_the_llm_and_says_what_the_model_did(
    sample_index, model_cache, tmp_path, capsys
) -> None:
    from query.cli.main import main

    _, result = sample_index
    config = tmp_path / "engine.toml"
    config.write_text(
        f'reader = "llm"\n[llm]\nbackend = "qwen2.5-coder-0.5b-instruct"\ncache_dir = "{model_cache}"\n'
    )
    ask = ["ask", "--index", str(result.version_dir), "--engine-config", str(config)]
    assert main([*ask, "What was the name of Aristotle's father?"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "Nicomachus" in out and "(llm:qwen2.5-coder-0.5b-instruct)" in out
    assert "read by qwen2.5-coder-0.5b-instruct: supported" in out and "prompt +" in out
    assert main([*ask, "--reader", "candidates", "What was the name of Aristotle's father?"]) == 0
    out = " ".join(capsys.readouterr().out.split())
    assert "(candidates)" in out and "read by" not in out


def test_ask_shows_a_row_the_answer_was_read_from_below_the_top_rows_and_the_further_read(
    sample_index, capsys
) -> None:
    from query import Engine, EngineConfig
    from query.cli.ask import print_result
    from schemas.query import LlmReading

    _, built = sample_index
    with Engine.open(built.version_dir, EngineConfig(reader="candidates")) as engine:
        result = engine.pipeline.answer(engine.understand("What was the name of Aristotle's father?"))
    assert len(result.evidence) >= 9
    ninth = result.evidence[8]
    reading = LlmReading(model="m", outcome="supported", raw_answer="x", cited=[9], shown=16, further_from=9)
    read_on = result.model_copy(update={"supporting_evidence_ids": [ninth.evidence_id], "reading": reading})
    print_result(read_on, 3)
    out = capsys.readouterr().out
    numbered = [line.split()[0] for line in out.splitlines() if line[:1].isdigit()]
    assert numbered[:3] == ["1", "2", "3"] and "9*" in numbered and "4" not in numbered
    said = " ".join(out.split())
    assert "rows 1-8 gave no sure answer: read on from row 9" in said and "16 rows shown" in said


def test_sync_pushes_a_version_and_pulls_it_once_over_s3(sample_index, s3_bucket, tmp_path: Path) -> None:
    """`hqa sync --push` on the build host, then `hqa sync` on an empty node twice: the second downloads
    nothing. The remote's endpoint comes from the environment, its credentials from the AWS variables."""
    settings, _ = sample_index
    env = {**os.environ, "HQA_PROGRESS": "0", "COLUMNS": "200", "HQA_REMOTE__ENDPOINT": s3_bucket.endpoint}
    remote = ["--remote", s3_bucket.url("cli")]

    def hqa(state: Path, *args: str) -> subprocess.CompletedProcess:
        command = [sys.executable, "-m", "query.cli", "--state-dir", str(state), "sync", *args]
        return subprocess.run(command, cwd=REPO, env=env, capture_output=True, text=True, timeout=300)

    # what is current now: other tests of the session may have published after the fixture's build
    version = (settings.index_dir / "current").resolve()
    pushed = hqa(settings.state_dir, *remote, "--push")
    files = len(json.loads((version / "manifest.json").read_text())["files"]) + 1  # + manifest
    assert pushed.returncode == 0, pushed.stderr
    assert f"{version.name}: {files:,} files" in pushed.stdout and "uploaded at" in pushed.stdout
    node = tmp_path / "node"
    pulled = hqa(node, *remote)
    assert pulled.returncode == 0, pulled.stderr
    assert f"downloaded {files:,} files" in pulled.stdout and "now current" in pulled.stdout
    assert (node / "indexes" / "current").resolve().name == version.name
    again = hqa(node, *remote)
    assert again.returncode == 0, again.stderr
    assert "already here, nothing downloaded; was current already" in again.stdout
    unset = hqa(node)
    assert unset.returncode == 2 and "No remote" in unset.stderr


def test_ask_prints_the_answer_as_a_name_and_its_entity_id_apart(sample_index, capsys) -> None:
    """Issue 35: a name never carries an id. The id is provenance, printed on its own line."""
    from query import Engine, EngineConfig
    from query.cli.ask import print_result

    _, built = sample_index
    with Engine.open(built.version_dir, EngineConfig(reader="candidates")) as engine:
        result = engine.ask("Is Bonn or Kiel more populous?")
    assert result.answer_entity_id and result.answer_entity_id.startswith("Q"), result
    print_result(result, 3)
    lines = capsys.readouterr().out.splitlines()
    answer = next(line for line in lines if line.startswith("A: "))
    assert result.answer in answer and result.answer_entity_id not in answer
    assert f"answer entity: {result.answer_entity_id} (Wikidata)" in " ".join(lines)
