"""Boundary 5: a question line of the batch job among good ones, through ``read_questions``."""

from __future__ import annotations

import json
import random
import re
import tempfile
from pathlib import Path
from typing import Any

from tests.conftest import SAMPLES
from tests.fuzz.harness import BoundaryReport, Finding, FuzzInput, RecordBoundary, interleave
from tests.fuzz.mutators import JSON_DIALECT, dump_json, mutate_bytes, mutate_value

QUESTIONS = SAMPLES / "questions.jsonl"

_LINE_BREAK = re.compile(rb"\r\n|\r|\n")


class QuestionsBoundary(RecordBoundary):
    name = "questions"
    batch = 200

    def __init__(self, work: Path):
        super().__init__(work)
        from query.batch.questions import read_questions

        self._read = read_questions
        lines = QUESTIONS.read_bytes().splitlines()
        self.good, self.seeds = lines[::2], lines[1::2]
        self.good_questions = [json.loads(line) for line in self.good]

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        seed = rng.choice(self.seeds)
        names: list[str] = []
        if rng.random() < 0.5:
            data = dump_json(rng, mutate_value(rng, json.loads(seed), names))
        else:
            data = mutate_bytes(rng, seed, JSON_DIALECT, names)
        return FuzzInput(index, f"question {json.loads(seed)['id']}", names, data)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        order = interleave(rng, items, self.good)
        body = bytearray()
        spans = []
        for kind, i in order:
            record = self.good[i] if kind == "good" else items[i].data
            spans.append(((kind, i), len(body), len(body) + len(record) + 1))
            body += record + b"\n"
        line_starts = [0] + [m.end() for m in _LINE_BREAK.finditer(body) if m.end() < len(body)]
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            path = Path(tmp) / "fuzz-questions.jsonl"
            path.write_bytes(bytes(body))
            questions = self._read(path)
        owners = [next(slot for slot, a, b in spans if a <= start < b) for start in line_starts]
        return {"questions": questions, "owners": owners, "lines": bytes(body).splitlines()}

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        questions, owners, lines = result["questions"], result["owners"], result["lines"]
        if len(owners) != len(lines):
            report.add(Finding.of("violation", None, "line accounting of the harness is off"))
            return
        entries = {entry.line: entry for entry in questions.entries}
        expected = [n for n, line in enumerate(lines, start=1) if line.strip()]
        if sorted(entries) != expected or [e.line for e in questions.entries] != expected:
            report.add(Finding.of("violation", None, "entries do not match the non-blank lines 1:1"))
        if questions.blank_lines != len(lines) - len(expected):
            report.add(Finding.of("violation", None, f"blank lines {questions.blank_lines} miscounted"))
        outcome: dict[int, str] = {}
        for line_no, (kind, i) in enumerate(owners, start=1):
            entry = entries.get(line_no)
            if kind == "good":
                report.good_records_checked += 1
                want = self.good_questions[i]
                if entry is None or (entry.id, entry.question) != (want["id"], want["question"]):
                    report.add(Finding.of("violation", None, f"good line {line_no} changed: {entry}"))
                elif entry.error is not None and not self._duplicate_of_mutated(entry.error, owners):
                    report.add(Finding.of("violation", None, f"good line {line_no} rejected: {entry}"))
                continue
            if entry is None:
                outcome.setdefault(i, "skipped")
            elif entry.error is not None:
                outcome[i] = "rejected"
            elif outcome.get(i) != "rejected":
                outcome[i] = "parsed"
        for k in range(len(items)):
            if outcome.get(k, "skipped") == "skipped":
                report.skip("a blank line")
            else:
                report.count(outcome[k])

    @staticmethod
    def _duplicate_of_mutated(error: str, owners: list[tuple[str, int]]) -> bool:
        """A good line whose id a mutated line took first is rightly a duplicate (first one wins)."""
        match = re.search(r"\(first on line (\d+)\)", error)
        return bool(match) and owners[int(match.group(1)) - 1][0] == "mut"
