"""Ingest throughput, each reader measured beside the raw speed of the engine under it, in one run.

    .venv/bin/python benchmarks/ingest.py [--ottqa DIR] [--copies N] [--workers N] [--out benchmarks/results]

Stages and their raw baselines (the bar: a stage runs at >= 50 % of its engine's raw speed):
- decompression: our threaded reader vs ``bz2.decompress`` of the same file;
- Wikidata on plain JSON: ``ingest_wikidata`` (``--workers`` processes) vs ``orjson.loads`` of every line;
- Wikidata on bz2: ``ingest_wikidata`` vs ``bz2.decompress`` (the bound for a compressed dump);
- block indexes, built once per compressed dump so its byte shards can seek: ``indexed_bzip2`` vs
  ``bz2.decompress``, ``rapidgzip`` vs ``gzip.decompress`` (a gzip copy of the same dump);
- Wikipedia: ``ingest_wikipedia`` (1 and 2 workers) vs mwparserfromhell ``parse(...).strip_code()``
  of every article's wikitext, single core;
- OTT-QA: ``ingest_ottqa`` (``--workers``) vs gzip + ``json.load`` of both files.
Inputs are the real samples, concatenated ``--copies`` times so that timings are not dominated by
start-up; the ratio is what the bar is about. The bz2 dump is also ingested as byte shards (one after
another, each seeking through the block index) and their union checked against the whole run's rows.
The machine's load average is saved beside the figures: the machine may be shared.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import os
import shlex
import shutil
import sys
import tempfile
import time
from pathlib import Path

import mwparserfromhell
import orjson
import polars as pl

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

from benchmarks_common import best_of, machine  # noqa: E402

from ingest.ottqa import OttqaIngestOptions, ingest_ottqa  # noqa: E402
from ingest.pipeline import IngestInputs, run_ingest  # noqa: E402
from ingest.seek_index import seek_index  # noqa: E402
from ingest.shard_plan import IngestOptions  # noqa: E402
from ingest.sources import ChunkStream  # noqa: E402
from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata  # noqa: E402
from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia  # noqa: E402
from ingest.wikipedia.xml_pages import iter_raw_pages, parse_page  # noqa: E402

SAMPLES = REPO / "data" / "samples"


def replicate_wikidata(copies: int, work: Path) -> tuple[Path, Path]:
    """The 100-item sample repeated ``copies`` times, as plain JSON and as bz2 (real lines, more of them)."""
    lines = [
        ln
        for ln in bz2.decompress(
            (SAMPLES / "wikidata" / "wikidata-sample-items.json.bz2").read_bytes()
        ).split(b"\n")
        if ln.strip() not in (b"[", b"]", b"")
    ]
    body = b"[\n" + b"\n".join(lines * copies) + b"\n]\n"
    plain, packed = work / "wikidata.json", work / "wikidata.json.bz2"
    plain.write_bytes(body)
    packed.write_bytes(bz2.compress(body, 9))
    return plain, packed


def replicate_wikipedia(copies: int, work: Path) -> tuple[Path, list[str]]:
    """Both sample XML dumps' pages repeated ``copies`` times inside one export, as bz2."""
    pages, texts = [], []
    for name in ("enwiki-2016-sample-pages-articles.xml.bz2", "enwiki-table-markup.xml.bz2"):
        stream = ChunkStream(SAMPLES / "wikipedia" / name)
        for raw in iter_raw_pages(stream, 1 << 30):
            pages.append(raw.xml)
            page = parse_page(raw)
            if page.namespace == 0 and page.redirect is None:
                texts.append(page.text)
    body = b"<mediawiki>\n" + b"\n".join(pages * copies) + b"\n</mediawiki>\n"
    path = work / "enwiki.xml.bz2"
    path.write_bytes(bz2.compress(body, 9))
    return path, texts * copies


