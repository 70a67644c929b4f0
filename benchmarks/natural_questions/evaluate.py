"""The natural question set put to the engine as it is: exact match per kind and fold, with every wrong
answer and the mode that gave it.

    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --reader candidates
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --reader llm --fold report
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold holdout
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold3
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold4
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold5
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold6
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold7
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold8
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold9
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold10
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold11
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold12
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold13
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold14
    python benchmarks/natural_questions/evaluate.py run --index .state/indexes --fold fold15
    python benchmarks/natural_questions/evaluate.py report

``run`` asks every question of the chosen folds through ``query.Engine.ask`` (the engine's default modes;
the reader given) and appends one row per question to ``<out>/rows-<reader>.jsonl``, so an interrupted LLM
run resumes where it stopped. ``report`` writes ``<out>/before.md`` and ``before.json`` from the rows there.
``--fold all`` is tune and report; the holdout, fold3, fold4, fold5, fold6, fold7, fold8, fold9, fold10,
fold11, fold12, fold13, fold14 and fold15 folds are asked only when named (``--fold holdout``,
``--fold fold3``, ``--fold fold4``, ``--fold fold5``, ``--fold fold6``, ``--fold fold7``, ``--fold fold8``,
``--fold fold9``, ``--fold fold10``, ``--fold fold11``, ``--fold fold12``, ``--fold fold13``,
``--fold fold14``, ``--fold fold15``), so that no run made while the engine is being changed looks at them
by default.

Right or wrong, the same rule for every reader: the answer and each gold string are lower-cased and
stripped of punctuation and thousands separators; equal strings match, and two numbers match when they
are within 0.5 % of each other (an answer may name the gold's unit after the number: "819 metres"). A
refusal ("unknown") is right for an unanswerable question and wrong for every other one; an answer to an
unanswerable question is wrong whatever it says.
"""

from __future__ import annotations

import argparse
import json
import os
import re
import shlex
import statistics
import sys
import time
import unicodedata
from collections import defaultdict
from pathlib import Path

HERE = Path(__file__).resolve().parent
REPO = HERE.parents[1]
sys.path.insert(0, str(REPO))
sys.path.insert(0, str(REPO / "benchmarks"))

sys.path.insert(0, str(HERE))

from benchmarks_common import machine  # noqa: E402
from gold import FOLDS  # noqa: E402  (the answer key names the folds; one list for both)

QUESTIONS = HERE / "questions.jsonl"
OUT = REPO / "benchmarks" / "results" / "natural_questions"
KINDS = ("lookup", "lookup_year", "chain", "comparison", "count", "superlative", "yes_no", "unanswerable")
SHARED_FOLDS = ("tune", "report")  # what --fold all asks: the later folds only when named
NUMBER_TOLERANCE = 0.005
UNIT_WORDS = {  # how an answer may name the gold's unit after its number
    "square kilometre": ("square kilometres", "square kilometers", "square kilometer", "km2", "km²", "sq km"),
    "square metre": ("square metres", "square meters", "square meter", "m2", "m²"),
    "metre": ("metres", "meters", "meter", "m"),
    "United States dollar": ("united states dollars", "us dollars", "us dollar", "dollars", "dollar", "usd"),
    "centimetre": ("centimetres", "centimeters", "centimeter", "cm"),
    "percent": ("per cent", "percentage points", "pc"),
    "years old": ("years of age", "years", "year"),
    "Geary-Khamis dollar": ("international dollars", "international dollar", "dollars", "dollar"),
}
_NUMBER = re.compile(r"^[+-]?\d+(?:\.\d+)?$")


# --- judging ---------------------------------------------------------------------------------------


def normalized(text: str) -> str:
    """Lower case, no punctuation (thousands separators included), single spaces; accents kept."""
    text = unicodedata.normalize("NFC", text).casefold()
    text = re.sub(r"(?<=\d),(?=\d{3}\b)", "", text)  # 11,150,516 -> 11150516
    text = re.sub(r"(?:^|(?<=\s))[-\u2212](?=\d)", "\x00", text)  # a minus sign is not punctuation
    text = "".join(" " if unicodedata.category(c).startswith(("P", "S")) and c != "." else c for c in text)
    text = text.replace("\x00", "-")
    text = re.sub(r"\.(?!\d)|(?<!\d)\.", " ", text)  # a dot survives only between digits
    return " ".join(text.split())


def as_number(text: str, units: tuple[str, ...] = ()) -> tuple[float, str | None] | None:
    """The number an answer says, alone or followed by a spelling of one of ``units`` (then named)."""
    norm, named = normalized(text), None
    spellings = sorted(((normalized(w), u) for u in units for w in (u, *UNIT_WORDS.get(u, ()))),
                       key=lambda pair: len(pair[0]), reverse=True)  # fmt: skip
    for word, unit in spellings:
        if norm.endswith(" " + word):
            norm, named = norm[: -len(word) - 1], unit
            break
    return (float(norm), named) if _NUMBER.match(norm) else None


