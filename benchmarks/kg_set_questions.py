"""A multi-entity KG question set written from the sample Wikidata dumps, gold read from the raw JSON.

    python benchmarks/kg_set_questions.py --dump data/samples/wikidata/wikidata-sample-items.json.bz2 \\
        --dump data/samples/wikidata/wikidata-api-stream-sample.json.bz2 \\
        --out benchmarks/kg_set_questions/questions.jsonl

Sets: the instances of a class (cities, mountains, lakes, countries), optionally in one country, and
explicit lists of three entities. Properties: population (P1082), area (P2046), elevation (P2044).
Kinds: superlative (largest and smallest), ordinal (second largest), count over a threshold,
aggregate (total, average), and comparison within an explicit list.

Why no project code: this file is the answer key. The gold is computed with the standard library from
Wikidata's documented data model; it must never import ``schemas``, ``ingest``, ``index`` or ``query``.

Rules the gold follows:
- an entity's value: its best-rank statements (preferred if any, else normal; never deprecated; a
  ``somevalue``/``novalue`` snak means no value), the latest point in time (P585) first;
- a set is the entities whose best-rank P31 (and P17, for a country) name the set's classes (and
  country), the country itself excluded; a set needs ≥ 3 members with a value, all in one unit;
- a set named by a country needs that country's English label in the dumps;
- a question counts, ranks or sums only the members that have a value (the engine says how many had
  none); a superlative or ordinal with a tie at the asked place is dropped; an entity needs an English
  label no other entity of the dumps has, to be named in a list or as an answer.
"""

from __future__ import annotations

import argparse
import bz2
import json
from collections import Counter
from pathlib import Path

CLASSES = {
    "city": ({"Q515", "Q1549591", "Q1637706", "Q200250"}, "cities"),
    "commune": ({"Q484170", "Q25412"}, "communes"),
    "mountain": ({"Q8502"}, "mountains"),
    "lake": ({"Q23397"}, "lakes"),
    "country": ({"Q6256", "Q3624078"}, "countries"),
}
PROPERTIES = {
    "P1082": {"most": "the most inhabitants", "least": "the fewest inhabitants", "noun": "population",
              "count": "have more than {n} inhabitants", "unit": "1"},
    "P2046": {"most": "the largest area", "least": "the smallest area", "noun": "area",
              "count": "have an area of more than {n} square kilometres",
              "unit": "http://www.wikidata.org/entity/Q712226"},
    "P2044": {"most": "the highest elevation", "least": "the lowest elevation", "noun": "elevation",
              "count": "have an elevation above {n} metres", "unit": "http://www.wikidata.org/entity/Q11573"},
}  # fmt: skip
DEMONYMS = {"Q298": "Chilean", "Q183": "German", "Q38": "Italian", "Q16": "Canadian", "Q142": "French"}


def entities(paths: list[Path]) -> dict[str, dict]:
    out: dict[str, dict] = {}
    for path in paths:
        with bz2.open(path, "rt") as f:
            for line in f:
                line = line.strip().rstrip(",")
                if line.startswith("{"):
                    entity = json.loads(line)
                    out[entity["id"]] = entity
    return out


def label(entity: dict) -> str | None:
    return entity.get("labels", {}).get("en", {}).get("value")


def best(entity: dict, prop: str) -> list[dict]:
    claims = [c for c in entity.get("claims", {}).get(prop, []) if c.get("rank") != "deprecated"]
    preferred = [c for c in claims if c["rank"] == "preferred"]
    return preferred or claims


def items(entity: dict, prop: str) -> set[str]:
    return {
        c["mainsnak"]["datavalue"]["value"]["id"]
        for c in best(entity, prop)
        if c["mainsnak"].get("snaktype") == "value"
    }


def value(entity: dict, prop: str) -> tuple[float, str] | None:
    """(amount, unit) of the best-rank statement with the latest point in time, or None."""
    claims = [c for c in best(entity, prop) if c["mainsnak"].get("snaktype") == "value"]
    if not claims:
        return None

    def year(claim: dict) -> int:
        times = claim.get("qualifiers", {}).get("P585", [])
        if not times or times[0].get("snaktype") != "value":
            return -(10**6)
        return int(times[0]["datavalue"]["value"]["time"][1:5])

    chosen = max(claims, key=year)
    amount = chosen["mainsnak"]["datavalue"]["value"]
    return float(amount["amount"]), amount.get("unit", "1")


def number(x: float) -> str:
    return f"{int(x):,}" if float(x).is_integer() else f"{x:,.2f}"


def numbers(x: float) -> list[str]:
    """A number as written with separators, and without trailing zeros ("27.30" and "27.3")."""
    written = number(x)
    plain = f"{x:,.2f}".rstrip("0").rstrip(".")
    return [written] if plain == written else [written, plain]


