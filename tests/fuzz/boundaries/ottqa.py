"""Boundary 4: an OTT-QA table or passage among good ones, through ``ingest_ottqa``."""

from __future__ import annotations

import gzip
import json
import random
import tempfile
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from tests.conftest import OTTQA
from tests.fuzz.harness import BoundaryReport, Finding, FuzzInput, RecordBoundary, interleave, read_tables
from tests.fuzz.mutators import JSON_DIALECT, dump_json, mutate_bytes, mutate_value


@dataclass
class Member:
    """A mutated member as it will sit in the document, and the keys a JSON parser reads from it alone."""

    item: FuzzInput
    file: str  # "tables" or "passages"
    keys: list[str] | None  # None: the member breaks the document

    @property
    def goes_last(self) -> bool:
        """A member that breaks the document, or repeats a key, gets the end of a file of its own."""
        return self.keys is None or len(set(self.keys)) != len(self.keys)


def member_keys(data: bytes) -> list[str] | None:
    """The keys ``data`` holds as members of an object, or None when it is not a well-formed member list."""
    pairs: list[list[tuple[str, Any]]] = []
    try:
        text = (b"{" + data + b"}").decode("utf-8", errors="surrogateescape")  # as the reader decodes
        json.loads(text, object_pairs_hook=lambda p: pairs.append(p) or dict(p))
    except (ValueError, RecursionError):
        return None
    keys = [key for key, _ in pairs[-1]] if pairs else []
    return keys or None


def _own_key(item: FuzzInput) -> str:
    """The key ``generate`` gave the member (what its quarantine row names, if it was read as a member)."""
    seed = item.seed_name.split(" ", 1)[1]
    if item.seed_name.startswith("table "):
        return f"Fuzz{item.index}_{seed}"
    return f"/wiki/Fuzz{item.index}_{seed.removeprefix('/wiki/')}"


