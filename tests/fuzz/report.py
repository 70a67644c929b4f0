"""The fuzzing job's report: one table of outcomes per boundary, the reasons, every finding, in Markdown and
JSON (the JSON is what ``benchmarks/check_expected.py`` reads)."""

from __future__ import annotations

import json
from pathlib import Path

from tests.fuzz.harness import INPUT_SECONDS

WHAT = {
    "wikidata": "entity line (`ingest_wikidata`)",
    "wikitext": "article wikitext (`parse_article`)",
    "xml": "XML `<page>` (`ingest_wikipedia`)",
    "ottqa": "OTT-QA table or passage (`ingest_ottqa`)",
    "questions": "question line (`read_questions`)",
    "config": "engine config file (`EngineConfig.load`)",
}


NOTES = [
    "- One-document JSON files (OTT-QA) cannot be read past a member that breaks the document (bad syntax, "
    "nesting deeper than the JSON parser's recursion): such a member goes last in a file of its own, the "
    "break must be quarantined at or after its offset, and the members before it must come out unchanged.",
    "- An XML page whose `<page>` and `</page>` are both gone leaves bytes that nothing marks as a page; the "
    "reader passes over bytes between pages, so these are counted as skipped, not as a violation.",
    "- A slow input is not a crash: the job stops it so that it ends. The wikitext parsers "
    "(mwparserfromhell's tokenizer, wikitextparser's cells) are quadratic on long runs of unclosed or nested "
    "tables, refs and comments (8,000 `<ref>` take ~5 s, 100,000 nested `{|` minutes); the ingest has no "
    "per-page time limit.",
    "- Replay any input: `python -m tests.fuzz --replay NAME INDEX --seed SEED`.",
]


def write_report(result: dict, out: Path) -> None:
    out.mkdir(parents=True, exist_ok=True)
    (out / "report.json").write_text(json.dumps(result, indent=2, ensure_ascii=False) + "\n")
    m = result["machine"]
    lines = [
        "# Fuzzing the parser boundaries",
        "",
        f"Command: `{result['command']}`",
        "",
        f"Machine: {m['cores']} cores, {m['memory_gib']} GiB, {m['cpu']}, Python {m['python']} "
        f"(niced, beside another benchmark).",
        "",
        "Property: every input is parsed, skipped for a documented reason (a blank line, a page outside the "
        "kept namespaces) or quarantined/rejected with its position, never an unhandled exception (a crash), "
        "and the good records of the same file come out exactly as a clean run of them alone gives them "
        "(anything else is a violation). Seeds are the real samples in `data/samples`; see the docstring of "
        "`tests/fuzz/` for the mutations.",
        "",
        "| boundary | input | inputs | parsed | quarantined / rejected | skipped | crashes | violations "
        f"| slow (> {INPUT_SECONDS:g} s) | good records checked | calls | seconds |",
        "|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
    ]
    for b in result["boundaries"]:
        lines.append(
            f"| {b['boundary']} | {WHAT[b['boundary']]} | {b['inputs']:,} | {b['parsed']:,} | "
            f"{b['quarantined_or_rejected']:,} | {b['skipped']:,} | {b['crashes']} | {b['violations']} | "
            f"{b['slow']} | {b['good_records_checked']:,} | {b['calls']:,} | {b['seconds']:,.0f} |"
        )
    lines += ["", "Inputs skipped (or counted unusually), by reason:", ""]
    for b in result["boundaries"]:
        for reason, count in b["reasons"].items():
            lines.append(f"- {b['boundary']}: {count:,}: {reason}")
    findings = [(b["boundary"], f) for b in result["boundaries"] for f in b["findings"]]
    for title, kinds, none in (
        ("Crashes and violations", ("crash", "violation"), "None."),
        (f"Slow inputs (stopped after {INPUT_SECONDS:g} s)", ("slow",), "None."),
    ):
        lines += ["", f"## {title}", ""]
        chosen = [(boundary, f) for boundary, f in findings if f["kind"] in kinds]
        if not chosen:
            lines.append(none)
        for boundary, f in chosen:
            where = f"input {f['index']} (seed {result['seed']})" if f["index"] is not None else "a batch"
            how = ", ".join(f["mutations"])
            lines.append(
                f"- **{boundary} {f['kind']}**, {where}, from {f['seed_name']} by {how}: `{f['message']}`"
            )
            if f["excerpt"]:
                lines.append(f"  input: `{f['excerpt'][:200]}`")
    lines += ["", "## Notes", "", *NOTES]
    (out / "report.md").write_text("\n".join(lines) + "\n")
