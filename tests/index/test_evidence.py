"""Verbalized evidence from the real sample ingest: texts, ids, entity links, provenance, counts."""

from __future__ import annotations

import polars as pl
import pytest

from index.verbalize.common import evidence_id
from index.verbalize.text import windows
from index.verbalize.values import format_amount, format_time
from schemas import arrow_schema
from schemas.evidence import Evidence


@pytest.fixture(scope="module")
def evidence(sample_evidence) -> pl.DataFrame:
    out, _ = sample_evidence
    return pl.read_parquet(out / "*.parquet")


def test_files_carry_the_evidence_schema(sample_evidence):
    import pyarrow.parquet as pq

    _, stats = sample_evidence
    assert {s.table for s in stats} == {"statements", "passages", "table_rows", "infobox_fields", "entities"}
    for s in stats:
        assert pq.read_schema(s.output).remove_metadata() == arrow_schema(Evidence).remove_metadata()


def test_ids_are_content_hashes(evidence):
    sample = evidence.sample(200, seed=0)
    for source_type, text, ev_id in sample.select("source_type", "text", "evidence_id").iter_rows():
        assert ev_id == evidence_id(source_type, text)


def test_every_statement_is_written_skipped_or_a_duplicate(sample_evidence):
    _, stats = sample_evidence
    for s in stats:
        if s.table in {"statements", "table_rows", "infobox_fields"}:
            assert s.records == s.evidence + s.duplicates + sum(s.skipped.values()), s


def test_belgium_population_statement_with_its_qualifier(sample_ingest, evidence):
    statements = pl.read_parquet(sample_ingest.out_dir / "statements" / "*.parquet")
    population = statements.filter(
        (pl.col("subject") == "Q31") & (pl.col("property") == "P1082") & (pl.col("qualifiers").list.len() > 0)
    ).row(0, named=True)
    qualifier = population["qualifiers"][0]
    assert qualifier["property"] == "P585"  # point in time
    year = qualifier["value_time"].lstrip("+")[:4]
    amount = f"{int(population['value_amount']):,}"
    row = evidence.filter(pl.col("provenance").struct.field("statement_id") == population["statement_id"])
    assert row.height == 1
    text = row["text"][0]
    assert text.startswith(f"Belgium, population, {amount}, point in time: ")
    assert year in text
    assert row["entity_ids"][0].to_list()[0] == "Q31"
    assert row["source_type"][0] == "kg"


def test_infobox_field_names_page_template_and_links(evidence):
    row = evidence.filter(
        pl.col("text") == "Albert Einstein / Infobox scientist: Doctoral advisor: Alfred Kleiner"
    )
    assert row.height == 1
    assert "Alfred Kleiner" in row["link_targets"][0].to_list()
    provenance = row["provenance"][0]
    assert provenance["infobox_key"] == "doctoral_advisor"
    assert provenance["page_id"] is not None and provenance["revision_id"] is not None
    assert provenance["source"] == "enwiki-2016-sample-pages-articles.xml.bz2"


def test_table_rows_name_cells_by_header_with_context(sample_ingest, evidence):
    rows = pl.read_parquet(sample_ingest.out_dir / "table_rows" / "*.parquet")
    row = rows.filter(pl.col("cells").list.len() >= 3).row(0, named=True)
    found = evidence.filter(
        (pl.col("provenance").struct.field("table_id") == row["table_id"])
        & (pl.col("provenance").struct.field("row_index") == row["row_index"])
    )
    assert found.height == 1
    text = found["text"][0]
    assert text.startswith(row["page_title"] + " / ")
    for cell in row["cells"]:
        if cell["text"].strip():
            assert cell["text"].strip() in text
    header = next(c for c in row["cells"] if c["header"] and c["text"].strip())
    assert f"{header['header'].rstrip(':').strip()}: {header['text'].strip()}" in text


def test_long_passages_become_windows_that_keep_every_word(sample_ingest, evidence):
    passages = pl.read_parquet(sample_ingest.out_dir / "passages" / "*.parquet")
    long = passages.filter(pl.col("text").str.split(" ").list.len() > 300).row(0, named=True)
    found = evidence.filter(
        (pl.col("source_type") == "text")
        & (pl.col("provenance").struct.field("page_id") == long["page_id"])
        & (pl.col("provenance").struct.field("passage_order") == long["order"])
    ).sort(pl.col("provenance").struct.field("window"))
    assert found.height >= 3
    prefix = " / ".join([long["page_title"], *long["section_path"]]) + ": "
    bodies = [t.removeprefix(prefix) for t in found["text"]]
    assert all(t.startswith(prefix) for t in found["text"])
    assert all(len(b.split()) <= 100 for b in bodies)
    assert " ".join(bodies).split() == long["text"].split()