def gold_numbers(record: dict) -> list[tuple[float, str | None]]:
    """Each gold number with its unit: the answers' in ``unit``, a conversion's in its own."""
    converted = {a: unit for unit, answers in record.get("conversions", {}).items() for a in answers}
    found = []
    for gold in record["answers"]:
        if (parsed := as_number(gold)) is not None:
            found.append((parsed[0], converted.get(gold, record.get("unit"))))
    return found


def is_right(answer: str | None, record: dict) -> bool:
    """The rule of the module docstring; ``answer`` None is a refusal."""
    if record["kind"] == "unanswerable" or answer is None:
        return record["kind"] == "unanswerable" and answer is None
    if normalized(answer) in {normalized(g) for g in record["answers"]}:
        return True
    golds = gold_numbers(record)
    said = as_number(answer, tuple({u for _, u in golds if u}))
    if said is None:
        return False
    value, unit = said
    return any(abs(value - n) <= NUMBER_TOLERANCE * abs(n) for n, u in golds if unit is None or unit == u)


# --- asking ----------------------------------------------------------------------------------------


def rows_path(out: Path, reader: str) -> Path:
    return out / f"rows-{reader}.jsonl"


def ask_all(args: argparse.Namespace) -> int:
    from query.config import EngineConfig
    from query.engine import Engine

    records = [json.loads(line) for line in args.questions.read_text(encoding="utf-8").splitlines()]
    records = selected(records, args.fold)
    label = args.reader + ("+plan-llm" if args.plan_llm else "")
    path = rows_path(args.out, label)
    done = {json.loads(line)["id"] for line in path.read_text().splitlines()} if path.exists() else set()
    todo = interleaved([r for r in records if r["id"] not in done])
    args.out.mkdir(parents=True, exist_ok=True)
    session = {"reader": label, "fold": args.fold, "questions": len(todo), "load_before": load()}
    config = EngineConfig(reader=args.reader, kg_plan={"llm_planner": args.plan_llm})
    with Engine.open(args.index, config) as engine, path.open("a") as rows:
        if (args.reader == "llm" or args.plan_llm) and engine.llm is None:
            raise SystemExit("the LLM reader and planner need the instruct model, which did not load")
        for number, record in enumerate(todo, start=1):
            started = time.perf_counter()
            result = engine.ask(record["question"])
            row = answer_row(record, result, (time.perf_counter() - started) * 1000, engine.index_version)
            rows.write(json.dumps(row, ensure_ascii=False) + "\n")
            rows.flush()
            mark = "right" if row["right"] else "WRONG"
            print(f"{number}/{len(todo)} {record['id']} {mark} {row['answer']!r} [{row['mode']}]", flush=True)
    session["load_after"] = load()
    with (args.out / f"sessions-{label}.jsonl").open("a") as sessions:
        sessions.write(json.dumps(session) + "\n")
    return 0


def selected(records: list[dict], fold: str) -> list[dict]:
    """The records of one fold; "all" is tune and report, never the later folds (asked by name only)."""
    return [r for r in records if r["fold"] in (SHARED_FOLDS if fold == "all" else (fold,))]


def load() -> list[float]:
    """The 1, 5 and 15 minute load averages: the machine is shared, so every figure says how busy it was."""
    return [round(x, 2) for x in os.getloadavg()]


def interleaved(records: list[dict]) -> list[dict]:
    """The records taken in turn from each kind (its first, then its second, ...), so a run stopped early
    (the LLM reader on a busy machine) has asked every kind about equally often."""
    turn: dict[str, int] = defaultdict(int)
    keyed = []
    for record in records:
        keyed.append((turn[record["kind"]], KINDS.index(record["kind"]), record["id"], record))
        turn[record["kind"]] += 1
    return [record for *_, record in sorted(keyed, key=lambda k: k[:3])]


def answer_row(record: dict, result, ms: float, version: str) -> dict:
    answer = None if result.unknown else result.answer
    return {
        "id": record["id"], "kind": record["kind"], "fold": record["fold"], "question": record["question"],
        "gold": record["answers"][:3], "answer": answer, "unit": result.unit, "mode": result.mode,
        "reader": result.reader, "confidence": round(result.confidence, 3), "right": is_right(answer, record),
        "ms": round(ms, 1), "load": load(), "index_version": version,
    }  # fmt: skip


# --- the report ------------------------------------------------------------------------------------


