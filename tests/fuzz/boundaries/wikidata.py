"""Boundary 1: a Wikidata entity line among good ones, through ``ingest_wikidata``."""

from __future__ import annotations

import bz2
import json
import random
import tempfile
from pathlib import Path
from typing import Any

from tests.conftest import WIKIDATA_API, WIKIDATA_ITEMS
from tests.fuzz.harness import BoundaryReport, Finding, FuzzInput, RecordBoundary, interleave, read_tables
from tests.fuzz.mutators import JSON_DIALECT, dump_json, mutate_bytes, mutate_value


def dump_lines(path: Path) -> list[bytes]:
    """The entity lines of a sample dump, without the array brackets and trailing commas."""
    lines = bz2.decompress(path.read_bytes()).split(b"\n")
    return [ln.rstrip().rstrip(b",") for ln in lines if ln.strip() not in (b"[", b"]", b"")]


def unread_dump_line(data: bytes) -> bool:
    """Lines a Wikidata dump reader passes over: blank ones and array brackets (one trailing comma aside)."""
    data = data.strip()
    if data.endswith(b","):
        data = data[:-1]
    return data in (b"", b"[", b"]")


class WikidataBoundary(RecordBoundary):
    name = "wikidata"
    batch = 100
    good_count = 16

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata

        self._ingest = ingest_wikidata
        self._options = WikidataIngestOptions(workers=1, max_error_rate=None, max_line_bytes=1 << 20)
        items, api = dump_lines(WIKIDATA_ITEMS), dump_lines(WIKIDATA_API)
        self.good = (
            sorted(items, key=len)[: self.good_count // 2]
            + api[:: len(api) // (self.good_count // 2)][: self.good_count // 2]
        )
        good_ids = {json.loads(line)["id"] for line in self.good}
        self.seeds = [ln for ln in items + api if json.loads(ln)["id"] not in good_ids and len(ln) < 400_000]
        baseline = self.call([])
        self.good_entities = baseline["entities"]
        self.good_statements = {row["statement_id"]: row for row in baseline["statements"]}
        assert len(self.good_entities) == len(self.good) and not baseline["quarantine"]

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        seed = rng.choice(self.seeds)
        names: list[str] = []
        data = dump_json(rng, mutate_value(rng, json.loads(seed), names)) if rng.random() < 0.45 else seed
        if not names or rng.random() < 0.2:
            data = mutate_bytes(rng, data + (b"," if rng.random() < 0.8 else b""), JSON_DIALECT, names)
        return FuzzInput(index, f"entity {json.loads(seed)['id']}", names, data)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        order = interleave(rng, items, self.good)
        records = [self.good[i] + b"," if kind == "good" else items[i].data for kind, i in order]
        body = b"[\n" + b"\n".join(records) + b"\n]\n"
        owners: list[tuple[str, int] | None] = [None]  # physical line 1 is '['
        for slot, record in zip(order, records, strict=True):
            owners += [slot] * (record.count(b"\n") + 1)
        owners.append(None)  # ']'
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            dump = Path(tmp) / "fuzz-wikidata.json.bz2"
            dump.write_bytes(bz2.compress(body, 1))
            summary = self._ingest(dump, Path(tmp) / "out", self._options)
            tables = read_tables({o.table: o.path for o in summary.outputs})
        tables.update(owners=owners, lines=body.split(b"\n"), summary=summary)
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        owners, lines = result["owners"], result["lines"]
        quarantined_lines: set[int] = set()
        rejected: set[int] = set()
        for row in result["quarantine"]:
            line = row["line"]
            owner = owners[line - 1] if line is not None and 0 < line <= len(owners) else None
            item = items[owner[1]] if owner and owner[0] == "mut" else None
            if line is None or row["byte_offset"] is None or not row["error"]:
                report.add(Finding.of("violation", item, f"quarantined without its position: {row}"))
            elif owner is None or owner[0] == "good":
                report.add(Finding.of("violation", None, f"a good line was quarantined: {row}"))
            else:
                quarantined_lines.add(line)
                rejected.add(owner[1])
        entities = iter(result["entities"])
        readable: set[int] = set()
        for line_no, (owner, data) in enumerate(zip(owners, lines, strict=False), start=1):
            if line_no in quarantined_lines or unread_dump_line(data):
                continue
            row = next(entities, None)
            if row is None:
                report.add(Finding.of("violation", None, f"line {line_no}: no entity row"))
                return
            if owner is not None and owner[0] == "good":
                report.good_records_checked += 1
                if row != self.good_entities[owner[1]]:
                    report.add(Finding.of("violation", None, f"good entity changed: {row['id']}"))
            elif owner is not None:
                readable.add(owner[1])
        if next(entities, None) is not None:
            report.add(Finding.of("violation", None, "more entity rows than readable lines"))
        statements: dict[str, list[dict]] = {}
        for row in result["statements"]:
            statements.setdefault(row["statement_id"], []).append(row)
        for statement_id, row in self.good_statements.items():
            if row not in statements.get(statement_id, []):
                report.add(Finding.of("violation", None, f"good statement lost: {statement_id}"))
        for k in range(len(items)):
            if k in rejected or k in readable:
                report.count("rejected" if k in rejected else "parsed")
            else:
                report.skip("a blank line or an array bracket, which a dump reader passes over")