def test_window_split_prefers_sentence_ends():
    text = "One two three. Four five six. Seven eight nine ten eleven twelve thirteen."
    assert windows(text, 6) == [
        "One two three. Four five six.",
        "Seven eight nine ten eleven twelve",
        "thirteen.",
    ]


@pytest.mark.parametrize(
    ("time", "precision", "expected"),
    [
        ("+2015-01-01T00:00:00Z", 9, "2015"),
        ("+1879-03-14T00:00:00Z", 11, "14 March 1879"),
        ("+1879-03-00T00:00:00Z", 10, "March 1879"),
        ("+1870-00-00T00:00:00Z", 8, "1870s"),
        ("+1801-00-00T00:00:00Z", 7, "19th century"),
        ("-0044-00-00T00:00:00Z", 9, "44 BC"),
    ],
)
def test_dates_at_their_precision(time, precision, expected):
    year = int(time[:5]) if time[0] == "+" else -int(time[1:5])
    assert format_time(time, precision, year) == expected


def test_amounts_keep_the_dump_digits():
    assert format_amount("+11150516", 11150516.0) == "11,150,516"
    assert format_amount("-1.50", -1.5) == "-1.50"
    assert format_amount(None, 2.5) == "2.5"


def test_batches_and_the_on_disk_repeat_pass_do_not_change_the_evidence(
    sample_ingest, sample_names, sample_evidence, tmp_path
):
    """Tiny batches (names looked up per batch, windows and rows said per batch) and a repeat bound of
    ten ids (so repeats are found by DuckDB after writing) give the very same files."""
    import pyarrow.parquet as pq

    from index.evidence import ingest_files, verbalize_file

    out, stats = sample_evidence
    by_output = {s.output.rsplit("/", 1)[-1]: s for s in stats}
    for table, path in ingest_files(sample_ingest.out_dir):
        name = f"{table}.{path.name}"
        small = verbalize_file(
            table, path, tmp_path, sample_names, batch_rows=97, row_group_rows=50, seen_limit=10
        )
        assert pq.read_table(tmp_path / name).equals(pq.read_table(out / name)), name
        before = by_output[name]
        assert (small.records, small.evidence, small.duplicates, small.skipped) == (
            before.records,
            before.evidence,
            before.duplicates,
            before.skipped,
        ), name
    assert sum(s.duplicates for s in stats) > 0  # the sample has repeats for both ways to find


def test_frames_say_what_the_record_by_record_verbalizers_say(sample_ingest, sample_names, tmp_path):
    """The polars verbalizers of passages and table rows against the plain Python ones they replace."""
    from collections import Counter

    import pyarrow.parquet as pq

    from index.evidence import SOURCES
    from index.verbalize import frames, tables, text
    from index.verbalize.buffer import EvidenceBuffer

    for table, folder in (("passages", "passages"), ("table_rows", "table_rows")):
        for path in sorted((sample_ingest.out_dir / folder).glob("*.parquet")):
            batch = pq.read_table(path, columns=SOURCES[table].columns).combine_chunks().to_batches()[0]
            with sample_names.names_for_file(table, path, batch.num_rows, tmp_path / path.stem) as names:
                buffer = EvidenceBuffer(SOURCES[table].source_type, SOURCES[table].provenance)
                skipped: Counter = Counter()
                if table == "passages":
                    text.passage_batch(batch, names.lexicon(0, batch.num_rows), "src", 100, buffer)
                    said = frames.passage_frame(batch, names.titles(0, batch.num_rows), "src", 100)
                else:
                    tables.row_batch(batch, names.lexicon(0, batch.num_rows), "src", buffer, skipped)
                    said, empty = frames.row_frame(batch, names.titles(0, batch.num_rows), "src")
                    assert empty == skipped["row without text"]
            assert said.equals(buffer.table()), path


def test_the_first_row_skips_evidence_files_that_say_nothing(sample_evidence, tmp_path):
    """An ingest file can yield no evidence (items with only a name, a shard of redirects); the first
    evidence row (validation's smoke query) is then the first row of the first file that has one."""
    import shutil

    import pyarrow.parquet as pq

    from index import layout
    from index.duck import MemoryBudget, connect
    from index.evidence_reader import EvidenceReader, write_duplicates

    out, _ = sample_evidence
    evidence_dir = tmp_path / layout.EVIDENCE
    shutil.copytree(out, evidence_dir)
    files = sorted(evidence_dir.glob("*.parquet"))
    empty = pq.read_table(files[0]).slice(0, 0)
    pq.write_table(empty, evidence_dir / "aaa.empty.parquet")  # sorts before every other file
    with connect(MemoryBudget(memory_mb=256), tmp_path / "spill") as con:
        write_duplicates(evidence_dir, tmp_path / layout.EVIDENCE_DUPLICATES, con)
    expected = pq.read_table(files[0], columns=["evidence_id"]).column(0)[0].as_py()
    assert EvidenceReader(tmp_path).first(["evidence_id"]) == {"evidence_id": expected}