def read_rows(out: Path, questions: Path) -> dict[str, list[dict]]:
    """Each reader's rows, judged again against the current gold (a gold fixed after a run counts)."""
    records = {r["id"]: r for r in map(json.loads, questions.read_text(encoding="utf-8").splitlines())}
    found = {}
    for path in sorted(out.glob("rows-*.jsonl")):
        rows = [json.loads(line) for line in path.read_text().splitlines()]
        for row in rows:
            row["right"] = is_right(row["answer"], records[row["id"]])
            row["gold"] = records[row["id"]]["answers"][:3]
        found[path.stem.removeprefix("rows-")] = rows
    return found


def read_sessions(out: Path) -> dict[str, list[dict]]:
    return {
        path.stem.removeprefix("sessions-"): [json.loads(line) for line in path.read_text().splitlines()]
        for path in sorted(out.glob("sessions-*.jsonl"))
    }


def per_kind(rows: list[dict]) -> dict[str, dict[str, dict]]:
    """{kind: {fold: {"n", "right", "em"}}} with an "all" kind and an "all" fold."""
    table: dict[str, dict[str, dict]] = defaultdict(dict)
    for kind in (*KINDS, "all"):
        for fold in (*FOLDS, "all"):
            group = [r for r in rows if kind in ("all", r["kind"]) and fold in ("all", r["fold"])]
            if group:
                right = sum(r["right"] for r in group)
                table[kind][fold] = {
                    "n": len(group),
                    "right": right,
                    "em": round(100 * right / len(group), 1),
                }
    return dict(table)


def report(args: argparse.Namespace) -> int:
    runs = read_rows(args.out, args.questions)
    if not runs:
        raise SystemExit(f"no rows-*.jsonl under {args.out}: run the 'run' command first")
    summary = {reader: per_kind(rows) for reader, rows in runs.items()}
    p50 = {reader: statistics.median(r["ms"] for r in rows) for reader, rows in runs.items()}
    versions = sorted({r["index_version"] for rows in runs.values() for r in rows})
    sessions = read_sessions(args.out)
    commands = COMMANDS[args.name]
    payload = {"commands": commands, "machine": machine(), "index_versions": versions, "sessions": sessions,
               "p50_ms": p50, "per_kind": summary, "rows": runs}  # fmt: skip
    target = args.report_dir or args.out
    (target / f"{args.name}.json").write_text(json.dumps(payload, ensure_ascii=False, indent=1) + "\n")
    text = markdown(summary, runs, p50, versions, sessions, TITLES[args.name], commands)
    (target / f"{args.name}.md").write_text("\n".join(text) + "\n")
    print((target / f"{args.name}.md").read_text())
    return 0


COMMANDS = {
    "before": [
        "HQA_STATE_DIR=$PWD/.state HQA_EMBEDDING_CACHE=/work/state-before/embeddings hqa build --samples",
        "python benchmarks/natural_questions/evaluate.py run --index .state/indexes --reader candidates",
        "python benchmarks/natural_questions/evaluate.py run --index .state/indexes --reader llm "
        "--fold report",
        "python benchmarks/natural_questions/evaluate.py report",
    ],
    "after": [
        "HQA_STATE_DIR=$PWD/.state HQA_EMBEDDING_CACHE=$PWD/.state/embeddings hqa build --samples",
        "nice -n 10 python benchmarks/natural_questions/evaluate.py run --index .state/indexes "
        "--reader candidates --fold report --out benchmarks/results/natural_questions/after",
        "nice -n 10 python benchmarks/natural_questions/evaluate.py run --index .state/indexes "
        "--reader candidates --plan-llm --fold report --out benchmarks/results/natural_questions/after",
        "python benchmarks/natural_questions/evaluate.py report --name after "
        "--out benchmarks/results/natural_questions/after --report-dir benchmarks/results/natural_questions",
    ],
}
TITLES = {
    "before": "Natural questions: today's engine (before issue 35)",
    "after": "Natural questions: the engine with question plans (after issue 35)",
}


def markdown(
    summary: dict, runs: dict, p50: dict, versions: list[str], sessions: dict, title: str, commands: list[str]
) -> list[str]:
    lines = [f"# {title}", "", "Commands:", ""]
    lines += [f"    {c}" for c in commands]
    lines += ["", f"Index versions {', '.join(versions)}; machine: "
              + ", ".join(f"{k} {v}" for k, v in machine().items()), ""]  # fmt: skip
    for reader, table in summary.items():
        lines += reader_section(reader, table, runs, p50[reader], sessions.get(reader, []))
    for reader, rows in runs.items():
        lines += wrong_section(reader, rows)
    return lines