def _row(stage: str, engine: str, raw_mb_s: float, ours_mb_s: float, **extra: float) -> dict:
    ratio = ours_mb_s / raw_mb_s
    rates = "  ".join(f"{k} {v:,.0f}" for k, v in extra.items())
    print(
        f"{stage:38s} raw {raw_mb_s:8.2f} MB/s  ours {ours_mb_s:8.2f} MB/s  ratio {ratio:5.2f}  {rates}",
        flush=True,
    )
    return {
        "stage": stage,
        "engine": engine,
        "raw_MB_s": round(raw_mb_s, 2),
        "ours_MB_s": round(ours_mb_s, 2),
        "ratio": round(ratio, 2),
        **extra,
    }


def _table_rows(folder: Path, table: str) -> list[str]:
    """Every row of a table's Parquet files as canonical JSON, sorted (a multiset of rows)."""
    return sorted(pl.read_parquet(folder / table).write_ndjson().splitlines())


def block_index_stages(
    args: argparse.Namespace, packed: Path, plain: Path, size: float, t_bz2: float, out: Path
) -> tuple[list[dict], dict]:
    """The per-file block indexes beside a full decompression, then the bz2 dump ingested as byte shards."""
    gzipped = packed.with_name("wikidata.json.gz")
    gzipped.write_bytes(gzip.compress(plain.read_bytes(), 6))
    t_gzip, _ = best_of(args.repeat, lambda: gzip.decompress(gzipped.read_bytes()))
    rows = []
    for path, engine, t_raw in ((packed, "bz2.decompress", t_bz2), (gzipped, "gzip.decompress", t_gzip)):
        folder = out.parent / f"index-{path.suffix[1:]}"

        def build(path: Path = path, folder: Path = folder) -> object:
            shutil.rmtree(folder, ignore_errors=True)
            return seek_index(path, "bench", folder, threads=args.workers)

        t_index, index = best_of(args.repeat, build)
        rows.append(
            _row(
                f"block index, {path.suffix[1:]} ({args.workers} threads)",
                engine,
                size / t_raw,
                size / t_index,
                checkpoints=index.checkpoints,  # type: ignore[union-attr]
            )
        )
    whole, sharded = out.parent / "shards-whole", out.parent / "shards"
    props = REPO / "data" / "wikidata-properties.tsv.gz"
    options = IngestOptions(wikidata=WikidataIngestOptions(workers=args.workers, max_error_rate=None))
    run_ingest(IngestInputs(wikidata=[packed]), whole, property_table=props, options=options)
    started = time.perf_counter()
    shard_bytes = -(-packed.stat().st_size // args.shards)
    report = run_ingest(
        IngestInputs(wikidata=[packed]),
        sharded,
        property_table=props,
        options=options,
        shard_bytes=shard_bytes,
    )
    seconds = time.perf_counter() - started
    identical = all(_table_rows(whole, t) == _table_rows(sharded, t) for t in ("entities", "statements"))
    shards = {
        "shards": len(report.outcomes),
        "seconds_total_with_index": round(seconds, 2),
        "seconds_per_shard": [round(o.summary.seconds, 2) for o in report.outcomes],
        "union_identical_to_one_shard": identical,
    }
    print(f"bz2 byte shards: {shards}", flush=True)
    return rows, shards


def run(args: argparse.Namespace) -> dict:
    os.environ["HQA_PROGRESS"] = "0"
    load_before = [round(x, 2) for x in os.getloadavg()]
    work = Path(tempfile.mkdtemp(prefix="hqa-bench-"))
    rows = []

    def add(stage: str, engine: str, raw_mb_s: float, ours_mb_s: float, **extra: float) -> None:
        rows.append(_row(stage, engine, raw_mb_s, ours_mb_s, **extra))

    plain, packed = replicate_wikidata(args.copies, work)
    size = plain.stat().st_size / 1e6
    t_bz2, _ = best_of(args.repeat, lambda: bz2.decompress(packed.read_bytes()))
    t_stream, _ = best_of(args.repeat, lambda: sum(len(c) for c in ChunkStream(packed)))
    add("bz2 decompression (threaded reader)", "bz2.decompress", size / t_bz2, size / t_stream)

    lines = [ln.rstrip(b",") for ln in plain.read_bytes().split(b"\n") if ln.strip() not in (b"[", b"]", b"")]

    def parse_all() -> None:
        for ln in lines:
            orjson.loads(ln)  # parsed and dropped, as the ingest drops each entity after extraction

    t_orjson, _ = best_of(args.repeat, parse_all)
    out = work / "out"
    options = WikidataIngestOptions(max_error_rate=None, workers=args.workers)
    t_plain, summary = best_of(args.repeat, lambda: ingest_wikidata(plain, out, options))
    add(
        "wikidata ingest, plain JSON",
        "orjson.loads",
        size / t_orjson,
        size / t_plain,
        entities_s=summary.records_written / t_plain,
        statements_s=summary.counts["statements"] / t_plain,
    )
    t_packed, summary = best_of(args.repeat, lambda: ingest_wikidata(packed, out, options))
    add(
        "wikidata ingest, bz2",
        "bz2.decompress",
        size / t_bz2,
        size / t_packed,
        entities_s=summary.records_written / t_packed,
        statements_s=summary.counts["statements"] / t_packed,
    )

    index_rows, shards = block_index_stages(args, packed, plain, size, t_bz2, out)
    rows += index_rows

    xml, texts = replicate_wikipedia(args.wiki_copies, work)
    wikitext_mb = sum(len(t.encode()) for t in texts) / 1e6
    t_mwp, _ = best_of(1, lambda: [mwparserfromhell.parse(t).strip_code() for t in texts])
    for workers in (1, 2):
        opts = WikipediaIngestOptions(workers=workers, max_error_rate=None)
        t_wiki, summary = best_of(1, lambda opts=opts: ingest_wikipedia(xml, out, opts))
        add(
            f"wikipedia ingest, {workers} worker(s)",
            "mwparserfromhell parse+strip",
            wikitext_mb / t_mwp,
            wikitext_mb / t_wiki,
            pages_s=summary.records_written / t_wiki,
            passages_s=summary.counts["passages"] / t_wiki,
            table_rows_s=summary.counts["table_rows"] / t_wiki,
        )

    release = args.ottqa or SAMPLES / "ottqa"
    files = [release / "tables.json.gz", release / "passages.json.gz"]
    unpacked_mb = sum(len(gzip.decompress(f.read_bytes())) for f in files) / 1e6

    def load_json() -> None:
        for f in files:
            with gzip.open(f, "rb") as fh:
                json.load(fh)

    t_json, _ = best_of(1, load_json)
    ottqa_options = OttqaIngestOptions(workers=args.workers)
    t_ottqa, summary = best_of(1, lambda: ingest_ottqa(release, out, ottqa_options))
    add(
        f"ottqa adapter ({'full release' if args.ottqa else 'bundled slice'})",
        "gzip + json.load",
        unpacked_mb / t_json,
        unpacked_mb / t_ottqa,
        records_s=summary.records_written / t_ottqa,
        table_rows_s=summary.counts["table_rows"] / t_ottqa,
    )
    return {
        "machine": machine(),
        "load_average_before": load_before,
        "load_average_after": [round(x, 2) for x in os.getloadavg()],
        "workers": args.workers,
        "command": "python " + shlex.join(sys.argv),
        "rows": rows,
        "bz2_byte_shards": shards,
        "inputs": {
            "wikidata_MB": round(size, 1),
            "wikitext_MB": round(wikitext_mb, 1),
            "ottqa_MB": round(unpacked_mb, 1),
        },
    }


def write_results(result: dict, out_dir: Path) -> Path:
    out_dir.mkdir(parents=True, exist_ok=True)
    (out_dir / "ingest.json").write_text(json.dumps(result, indent=2))
    m = result["machine"]
    lines = [
        "# Ingest throughput",
        "",
        f"Command: `{result['command']}`",
        "",
        f"Machine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu']}, Python {m['python']}.",
        f"Inputs: {result['inputs']} (real samples, repeated).",
        "",
        "| stage | raw engine | raw MB/s | ours MB/s | ratio | other rates (/s) |",
        "|---|---|---:|---:|---:|---|",
    ]
    for r in result["rows"]:
        extra = ", ".join(
            f"{k[:-2]} {v:,.0f}"
            for k, v in r.items()
            if k.endswith("_s") and k not in ("raw_MB_s", "ours_MB_s")
        )
        lines.append(
            f"| {r['stage']} | {r['engine']} | {r['raw_MB_s']} | {r['ours_MB_s']} | {r['ratio']} | {extra} |"
        )
    load = result["load_average_before"], result["load_average_after"]
    lines += [
        "",
        f"Parser processes (`--workers`): {result['workers']}. Load average (1, 5, 15 min) before the run "
        f"{load[0]}, after it {load[1]}: ratios are measured in the same run, so they survive load better "
        "than the MB/s figures.",
        "",
        f"bz2 dump as byte shards (block index built once, then each shard seeks to its range): "
        f"{result['bz2_byte_shards']}.",
    ]
    if result.get("equivalence"):
        lines += [
            "",
            "## Output before and after",
            "",
            "| ingest | table | rows before | rows after | identical |",
        ]
        lines += ["|---|---|---:|---:|---|"]
        for e in result["equivalence"]:
            lines.append(f"| {e['name']} | {e['table']} | {e['before']} | {e['after']} | {e['identical']} |")
    path = out_dir / "ingest.md"
    path.write_text("\n".join(lines) + "\n")
    return path


def compare_outputs(name: str, before: Path, after: Path) -> list[dict]:
    """Every table of two ingest folders compared as multisets of rows (sorted canonical JSON). Quarantine
    rows are compared without their excerpt text (it may hold bytes printed differently)."""
    found = []
    tables = sorted(p.name for p in before.iterdir() if p.is_dir() and not p.name.startswith("_"))
    for table in tables:
        columns = None
        if table == "quarantine":
            columns = [
                "source",
                "reader",
                "line",
                "byte_offset",
                "char_offset",
                "record_id",
                "error_type",
                "error",
            ]
        rows = [
            sorted(pl.read_parquet(folder / table, columns=columns).write_ndjson().splitlines())
            if list((folder / table).glob("*.parquet"))
            else []
            for folder in (before, after)
        ]
        found.append(
            {
                "name": name,
                "table": table,
                "before": len(rows[0]),
                "after": len(rows[1]),
                "identical": rows[0] == rows[1],
            }
        )
    return found


def main() -> None:
    parser = argparse.ArgumentParser(
        description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter
    )
    parser.add_argument("--ottqa", type=Path, help="OTT-QA release folder (default: the bundled slice)")
    parser.add_argument("--copies", type=int, default=5, help="times the Wikidata sample is repeated")
    parser.add_argument("--wiki-copies", type=int, default=2, help="times the Wikipedia samples are repeated")
    parser.add_argument("--repeat", type=int, default=2, help="best of N for the fast stages")
    parser.add_argument(
        "--workers", type=int, default=2, help="parser processes of the readers that take them"
    )
    parser.add_argument(
        "--compare",
        action="append",
        default=[],
        metavar="NAME=BEFORE:AFTER",
        help="also compare two ingest output folders row for row (e.g. made by the commits before and after)",
    )
    parser.add_argument("--shards", type=int, default=4, help="byte shards the bz2 Wikidata dump is cut into")
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = parser.parse_args()
    result = run(args)
    result["equivalence"] = []
    for spec in args.compare:
        name, _, folders = spec.partition("=")
        before, _, after = folders.partition(":")
        result["equivalence"] += compare_outputs(name, Path(before), Path(after))
    print(f"results: {write_results(result, args.out)}")


if __name__ == "__main__":
    main()