def questions(raw: dict[str, dict]) -> tuple[list[dict], Counter]:
    names = Counter(label(e) for e in raw.values() if label(e))
    unique = {eid for eid, e in raw.items() if label(e) and names[label(e)] == 1}
    out: list[dict] = []
    dropped: Counter = Counter()
    sets = []
    for noun, (classes, plural) in CLASSES.items():
        members = [eid for eid, e in raw.items() if items(e, "P31") & classes]
        sets.append((noun, plural, None, members))
        for country, demonym in DEMONYMS.items():
            if country not in unique:  # a country the dump has no name for cannot be asked about
                dropped["country without a label in the dump"] += 1
                continue
            local = [eid for eid in members if country in items(raw[eid], "P17") and eid != country]
            if len(local) >= 3:
                sets.append((noun, plural, demonym, local))
    for noun, plural, demonym, members in sets:
        for prop, words in PROPERTIES.items():
            values = {eid: v for eid in members if (v := value(raw[eid], prop)) is not None}
            if len(values) < 3:
                dropped["fewer than 3 members with a value"] += 1
                continue
            if len({unit for _, unit in values.values()}) > 1:
                dropped["mixed units"] += 1
                continue
            amounts = {eid: a for eid, (a, _) in values.items()}
            where = f"{demonym} {noun}" if demonym else noun
            where_plural = f"{demonym} {plural}" if demonym else plural
            ranked = sorted(set(amounts.values()), reverse=True)
            largest = " ".join(words["most"].split()[1:])  # "largest area"
            smallest = " ".join(words["least"].split()[1:])  # "smallest area"
            for kind, place, text in (
                ("superlative", ranked[0], f"Which {where} has {words['most']}?"),
                ("superlative", ranked[-1], f"Which {where} has {words['least']}?"),
                ("ordinal", ranked[1], f"Which {where} has the second {largest}?"),
                ("ordinal", ranked[-2], f"Which {where} has the second {smallest}?"),
            ):
                winners = [eid for eid, a in amounts.items() if a == place]
                if len(winners) != 1 or winners[0] not in unique:
                    dropped[f"{kind}: tie or unnamed answer"] += 1
                    continue
                out.append({"question": text, "answers": [label(raw[winners[0]])], "entity": winners[0],
                            "type": kind, "property": prop, "set_size": len(members)})  # fmt: skip
            if {unit for _, unit in values.values()} == {words["unit"]}:  # a threshold in the stated unit
                middle = sorted(amounts.values())[len(amounts) // 2]
                threshold = float(f"{middle:.1g}")  # a round number near the median
                count = sum(a > threshold for a in amounts.values())
                asked = words["count"].format(n=number(threshold))
                out.append({"question": f"How many {where_plural} {asked}?", "answers": [str(count)],
                            "type": "count", "property": prop, "set_size": len(members)})  # fmt: skip
                if prop == "P1082":
                    fewer = sum(a < threshold for a in amounts.values())
                    out.append({"question": f"How many {where_plural} have fewer than {number(threshold)} "
                                "inhabitants?", "answers": [str(fewer)], "type": "count", "property": prop,
                                "set_size": len(members)})  # fmt: skip
            total = sum(amounts.values())
            if prop != "P2044":  # a total elevation means nothing
                out.append({"question": f"What is the total {words['noun']} of the {where_plural}?",
                            "answers": numbers(round(total, 2)), "type": "aggregate", "property": prop,
                            "set_size": len(members)})  # fmt: skip
            out.append({"question": f"What is the average {words['noun']} of the {where_plural}?",
                        "answers": numbers(round(total / len(amounts), 2)), "type": "aggregate",
                        "property": prop, "set_size": len(members)})  # fmt: skip
            named = sorted((eid for eid in amounts if eid in unique), key=lambda e: -amounts[e])
            if len(named) >= 3:
                trio = [named[0], named[len(named) // 2], named[-1]]
                trio_sorted = sorted(trio, key=lambda e: label(raw[e]))
                if len({amounts[e] for e in trio}) == 3:
                    first, second, third = (label(raw[e]) for e in trio_sorted)
                    listed = f"{first}, {second} and {third}"
                    out.append({"question": f"Which of {listed} has {words['most']}?",
                                "answers": [label(raw[named[0]])], "entity": named[0], "type": "comparison",
                                "property": prop, "set_size": 3})  # fmt: skip
    for i, q in enumerate(out, start=1):
        q["id"] = f"kgset-{i:04d}"
    return out, dropped


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--dump", type=Path, action="append", required=True)
    parser.add_argument("--out", type=Path, required=True)
    args = parser.parse_args()
    out, dropped = questions(entities(args.dump))
    args.out.parent.mkdir(parents=True, exist_ok=True)
    with open(args.out, "w") as f:
        for q in out:
            f.write(json.dumps({"id": q.pop("id"), **q}, ensure_ascii=False) + "\n")
    print(f"{len(out)} questions: {dict(Counter(q['type'] for q in out))}")
    print(f"dropped: {dict(dropped)}")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