class OttqaBoundary(RecordBoundary):
    name = "ottqa"
    batch = 40
    good_count = 6

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.ottqa import OttqaIngestOptions, ingest_ottqa

        self._ingest = ingest_ottqa
        self._options = OttqaIngestOptions(max_error_rate=None)
        self._members: dict[int, Member] = {}
        with gzip.open(OTTQA / "tables.json.gz", "rb") as t, gzip.open(OTTQA / "passages.json.gz", "rb") as p:
            tables, passages = json.load(t), json.load(p)
        titles = sorted({table["title"] for table in tables.values()})
        good_titles = set(titles[:: len(titles) // self.good_count][: self.good_count])
        self.good_tables = {k: v for k, v in tables.items() if v["title"] in good_titles}
        self.table_seeds = [(k, v) for k, v in tables.items() if v["title"] not in good_titles]
        table_titles = {t.replace(" ", "_") for t in titles}
        free = [k for k in passages if k.removeprefix("/wiki/") not in table_titles]
        self.good_passages = {
            k: passages[k] for k in free[:: len(free) // self.good_count][: self.good_count]
        }
        self.passage_seeds = [(k, v) for k, v in passages.items() if k not in self.good_passages]
        self.good_titles = good_titles | {
            k.removeprefix("/wiki/").replace("_", " ") for k in self.good_passages
        }
        self.baseline = self._good_rows(self.call([]))
        assert all(self.baseline.values())

    def _good_rows(self, result: dict[str, Any]) -> dict[str, list]:
        return {
            "table_rows": [r for r in result["table_rows"] if r["table_id"] in self.good_tables],
            "links": [r for r in result["links"] if r["source_title"] in self.good_titles],
            "passages": [r for r in result["passages"] if r["page_title"] in self.good_titles],
            "pages": sorted(r["title"] for r in result["pages"] if r["title"] in self.good_titles),
        }

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        names: list[str] = []
        if rng.random() < 0.5:
            seed_key, value = rng.choice(self.table_seeds)
            key, seed_name = f"Fuzz{index}_{seed_key}", f"table {seed_key}"  # keeps the '_<n>' table index
        else:
            seed_key, value = rng.choice(self.passage_seeds)
            key, seed_name = f"/wiki/Fuzz{index}_{seed_key.removeprefix('/wiki/')}", f"passage {seed_key}"
        if rng.random() < 0.55:
            data = json.dumps(key).encode() + b": " + dump_json(rng, mutate_value(rng, value, names))
        else:
            data = mutate_bytes(rng, json.dumps({key: value})[1:-1].encode(), JSON_DIALECT, names)
        return FuzzInput(index, seed_name, names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        """Members that keep the document well formed share a file; one that breaks it goes last in one."""
        members = [
            Member(
                item, "tables" if item.seed_name.startswith("table ") else "passages", member_keys(item.data)
            )
            for item in items
        ]
        whole = [m for m in members if not m.goes_last]
        last = {f: [m for m in members if m.goes_last and m.file == f] for f in ("tables", "passages")}
        while whole or last["tables"] or last["passages"]:
            group = whole + [pending.pop() for pending in last.values() if pending]
            whole = []
            self._members = {m.item.index: m for m in group}
            self.run_group([m.item for m in group], report)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        members = [self._members[item.index] for item in items]
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        docs: dict[str, dict[str, Any]] = {}
        for file, good in (("tables", self.good_tables), ("passages", self.good_passages)):
            good_members = [json.dumps({k: v})[1:-1].encode() for k, v in good.items()]
            mine = [m for m in members if m.file == file and not m.goes_last]
            order = interleave(rng, mine, good_members)
            parts = [good_members[i] if kind == "good" else mine[i].item.data for kind, i in order]
            last = [m for m in members if m.file == file and m.goes_last]
            prefix = b"{" + b", ".join(parts) + (b", " if parts and last else b"")
            starts = {m.item.index: len(prefix.decode(errors="surrogateescape")) for m in last}
            docs[file] = {"body": prefix + b"".join(m.item.data for m in last) + b"}", "starts": starts}
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            release = Path(tmp) / "release"
            release.mkdir()
            for file, doc in docs.items():
                (release / f"{file}.json.gz").write_bytes(gzip.compress(doc["body"], 1))
            summary = self._ingest(release, Path(tmp) / "out", self._options)
            tables = read_tables({o.table: o.path for o in summary.outputs})
        tables["meta"] = {"docs": docs, "summary": summary}
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        docs, summary = result["meta"]["docs"], result["meta"]["summary"]
        quarantined_keys: set[str] = set()
        member_rejects = 0
        breaks: dict[str, dict] = {}
        for row in result["quarantine"]:
            if row["record_id"] in ("tables.json.gz", "passages.json.gz"):
                breaks[row["record_id"].split(".")[0]] = row
                if row["char_offset"] is None:
                    report.add(Finding.of("violation", None, f"document break without position: {row}"))
            elif row["record_id"]:
                quarantined_keys.add(row["record_id"])
                member_rejects += 1
            else:
                report.add(Finding.of("violation", None, f"quarantined without its key: {row}"))
        good_keys = set(self.good_tables) | set(self.good_passages)
        if quarantined_keys & good_keys:
            report.add(Finding.of("violation", None, f"good quarantined: {quarantined_keys & good_keys}"))
        got = self._good_rows(result)
        for table, rows in self.baseline.items():
            report.good_records_checked += len(rows)
            if got[table] != rows:
                missing = [r for r in rows if r not in got[table]][:1]
                report.add(Finding.of("violation", None, f"good OTT-QA {table} changed: {missing}"))
        if summary.records_written + member_rejects != summary.records_read:
            report.add(Finding.of("violation", None, f"members unaccounted for: {summary}"))
        for item in items:
            member = self._members[item.index]
            cut = breaks.get(member.file)
            if not member.goes_last or (member.keys is not None and cut is None):
                report.count("rejected" if set(member.keys or ()) & quarantined_keys else "parsed")
                continue
            start = docs[member.file]["starts"][item.index]
            if (
                cut is not None and (cut["char_offset"] is None or cut["char_offset"] >= start - 2)
            ) or _own_key(item) in quarantined_keys:
                report.count("rejected")
            else:
                report.add(Finding.of("violation", item, f"break not reported at its member: {cut}"))
