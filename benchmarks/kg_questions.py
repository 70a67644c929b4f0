"""A KG question set written from a Wikidata JSON dump, with gold answers read straight from the raw JSON.

    python benchmarks/kg_questions.py --dump data/samples/wikidata/wikidata-sample-items.json.bz2 \\
        --out benchmarks/kg_questions/questions.jsonl

Six question types, each a template over one property of the dump's items: ``area`` (P2046),
``population`` (P1082, best rank), ``population_in_year`` (P1082 with a P585 point-in-time qualifier),
``inception`` (P571, the year), ``country`` (P17) and ``capital`` (P36). The output is JSONL in the shape
the ``kgqa`` loader reads (``id``, ``question``, ``answers``, ``entities``, ``type``, ``property`` and,
for quantities with a unit, ``unit``); the run prints the questions per type and the candidate questions
dropped per reason.

Why no project code: this file is the answer key the engine is graded against. If the gold went
through ``ingest``'s parser, rank handling or verbalizer, a bug there would be copied into the gold and
the benchmark would grade the engine as right exactly where it is wrong. So the gold is computed here
from the dump's JSON with the standard library only, from Wikidata's documented data model (ranks,
snak types, quantity amounts, time precision), and this script must never import ``schemas``,
``ingest``, ``index`` or ``query``.

Rules the gold follows, so that every question has one defensible answer set:
- a subject needs an English label shared (case-insensitively) by no other entity of the dump;
- "best rank" means the preferred statements if any, else the normal ones, never deprecated ones;
  a best-rank ``somevalue``/``novalue`` snak makes the answer unknown, so the question is dropped;
- an item answer is the value item's English label from the dump; a value item outside the dump has no
  known label, and a bare Q-id is never an answer, so such a question is dropped;
- a quantity answer is the dump's exact ``amount`` ("+30528.5" -> "30,528.5"), plus its digits without
  separators; when several best-rank values differ, each is accepted (latest point in time first);
- ``population_in_year`` asks only for years where every non-deprecated P585-dated statement agrees on
  one amount, and only for the earliest, a middle and the latest such year of each subject.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import re
from collections import Counter
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path

TYPES = ("area", "population", "population_in_year", "inception", "country", "capital")
TEMPLATES = {
    "area": "What is the area of {label}?",
    "population": "What is the population of {label}?",
    "population_in_year": "What was the population of {label} in {year}?",
    "inception": "In which year was {label} founded?",
    "country": "Which country is {label} in?",
    "capital": "What is the capital of {label}?",
}
PROPERTIES = {
    "area": "P2046",
    "population": "P1082",
    "population_in_year": "P1082",
    "inception": "P571",
    "country": "P17",
    "capital": "P36",
}
POINT_IN_TIME = "P585"
# Units used when the unit item is not in the dump; the sample dump's areas use the first three.
UNIT_LABELS = {
    "Q712226": "square kilometre",
    "Q25343": "square metre",
    "Q232291": "square mile",
    "Q11573": "metre",
    "Q828224": "kilometre",
}
DIMENSIONLESS = "1"
# Agreeing years beyond the earliest/middle/latest spread: counted beside the drops, not as a defect.
NOT_PICKED = "year not picked (only earliest, middle, latest)"
YEAR_PRECISION = 9  # Wikidata time precision: 9 year, 10 month, 11 day; lower is decade, century, ...
_AMOUNT = re.compile(r"^([+-]?)(\d+)(?:\.(\d+))?$")
_TIME = re.compile(r"^([+-])(\d+)-\d\d-\d\dT")


@dataclass(frozen=True)
class Question:
    type: str
    subject: str
    question: str
    answers: tuple[str, ...]
    unit: str | None = None

    def record(self, number: int) -> dict:
        record = {
            "id": f"kg-{number:04d}",
            "question": self.question,
            "answers": list(self.answers),
            "entities": [self.subject],
            "type": self.type,
            "property": PROPERTIES[self.type],
        }
        if self.unit is not None:
            record["unit"] = self.unit
        return record


class Dropped(Exception):
    """A candidate question left out, with the reason counted in the run's report."""

    def __init__(self, reason: str) -> None:
        super().__init__(reason)
        self.reason = reason


# --- reading the dump ------------------------------------------------------------------------------


def read_entities(path: Path) -> Iterator[dict]:
    """Entities of a ``latest-all.json`` style dump: ``[``, one entity per line (trailing comma), ``]``."""
    opener = bz2.open if path.name.endswith(".bz2") else gzip.open if path.name.endswith(".gz") else open
    with opener(path, "rt", encoding="utf-8") as lines:
        for number, line in enumerate(lines, start=1):
            text = line.strip().rstrip(",")
            if text in ("", "[", "]"):
                continue
            try:
                yield json.loads(text)
            except json.JSONDecodeError as err:
                raise ValueError(f"{path}, line {number}: not an entity JSON object ({err})") from err


