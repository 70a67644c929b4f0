"""Gold answers for the hand-written natural question set, computed from the raw sample dumps.

    python benchmarks/natural_questions/gold.py            # the sample dumps, the committed files

reads ``questions.source.jsonl`` (questions written by hand, each with a machine-readable ``spec``) and
writes ``questions.jsonl`` (each record with its ``answers``, the ``entities`` it names, the ``evidence``
the gold was read from and its ``fold``). A spec whose gold cannot be computed stops the run with the
record's line and what to change: a question is rewritten or dropped by hand, never answered with a guess.

Why no project code: this is the answer key the engine is graded against. If the gold went through
``ingest``'s parser, rank handling or verbalizer, a bug there would be copied into the gold and the engine
graded right exactly where it is wrong. So the gold is read here from the dumps' JSON (and, for the
fictional names of unanswerable questions, the Wikipedia XML) with the standard library only, from
Wikidata's documented data model (``dump_model.py`` beside this file reads it); neither file may import
``schemas``, ``ingest``, ``index`` or ``query``.

Rules the gold follows (the README says them in words):
- an entity is the revision with the highest ``lastrevid`` of its id in the dumps (the API stream sample
  holds several revisions of some entities);
- best rank: the preferred statements if any, else the normal ones, never deprecated ones; a best-rank
  ``somevalue``/``novalue`` snak means the value is unknown and the spec is refused at build time;
- an entity's current value: its best-rank values with the latest point in time (P585; undated ones
  count as oldest); several values at that latest time are all accepted;
- a value in a year: the non-deprecated statements dated (P585, year precision or finer) in that year,
  which must agree on one amount;
- an item answer is the item's English label (and its English aliases after it); an item outside the
  dumps has no label, so a spec that would answer with it is refused: never a bare Q-id;
- quantities are compared in one unit per dimension (km² for areas, metres for lengths), converted with
  exact decimals; a comparison or superlative must have the same winner whichever of a member's tied
  values is used, and a tie is refused;
- a count counts distinct best-rank values, leaving out statements with an end time (P582): the
  question is asked in the present tense;
- a superlative's members are the entities whose best-rank P31 names one of the classes and whose
  best-rank P17 (or P30 for a continent) names the place; members without a value are left out (and
  listed in the evidence);
- the folds: a shuffle seeded with ``SEED`` within each kind, the first half "tune", the rest "report";
  a source line that names its own ``fold`` (the "holdout", "fold3", "fold4", "fold5", "fold6", "fold7",
  "fold8", "fold9", "fold10", "fold11", "fold12", "fold13", "fold14" and "fold15" questions, written
  later) keeps it and stays out of the shuffle, so adding questions never moves an old one to another fold.
"""

from __future__ import annotations

import argparse
import json
import random
import sys
from dataclasses import dataclass
from decimal import Decimal
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

from dump_model import (  # noqa: E402
    COMPARATORS,
    CONTINENT,
    COUNTRY,
    END_TIME,
    INSTANCE_OF,
    NUMBER_WORDS,
    Answer,
    Dump,
    GoldError,
    best_rank,
    comparable,
    current,
    dated_years,
    in_year,
    item_ids,
    plain,
    qualifier_times,
    quantity_answer,
    read_entities,
    read_wiki_text,
    time_key,
    value_answer,
    with_values,
    with_values_or_empty,
)

REPO = HERE.parents[1]
SAMPLES = REPO / "data" / "samples"
DUMPS = (
    SAMPLES / "wikidata" / "wikidata-sample-items.json.bz2",
    SAMPLES / "wikidata" / "wikidata-api-stream-sample.json.bz2",
)
WIKIS = tuple(sorted((SAMPLES / "wikipedia").glob("*.xml.bz2")))
SOURCE = HERE / "questions.source.jsonl"
OUT = HERE / "questions.jsonl"
SEED = 35
FOLDS = (
    "tune",
    "report",
    "holdout",
    "fold3",
    "fold4",
    "fold5",
    "fold6",
    "fold7",
    "fold8",
    "fold9",
    "fold10",
    "fold11",
    "fold12",
    "fold13",
    "fold14",
    "fold15",
)
KINDS = ("lookup", "lookup_year", "chain", "comparison", "count", "superlative", "yes_no", "unanswerable")
OPS = {  # the spec operations each kind may use
    "lookup": {"lookup"},
    "lookup_year": {"in_year"},
    "chain": {"chain"},
    "comparison": {"compare"},
    "count": {"count"},
    "superlative": {"superlative"},
    "yes_no": {"yes_no"},
    "unanswerable": {"refuse"},
}

