"""The fuzzer in short: each parser boundary takes a few hundred mutated inputs without a crash or a
lost good record, and the harness itself catches a planted crash, a planted lost record and an error that
does not name its file (so a green run means something)."""

from __future__ import annotations

from pathlib import Path

import pytest

from tests.fuzz.boundaries import BOUNDARIES
from tests.fuzz.harness import input_rng, run_boundary

SEED = 2026
INPUTS = {"wikidata": 300, "wikitext": 300, "xml": 300, "ottqa": 300, "questions": 300, "config": 250}


@pytest.fixture(scope="module")
def work(tmp_path_factory: pytest.TempPathFactory) -> Path:
    return tmp_path_factory.mktemp("fuzz")


def _failures(report) -> list:
    return [f for f in report.findings if f.kind in ("crash", "violation")]


@pytest.mark.parametrize("name", list(INPUTS))
def test_mutated_inputs_are_parsed_or_rejected_and_good_records_kept(work: Path, name: str) -> None:
    report = run_boundary(BOUNDARIES[name](work), INPUTS[name], SEED)
    assert _failures(report) == []
    assert report.inputs == INPUTS[name]
    assert report.parsed + report.rejected + report.skipped + report.slow == report.inputs
    # the mutations neither break every input nor leave them all intact, and good records were compared
    assert report.parsed > 0 and report.rejected > 0
    assert report.good_records_checked > 0


def test_an_input_is_replayed_from_its_index_alone(work: Path) -> None:
    boundary = BOUNDARIES["questions"](work)
    first = [boundary.generate(input_rng(SEED, "questions", i), i) for i in range(30)]
    again = [boundary.generate(input_rng(SEED, "questions", i), i) for i in reversed(range(30))]
    assert [item.data for item in first] == [item.data for item in reversed(again)]
    assert len({item.data for item in first}) > 25 and all(item.mutations for item in first)


def test_a_planted_crash_is_pinned_on_the_inputs_that_cause_it(
    work: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    import ingest.wikidata.ingest as wikidata_ingest

    boundary = BOUNDARIES["wikidata"](work)  # its clean baseline is made before the plant
    good_ids = {row["id"] for row in boundary.good_entities}
    real_entity_rows = wikidata_ingest._entity_rows  # both decoders' rows pass through it

    def planted(payload: bytes, language: str, decode):
        row, statements = real_entity_rows(payload, language, decode)
        if row["id"] not in good_ids:
            raise RuntimeError("planted")
        return row, statements

    monkeypatch.setattr(wikidata_ingest, "_entity_rows", planted)
    report = run_boundary(boundary, 30, SEED)
    crashes = [f for f in report.findings if f.kind == "crash"]
    assert crashes and all(f.message == "RuntimeError: planted" and f.index is not None for f in crashes)
    assert report.parsed == 0 and report.rejected + len(crashes) + report.skipped == 30


def test_a_planted_lost_record_is_a_violation(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import query.batch.questions as questions

    real_entries = questions._jsonl_entries

    def planted(data: bytes):
        entries, blank = real_entries(data)
        return [e for e in entries if e.line != 3], blank

    monkeypatch.setattr(questions, "_jsonl_entries", planted)
    report = run_boundary(BOUNDARIES["questions"](work), 20, SEED)
    assert [f.message for f in report.findings if f.kind == "violation"][:1] == [
        "entries do not match the non-blank lines 1:1"
    ]


def test_a_config_error_without_its_path_is_a_violation(work: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import query.config

    boundary = BOUNDARIES["config"](work)

    def planted(path: Path, what: str = "settings") -> dict:
        raise ValueError("something is wrong somewhere")

    monkeypatch.setattr(query.config, "read_config_file", planted)
    report = run_boundary(boundary, 5, SEED)
    messages = [f.message for f in report.findings if f.kind == "violation"]
    assert len(messages) >= 5 and all("error without the path" in m for m in messages[:5])