def english_label(entity: dict) -> str | None:
    return (entity.get("labels") or {}).get("en", {}).get("value") or None


@dataclass(frozen=True)
class Dump:
    entities: list[dict]
    labels: dict[str, str]  # entity id -> English label, for entities that have one
    ambiguous: frozenset[str]  # casefolded English labels carried by more than one entity

    @classmethod
    def load(cls, path: Path) -> Dump:
        entities = list(read_entities(path))
        labels = {e["id"]: label for e in entities if (label := english_label(e)) is not None}
        counts = Counter(label.casefold() for label in labels.values())
        return cls(entities, labels, frozenset(k for k, n in counts.items() if n > 1))

    def subject_label(self, entity: dict) -> str:
        label = self.labels.get(entity["id"])
        if label is None:
            raise Dropped("subject has no English label")
        if label.casefold() in self.ambiguous:
            raise Dropped("subject label shared with another entity")
        return label


# --- statements ------------------------------------------------------------------------------------


def best_rank(statements: list[dict]) -> list[dict]:
    """The preferred statements if any, else the normal ones; deprecated ones never count."""
    preferred = [s for s in statements if s.get("rank") == "preferred"]
    return preferred or [s for s in statements if s.get("rank") == "normal"]


def values_of(statements: list[dict]) -> list[dict]:
    """The data values of the statements; an unknown (somevalue) or absent (novalue) one drops the lot."""
    if not statements:
        raise Dropped("no best-rank statement")
    if any(s["mainsnak"].get("snaktype") != "value" for s in statements):
        raise Dropped("best-rank value unknown or none")
    return [s["mainsnak"]["datavalue"]["value"] for s in statements]


def qualifier_years(statement: dict, prop: str) -> set[int]:
    """Years of the statement's ``prop`` time qualifiers with at least year precision."""
    years = set()
    for snak in (statement.get("qualifiers") or {}).get(prop, []):
        if snak.get("snaktype") == "value" and snak["datavalue"]["value"]["precision"] >= YEAR_PRECISION:
            years.add(time_year(snak["datavalue"]["value"]["time"]))
    return years


def point_in_time(statement: dict) -> tuple[bool, int, str]:
    """A sort key: the statement's latest P585 time (year, then '-MM-DDT...'); undated sorts lowest."""
    snaks = (statement.get("qualifiers") or {}).get(POINT_IN_TIME, [])
    times = [s["datavalue"]["value"]["time"] for s in snaks if s.get("snaktype") == "value"]
    keys = [(True, time_year(t), t[t.index("-", 1) :]) for t in times]
    return max(keys) if keys else (False, 0, "")


def time_year(time: str) -> int:
    """The signed year of a Wikidata timestamp ('+1830-10-04T00:00:00Z' -> 1830, '-0044-...' -> -44)."""
    match = _TIME.match(time)
    if match is None:
        raise ValueError(f"not a Wikidata timestamp: {time!r}")
    sign, digits = match.groups()
    return -int(digits) if sign == "-" else int(digits)


def year_text(year: int) -> str:
    return f"{-year} BC" if year < 0 else str(year)


# --- answers ---------------------------------------------------------------------------------------


def amount_strings(amount: str) -> list[str]:
    """'+11150516' -> ['11,150,516', '11150516']; decimals as written ('+30528.5' -> '30,528.5')."""
    match = _AMOUNT.match(amount)
    if match is None:
        raise Dropped("amount not a plain decimal")
    sign, whole, fraction = match.groups()
    sign = "-" if sign == "-" else ""
    tail = f".{fraction}" if fraction is not None else ""
    grouped = f"{sign}{int(whole):,}{tail}"
    plain = f"{sign}{whole}{tail}"
    return [grouped] if grouped == plain else [grouped, plain]


def unit_label(dump: Dump, unit: str) -> str | None:
    """The English label of a quantity unit (None for dimensionless amounts)."""
    if unit == DIMENSIONLESS:
        return None
    unit_id = unit.rsplit("/", 1)[-1]
    label = dump.labels.get(unit_id) or UNIT_LABELS.get(unit_id)
    if label is None:
        raise Dropped("unit label unknown")
    return label


def quantity_answers(dump: Dump, statements: list[dict]) -> tuple[tuple[str, ...], str | None]:
    """Accepted strings of the best-rank amounts (newest point in time first) and their one unit."""
    ordered = sorted(best_rank(statements), key=point_in_time, reverse=True)  # stable: dump order on ties
    values = values_of(ordered)
    units = {v["unit"] for v in values}
    if len(units) > 1:
        raise Dropped("best-rank values in different units")
    answers = dict.fromkeys(text for v in values for text in amount_strings(v["amount"]))
    return tuple(answers), unit_label(dump, units.pop())


def item_answers(dump: Dump, subject: str, statements: list[dict]) -> tuple[str, ...]:
    ids = [v["id"] for v in values_of(best_rank(statements))]
    if subject in ids:
        raise Dropped("value is the subject itself")
    if any(i not in dump.labels for i in ids):
        raise Dropped("value label not in dump")
    return tuple(dict.fromkeys(dump.labels[i] for i in ids))