# --- the operations of a spec ----------------------------------------------------------------------


@dataclass(frozen=True)
class Gold:
    answer: Answer
    entities: list[str]
    evidence: dict


def lookup(dump: Dump, spec: dict) -> Gold:
    subject, prop = spec["subject"], spec["property"]
    statements = current(dump.statements(subject, prop))
    answer = value_answer(dump, statements, f"{subject} {prop}")
    times = sorted({when(time_key(s)) for s in statements if time_key(s)[0] > -(10**9)})
    return Gold(answer, [subject], {"as_of": times} if times else {})


def when(key: tuple[int, int, int]) -> str:
    """A point in time as precise as the dump gives it: '2014', '2014-01-01'."""
    year, month, day = key
    return f"{year}-{month:02d}-{day:02d}" if month and day else str(year)


def lookup_in_year(dump: Dump, spec: dict) -> Gold:
    subject, prop, year = spec["subject"], spec["property"], spec["year"]
    value = in_year(dump.statements(subject, prop), year, f"{subject} {prop}")
    if "amount" not in value:
        raise GoldError(f"{subject} {prop} in {year}: only quantities are asked by year")
    return Gold(quantity_answer([value]), [subject], {"year": year})


def hop(dump: Dump, here: str, step: str) -> str:
    """One step of a chain: ``P36`` follows the property; ``^P36`` finds the one entity of the dumps
    whose best-rank ``P36`` is ``here``. The step must reach exactly one entity of the dumps."""
    if step.startswith("^"):
        found = [
            qid
            for qid in sorted(dump.entities)
            if here in item_ids(with_values_or_empty(best_rank(dump.statements(qid, step[1:]))))
        ]
    else:
        found = item_ids(with_values(current(dump.statements(here, step)), f"{here} {step}"))
    if len(found) != 1 or found[0] not in dump.entities:
        raise GoldError(f"{here} {step} reaches {found}: a chain needs one entity of the dumps")
    return found[0]


def chain(dump: Dump, spec: dict) -> Gold:
    here, via = spec["start"], []
    *hops, last = spec["path"]
    for step in hops:
        here = hop(dump, here, step)
        via.append(here)
    end = {"subject": here, "property": last}
    if spec.get("count"):
        gold = count(dump, end)
    elif "year" in spec:
        gold = lookup_in_year(dump, {**end, "year": spec["year"]})
    elif last.startswith("^"):
        gold = Gold(Answer(dump.names(hop(dump, here, last))), [], {})
    else:
        gold = lookup(dump, end)
    return Gold(gold.answer, [spec["start"]], {"via": via, **gold.evidence})


def candidates(dump: Dump, qid: str, prop: str, year: int | None) -> tuple[set[Decimal], str | None]:
    """The comparable values of an entity: its current ones, or the one of ``year``."""
    statements = dump.statements(qid, prop)
    if year is not None:
        value = in_year(statements, year, f"{qid} {prop}")
        picked = [{"mainsnak": {"datavalue": {"type": "quantity", "value": value}}}]
    else:
        picked = with_values(current(statements), f"{qid} {prop}")
    reduced = [comparable(s) for s in picked]
    dimensions = {d for _, d in reduced}
    if len(dimensions) > 1:
        raise GoldError(f"{qid} {prop}: values of several dimensions {dimensions}")
    return {v for v, _ in reduced}, dimensions.pop()


def winner(values: dict[str, set[Decimal]], pick: str) -> str:
    """The entity that wins whichever of each entity's tied values is used; a tie is refused."""
    best = max if pick == "max" else min
    worst = min if pick == "max" else max
    ranked = sorted(values, key=lambda q: best(values[q]), reverse=pick == "max")
    first, rest = ranked[0], ranked[1:]
    beats = (lambda a, b: a > b) if pick == "max" else (lambda a, b: a < b)
    if not all(beats(worst(values[first]), best(values[q])) for q in rest):
        shown = {q: sorted(map(plain, v)) for q, v in values.items()}
        raise GoldError(f"no clear {pick}: {shown}")
    return first