def reader_section(reader: str, table: dict, runs: dict, p50: float, sessions: list[dict]) -> list[str]:
    lines = [f"## Reader `{reader}`: exact match per kind (%, right/questions)", ""]
    lines += [  # one column per fold of gold.FOLDS, then all: a new fold needs no edit here
        "| kind | " + " | ".join(FOLDS) + " | all |",
        "|---|" + "---:|" * (len(FOLDS) + 1),
    ]
    for kind in (*KINDS, "all"):
        cells = [_cell(table.get(kind, {}).get(f)) for f in (*FOLDS, "all")]
        lines.append(f"| {f'**{kind}**' if kind == 'all' else kind} | {' | '.join(cells)} |")
    modes: dict[str, int] = defaultdict(int)
    for r in runs[reader]:
        modes[r["mode"]] += 1
    lines += ["", f"p50 {p50:.0f} ms a question; {load_said(runs[reader], sessions)}; answered by mode: "
              + ", ".join(f"{m} {n}" for m, n in sorted(modes.items())), ""]  # fmt: skip
    if reader != "candidates" and "candidates" in runs:
        lines += same_questions(reader, runs[reader], runs["candidates"])
    return lines


def load_said(rows: list[dict], sessions: list[dict]) -> str:
    """How busy the machine was: each run's load averages before and after, and the median 1-minute
    load over the rows that recorded one (a run stopped early writes no 'after')."""
    said = [f"{s['load_before']} -> {s.get('load_after', 'stopped')}" for s in sessions]
    ones = [r["load"][0] for r in rows if r.get("load")]
    if ones:
        said.append(f"median 1-min load {statistics.median(ones):.1f} over {len(ones)} rows")
    return "load averages 1/5/15 min before -> after: " + ("; ".join(said) or "not recorded")


def same_questions(reader: str, rows: list[dict], baseline: list[dict]) -> list[str]:
    """The reader against the candidate reader on exactly the questions the reader was asked (a run
    stopped early asked part of a fold)."""
    asked = {r["id"] for r in rows}
    ours, theirs = per_kind(rows), per_kind([r for r in baseline if r["id"] in asked])
    lines = [f"The same {len(asked)} questions, `{reader}` against `candidates`:", ""]
    lines += [f"| kind | questions | {reader} | candidates |", "|---|---:|---:|---:|"]
    for kind in (*KINDS, "all"):
        if kind in ours:
            mine, base = ours[kind]["all"], theirs[kind]["all"]
            lines.append(f"| {kind} | {mine['n']} | {_cell(mine)} | {_cell(base)} |")
    return [*lines, ""]


def wrong_section(reader: str, rows: list[dict]) -> list[str]:
    wrong = [r for r in rows if r["fold"] in ("report", "holdout") and not r["right"]]
    lines = [f"## Wrong answers of the report and holdout folds, reader `{reader}` ({len(wrong)})", ""]
    for r in sorted(wrong, key=lambda r: (KINDS.index(r["kind"]), r["id"])):
        said = "unknown" if r["answer"] is None else r["answer"] + (f" {r['unit']}" if r["unit"] else "")
        lines.append(f"- {r['id']} ({r['kind']}, {r['fold']}) {r['question']} → **{said}** "
                     f"[mode {r['mode']}; gold {' / '.join(r['gold'])}]")  # fmt: skip
    return [*lines, ""]


def _cell(group: dict | None) -> str:
    return "-" if group is None else f"{group['em']:.1f} ({group['right']}/{group['n']})"


def arguments() -> argparse.ArgumentParser:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    run = sub.add_parser("run", help="ask the questions and append rows")
    run.add_argument("--index", type=Path, required=True, help="the index folder (its 'current' version)")
    run.add_argument("--reader", choices=("candidates", "llm"), default="candidates")
    run.add_argument("--fold", choices=("all", *FOLDS), default="all", help="all: tune and report")
    run.add_argument("--questions", type=Path, default=QUESTIONS)
    run.add_argument("--out", type=Path, default=OUT)
    run.add_argument(
        "--plan-llm", action="store_true", help="let the LLM planner read what the rules are unsure of"
    )
    rep = sub.add_parser("report", help="write <name>.md and <name>.json from the rows")
    rep.add_argument("--out", type=Path, default=OUT, help="where the rows are")
    rep.add_argument("--name", choices=tuple(COMMANDS), default="before")
    rep.add_argument("--report-dir", type=Path, default=None, help="where the report goes (default: --out)")
    rep.add_argument("--questions", type=Path, default=QUESTIONS)
    return parser


def main(argv: list[str] | None = None) -> int:
    args = arguments().parse_args(argv)
    print("command: " + shlex.join(["evaluate.py", *(argv or sys.argv[1:])]), flush=True)
    return ask_all(args) if args.command == "run" else report(args)


if __name__ == "__main__":
    raise SystemExit(main())