def inception_answers(statements: list[dict]) -> tuple[str, ...]:
    values = values_of(best_rank(statements))
    if any(v["precision"] < YEAR_PRECISION for v in values):
        raise Dropped("precision coarser than a year")
    years = {time_year(v["time"]) for v in values}
    if len(years) > 1:
        raise Dropped("best-rank years disagree")
    year = years.pop()
    return (year_text(year), f"{-year} BCE") if year < 0 else (year_text(year),)


# --- question types --------------------------------------------------------------------------------


def single_question(dump: Dump, kind: str, entity: dict, statements: list[dict]) -> Question:
    label = dump.subject_label(entity)
    question = TEMPLATES[kind].format(label=label)
    if kind in ("area", "population"):
        answers, unit = quantity_answers(dump, statements)
        return Question(kind, entity["id"], question, answers, unit)
    if kind == "inception":
        return Question(kind, entity["id"], question, inception_answers(statements))
    return Question(kind, entity["id"], question, item_answers(dump, entity["id"], statements))


def spread(years: list[int]) -> list[int]:
    """The earliest, a middle and the latest of sorted years, without repeats."""
    return sorted({years[0], years[len(years) // 2], years[-1]})


def population_in_year(dump: Dump, entity: dict, statements: list[dict], drops: Counter) -> list[Question]:
    """Questions for a spread of the years whose dated, non-deprecated statements agree on one amount."""
    label = dump.subject_label(entity)
    by_year: dict[int, set[tuple[str, str]]] = {}  # year -> {(amount, unit)}
    for statement in statements:
        if statement.get("rank") == "deprecated" or statement["mainsnak"].get("snaktype") != "value":
            continue
        years = qualifier_years(statement, POINT_IN_TIME)
        if len(years) == 1:
            value = statement["mainsnak"]["datavalue"]["value"]
            by_year.setdefault(years.pop(), set()).add((value["amount"], value["unit"]))
    agreed = sorted(year for year, values in by_year.items() if len(values) == 1)
    if len(by_year) > len(agreed):
        drops["population_in_year", "statements of the year disagree"] += len(by_year) - len(agreed)
    if not agreed:
        raise Dropped("no year with one agreed amount")
    picked = spread(agreed)
    if len(agreed) > len(picked):
        drops["population_in_year", NOT_PICKED] += len(agreed) - len(picked)
    questions = []
    for year in picked:
        ((amount, unit),) = by_year[year]
        text = TEMPLATES["population_in_year"].format(label=label, year=year_text(year))
        answers = tuple(amount_strings(amount))
        questions.append(Question("population_in_year", entity["id"], text, answers, unit_label(dump, unit)))
    return questions


def build_questions(dump: Dump) -> tuple[list[Question], Counter]:
    """Every question of the set in a fixed order (type, then dump order, then year) and the drop counts."""
    questions: list[Question] = []
    drops: Counter = Counter()
    for kind in TYPES:
        for entity in dump.entities:
            statements = (entity.get("claims") or {}).get(PROPERTIES[kind], [])
            if kind == "population_in_year":
                statements = [s for s in statements if POINT_IN_TIME in (s.get("qualifiers") or {})]
            if not statements:
                continue
            try:
                if kind == "population_in_year":
                    questions.extend(population_in_year(dump, entity, statements, drops))
                else:
                    questions.append(single_question(dump, kind, entity, statements))
            except Dropped as dropped:
                drops[kind, dropped.reason] += 1
    return questions, drops


def write_questions(questions: list[Question], out: Path) -> None:
    out.parent.mkdir(parents=True, exist_ok=True)
    lines = [json.dumps(q.record(n), ensure_ascii=False) for n, q in enumerate(questions, start=1)]
    out.write_text("\n".join(lines) + "\n", encoding="utf-8")


def report(questions: list[Question], drops: Counter) -> str:
    per_type = Counter(q.type for q in questions)
    dropped = {key: n for key, n in sorted(drops.items()) if key[1] != NOT_PICKED}
    lines = [f"{len(questions)} questions"]
    lines += [f"  {kind:<20} {per_type[kind]:>4}" for kind in TYPES]
    lines.append(f"{sum(dropped.values())} candidate questions dropped")
    lines += [f"  {kind:<20} {n:>4}  {reason}" for (kind, reason), n in dropped.items()]
    not_picked = drops["population_in_year", NOT_PICKED]
    lines.append(f"{not_picked} further agreeing population years not asked (earliest, middle, latest only)")
    return "\n".join(lines)


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, required=True, help="Wikidata dump (.json[.bz2|.gz])")
    parser.add_argument("--out", type=Path, required=True, help="the question file to write (JSONL)")
    args = parser.parse_args(argv)
    questions, drops = build_questions(Dump.load(args.dump))
    write_questions(questions, args.out)
    print(report(questions, drops))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