def compare(dump: Dump, spec: dict) -> Gold:
    prop, year = spec["property"], spec.get("year")
    if len(set(spec["entities"])) != len(spec["entities"]) or len(spec["entities"]) < 2:
        raise GoldError(f"a comparison needs two or more different entities, got {spec['entities']}")
    values, dimensions = {}, set()
    for qid in spec["entities"]:
        values[qid], dimension = candidates(dump, qid, prop, year)
        dimensions.add(dimension)
    if len(dimensions) > 1:
        raise GoldError(f"compared values of different dimensions {dimensions}")
    first = winner(values, spec["pick"])
    evidence = {"values": {q: sorted(map(plain, v)) for q, v in values.items()}}
    return Gold(Answer(with_mention(dump.names(first), spec, first)), list(spec["entities"]), evidence)


def with_mention(names: list[str], spec: dict, qid: str) -> list[str]:
    """The names, and the winner named as the question names it ("Hegel" for Georg Wilhelm Friedrich
    Hegel): answering with the question's own word picks the same entity. The mention must be a word of
    the question's entity's names, so it cannot smuggle in another answer."""
    mention = spec.get("mentions", {}).get(qid)
    if mention is None:
        return names
    if not any(mention.casefold() in n.casefold().split() for n in names):
        raise GoldError(f"mention {mention!r} is not a word of {qid}'s names {names}")
    return list(dict.fromkeys([*names, mention]))


def count(dump: Dump, spec: dict) -> Gold:
    subject, prop = spec["subject"], spec["property"]
    statements = with_values(best_rank(dump.statements(subject, prop)), f"{subject} {prop}")
    ended = [s for s in statements if qualifier_times(s, END_TIME)]
    counted = list(dict.fromkeys(item_ids([s for s in statements if s not in ended])))
    n = len(counted)
    strings = [str(n), NUMBER_WORDS[n]] if n < len(NUMBER_WORDS) else [str(n)]
    evidence = {"counted": counted, "left_out_ended": sorted(set(item_ids(ended)) - set(counted))}
    return Gold(Answer(strings), [subject], evidence)


def members(dump: Dump, classes: set[str], place_prop: str, place: str) -> list[str]:
    """Entities of the dumps whose best-rank P31 names a class and whose ``place_prop`` names the place."""

    def names(qid: str, prop: str) -> set[str]:
        return set(item_ids(with_values_or_empty(best_rank(dump.statements(qid, prop)))))

    return [
        qid
        for qid in sorted(dump.entities, key=lambda q: int(q[1:]))
        if qid != place and names(qid, INSTANCE_OF) & classes and place in names(qid, place_prop)
    ]


def superlative(dump: Dump, spec: dict) -> Gold:
    place_prop, place = (CONTINENT, spec["continent"]) if "continent" in spec else (COUNTRY, spec["country"])
    found = members(dump, set(spec["class"]), place_prop, place)
    values, without = {}, []
    for qid in found:
        if not with_values_or_empty(best_rank(dump.statements(qid, spec["property"]))):
            without.append(qid)
            continue
        values[qid], _ = candidates(dump, qid, spec["property"], None)
    if len(values) < 2:
        raise GoldError(f"a superlative needs two members with a value; found {sorted(values)}")
    first = winner(values, spec["pick"])
    evidence = {"members": {q: sorted(map(plain, v)) for q, v in values.items()}, "without_value": without}
    return Gold(Answer(dump.names(first)), [place], evidence)


def yes_no(dump: Dump, spec: dict) -> Gold:
    prop = spec["property"]
    if "value" in spec:  # membership: is the item among the subject's best-rank values?
        subject = spec["subject"]
        held = item_ids(with_values(best_rank(dump.statements(subject, prop)), f"{subject} {prop}"))
        return _boolean(spec["value"] in held, [subject, spec["value"]], {"values": held})
    year = spec.get("year")
    if "entities" in spec:  # the first entity against the second
        (a, b), entities = spec["entities"], list(spec["entities"])
        left, _ = candidates(dump, a, prop, year)
        right, _ = candidates(dump, b, prop, year)
    else:  # the subject against a threshold in the base unit
        entities = [spec["subject"]]
        left, _ = candidates(dump, spec["subject"], prop, year)
        right = {Decimal(spec["threshold"])}
    test = COMPARATORS[spec["comparator"]]
    verdicts = {test(x, y) for x in left for y in right}
    if len(verdicts) != 1:
        raise GoldError(f"{spec}: the answer depends on which tied value is used")
    evidence = {"left": sorted(map(plain, left)), "right": sorted(map(plain, right))}
    return _boolean(verdicts.pop(), entities, evidence)


