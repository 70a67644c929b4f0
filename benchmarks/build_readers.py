"""The two ingest readers the issue holds to half their raw engine, timed beside it in the build benchmark.

``benchmarks/ingest.py`` measures every reader once, best of a few runs; here the two that were below the
bar (issue 34, part 7) are timed in interleaved rounds, raw engine then reader, round after round, so
that both see the same load on a shared machine, and summed over the rounds:
- Wikidata on plain JSON: ``ingest_wikidata`` (``workers`` processes) vs ``orjson.loads`` of every line
  of the same file (the sample dump repeated ``copies`` times), the raw engine on one core as there;
- OTT-QA adapter: ``ingest_ottqa`` (``workers`` processes) vs gzip + ``json.load`` of both release files.
"""

from __future__ import annotations

import bz2
import gzip
import json
import time
from collections.abc import Callable
from pathlib import Path

import orjson

from ingest.ottqa import OttqaIngestOptions, ingest_ottqa
from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata

SAMPLES = Path(__file__).resolve().parents[1] / "data" / "samples"
SAMPLE_DUMP = SAMPLES / "wikidata" / "wikidata-sample-items.json.bz2"


def _seconds(fn: Callable[[], object]) -> float:
    start = time.perf_counter()
    fn()
    return time.perf_counter() - start


def _interleaved(raw: Callable[[], object], ours: Callable[[], object], rounds: int) -> dict:
    """Seconds of ``raw`` and ``ours``, run one after the other ``rounds`` times, summed and per round."""
    per_round = []
    for _ in range(rounds):
        raw_s, ours_s = _seconds(raw), _seconds(ours)
        ratio = round(raw_s / ours_s, 3)
        per_round.append({"raw_s": round(raw_s, 2), "ours_s": round(ours_s, 2), "ratio": ratio})
    return {
        "raw_s": sum(r["raw_s"] for r in per_round),
        "ours_s": sum(r["ours_s"] for r in per_round),
        "rounds": per_round,
    }


def _row(stage: str, engine: str, megabytes: float, timing: dict, items: int, note: str) -> dict:
    rounds = len(timing["rounds"])
    return {
        "stage": stage,
        "engine": engine,
        "unit": "MB/s",
        "raw": round(megabytes * rounds / timing["raw_s"], 2),
        "ours": round(megabytes * rounds / timing["ours_s"], 2),
        "items": items,
        "note": f"{note}; {rounds} interleaved rounds {[r['ratio'] for r in timing['rounds']]}",
    }


def wikidata_plain(work: Path, copies: int, workers: int, rounds: int) -> dict:
    """The sample Wikidata dump repeated ``copies`` times as plain JSON: the reader vs ``orjson.loads``."""
    dump = bz2.decompress(SAMPLE_DUMP.read_bytes())
    lines = [ln for ln in dump.split(b"\n") if ln.strip() not in (b"[", b"]", b"")]
    plain = work / "wikidata-plain.json"
    plain.write_bytes(b"[\n" + b"\n".join(lines * copies) + b"\n]\n")
    entities = [ln.rstrip(b",") for ln in lines * copies]

    def parse_all() -> None:
        for line in entities:
            orjson.loads(line)  # parsed and dropped, as the reader drops each entity once extracted

    options = WikidataIngestOptions(max_error_rate=None, workers=workers)
    timing = _interleaved(parse_all, lambda: ingest_wikidata(plain, work / "wikidata-out", options), rounds)
    size = plain.stat().st_size / 1e6
    note = f"sample dump x{copies} ({size:.1f} MB), {workers} reader process(es), orjson on one core"
    stage, engine = "wikidata ingest, plain JSON", "orjson.loads of every line"
    return _row(stage, engine, size, timing, len(entities), note)


def ottqa_adapter(release: Path, work: Path, workers: int, rounds: int) -> dict:
    """The OTT-QA release through the adapter vs decompressing and ``json.load``-ing both its files."""
    files = [release / "tables.json.gz", release / "passages.json.gz"]
    megabytes = sum(len(gzip.decompress(f.read_bytes())) for f in files) / 1e6

    def load_json() -> None:
        for path in files:
            with gzip.open(path, "rb") as handle:
                json.load(handle)

    options = OttqaIngestOptions(workers=workers)
    counts: dict[str, int] = {}

    def adapter() -> None:
        counts["records"] = ingest_ottqa(release, work / "ottqa-out", options).records_written

    timing = _interleaved(load_json, adapter, rounds)
    note = f"{megabytes:.1f} MB unpacked, {workers} adapter process(es), json.load on one core"
    return _row("OTT-QA adapter", "gzip + json.load", megabytes, timing, counts["records"], note)