def _boolean(truth: bool, entities: list[str], evidence: dict) -> Gold:
    return Gold(Answer(["yes"] if truth else ["no"]), entities, evidence)


def refuse(dump: Dump, spec: dict) -> Gold:
    """An unanswerable question; the reason it has no answer is checked against the dumps."""
    why = spec["why"]
    checks = {
        "no_entity": _no_entity,
        "no_value": _no_value,
        "no_year": _no_year,
        "no_property": _no_property,
        "outside_dump": _outside_dump,
    }
    if why not in checks:
        raise GoldError(f"unknown refusal reason {why!r}; one of {sorted(checks)}")
    entities, checked = checks[why](dump, spec)
    return Gold(Answer(["unknown"]), entities, {"checked": checked})


def _no_entity(dump: Dump, spec: dict) -> tuple[list[str], str]:
    name = spec["name"].casefold()
    for qid, entity in dump.entities.items():
        texts = [v["value"] for v in (entity.get("labels") or {}).values()]
        texts += [a["value"] for values in (entity.get("aliases") or {}).values() for a in values]
        if any(name in t.casefold() for t in texts):
            raise GoldError(f"{spec['name']!r} names {qid} in the dumps: not a fictional place")
    if name in dump.wiki_text:
        raise GoldError(f"{spec['name']!r} occurs in the Wikipedia sample: not a fictional place")
    return [], f"no label or alias in any language, and no Wikipedia text, contains {spec['name']!r}"


def _no_value(dump: Dump, spec: dict) -> tuple[list[str], str]:
    subject, prop = spec["subject"], spec["property"]
    if any(s.get("rank") != "deprecated" for s in dump.statements(subject, prop)):
        raise GoldError(f"{subject} has a {prop} statement: the question has an answer")
    return [subject], f"{subject} has no {prop} statement"


def _no_year(dump: Dump, spec: dict) -> tuple[list[str], str]:
    subject, prop, year = spec["subject"], spec["property"], spec["year"]
    years = dated_years(dump.statements(subject, prop))
    if year in years:
        raise GoldError(f"{subject} {prop} has a value dated {year}")
    span = f"{len(years)} dated years, {years[0]}-{years[-1]}" if years else "no dated statement"
    return [subject], f"{subject} {prop}: no statement dated {year} ({span})"


def _no_property(dump: Dump, spec: dict) -> tuple[list[str], str]:
    prop = spec["property"]
    holders = [q for q, e in dump.entities.items() if prop in (e.get("claims") or {})]
    if holders:
        raise GoldError(f"{prop} is held by {holders[:3]}: the property exists in the dumps")
    return list(spec.get("entities", [])), f"no entity of the dumps has a {prop} statement"


def _outside_dump(dump: Dump, spec: dict) -> tuple[list[str], str]:
    start, prop = spec["start"], spec["property"]
    ids = item_ids(with_values(current(dump.statements(start, prop)), f"{start} {prop}"))
    inside = [i for i in ids if i in dump.entities]
    if inside:
        raise GoldError(f"{start} {prop} reaches {inside}, which the dumps hold")
    return [start], f"{start} {prop} is {ids}, an item the dumps do not hold"


OPERATIONS = {
    "lookup": lookup,
    "in_year": lookup_in_year,
    "chain": chain,
    "compare": compare,
    "count": count,
    "superlative": superlative,
    "yes_no": yes_no,
    "refuse": refuse,
}


# --- the set ---------------------------------------------------------------------------------------


def read_source(path: Path) -> list[dict]:
    """The hand-written records; each needs an id, a question, a kind and a spec its kind may use."""
    records = []
    for number, line in enumerate(path.read_text(encoding="utf-8").splitlines(), start=1):
        if not line.strip():
            continue
        record = json.loads(line)
        where = f"{path.name}, line {number} ({record.get('id')})"
        missing = {"id", "question", "kind", "spec"} - record.keys()
        if missing:
            raise GoldError(f"{where}: missing {sorted(missing)}")
        if record["kind"] not in KINDS or record["spec"].get("op") not in OPS[record["kind"]]:
            raise GoldError(f"{where}: kind {record['kind']!r} with op {record['spec'].get('op')!r}")
        if record.get("fold", "tune") not in FOLDS:
            raise GoldError(f"{where}: fold {record['fold']!r}; one of {FOLDS} or none (then the split says)")
        records.append({**record, "line": number})
    ids = [r["id"] for r in records]
    if len(set(ids)) != len(ids):
        raise GoldError(f"{path.name}: duplicate ids {sorted({i for i in ids if ids.count(i) > 1})}")
    return records


def gold_record(dump: Dump, record: dict) -> dict:
    try:
        gold = OPERATIONS[record["spec"]["op"]](dump, record["spec"])
    except (GoldError, KeyError) as err:
        where = f"{SOURCE.name}, line {record['line']} ({record['id']}: {record['question']!r})"
        raise GoldError(f"{where}: {err!s}; rewrite or drop the question") from err
    out = {
        "id": record["id"],
        "question": record["question"],
        "kind": record["kind"],
        "answers": gold.answer.strings + [s for ss in gold.answer.conversions.values() for s in ss],
        "entities": gold.entities,
        "spec": record["spec"],
    }
    if gold.answer.unit:
        out["unit"] = gold.answer.unit
    if gold.answer.conversions:
        out["conversions"] = gold.answer.conversions
    out["evidence"] = gold.evidence
    if record.get("note"):
        out["note"] = record["note"]
    if record.get("fold"):
        out["fold"] = record["fold"]
    return out


def assign_folds(records: list[dict], seed: int = SEED) -> None:
    """Half of each kind "tune", the rest "report", by a shuffle seeded per kind (string seeds are
    stable across Python runs, unlike ``hash``). A record that already has its fold (from its source
    line: the holdout, fold3, fold4, fold5, fold6, fold7, fold8, fold9, fold10, fold11, fold12, fold13, fold14
    and fold15 questions) keeps it and is not shuffled, so the old split stays as it was."""
    split = [r for r in records if "fold" not in r]
    for kind in KINDS:
        ids = sorted(r["id"] for r in split if r["kind"] == kind)
        random.Random(f"{seed}:{kind}").shuffle(ids)
        tune = set(ids[: len(ids) // 2])
        for r in split:
            if r["kind"] == kind:
                r["fold"] = "tune" if r["id"] in tune else "report"


def build(dump: Dump, source: Path) -> list[dict]:
    records = [gold_record(dump, r) for r in read_source(source)]
    assign_folds(records)
    return records


def summary(records: list[dict]) -> str:
    head = f"  {'kind':<14}{'tune':>6}{'report':>8}{'holdout':>9}"
    head += f"{'fold3':>7}{'fold4':>7}{'fold5':>7}{'fold6':>7}{'fold7':>7}{'fold8':>7}{'fold9':>7}"
    head += f"{'fold10':>8}{'fold11':>8}{'fold12':>8}{'fold13':>8}{'fold14':>8}{'fold15':>8}"
    lines = [f"{len(records)} questions", head]
    for kind in KINDS:
        folds = [r["fold"] for r in records if r["kind"] == kind]
        counts = f"{folds.count('tune'):>6}{folds.count('report'):>8}{folds.count('holdout'):>9}"
        counts += f"{folds.count('fold3'):>7}{folds.count('fold4'):>7}{folds.count('fold5'):>7}"
        counts += f"{folds.count('fold6'):>7}{folds.count('fold7'):>7}{folds.count('fold8'):>7}"
        counts += f"{folds.count('fold9'):>7}{folds.count('fold10'):>8}{folds.count('fold11'):>8}"
        counts += f"{folds.count('fold12'):>8}{folds.count('fold13'):>8}{folds.count('fold14'):>8}"
        counts += f"{folds.count('fold15'):>8}"
        lines.append(f"  {kind:<14}{counts}")
    return "\n".join(lines)


def write(records: list[dict], out: Path) -> None:
    out.write_text("".join(json.dumps(r, ensure_ascii=False) + "\n" for r in records), encoding="utf-8")


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, action="append", help="a Wikidata dump (default: both samples)")
    parser.add_argument("--wiki", type=Path, action="append", help="a Wikipedia dump (default: the samples)")
    parser.add_argument("--source", type=Path, default=SOURCE)
    parser.add_argument("--out", type=Path, default=OUT)
    args = parser.parse_args(argv)
    dump = Dump(read_entities(args.dump or DUMPS), read_wiki_text(args.wiki or WIKIS))
    records = build(dump, args.source)
    write(records, args.out)
    print(summary(records))
    print(f"written: {args.out}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
