"""A multi-entity KG question set written from the sample Wikidata dumps, gold read from the raw JSON.

    python benchmarks/kg_set_questions.py --dump data/samples/wikidata/wikidata-sample-items.json.bz2 \\
        --dump data/samples/wikidata/wikidata-api-stream-sample.json.bz2 \\
        --out benchmarks/kg_set_questions/questions.jsonl

Sets: the instances of a class (cities, mountains, lakes, countries), optionally in one country, and
explicit lists of three entities. Properties: population (P1082), area (P2046), elevation (P2044).
Kinds: superlative (largest and smallest), ordinal (second largest), count over a threshold,
aggregate (total, average), comparison within an explicit list, and — added second, in
``more_questions`` — variance (the sample variance and standard deviation), distribution (is a
quantity normally distributed), correlation (Pearson's r of two quantities, and whether it is
significant), variance test (do two sets differ in a quantity's variance), and relationship (which
country the most members of a set are in; how many members are in a country).

Why no project code: this file is the answer key. The gold is computed with the standard library from
Wikidata's documented data model, and the p-values with SciPy's reference tests (Shapiro-Wilk,
Pearson, Levene with the median); it must never import ``schemas``, ``ingest``, ``index`` or ``query``.

Rules the gold follows:
- an entity's value: its best-rank statements (preferred if any, else normal; never deprecated; a
  ``somevalue``/``novalue`` snak means no value), the latest point in time (P585) first;
- a set is the entities whose best-rank P31 (and P17, for a country) name the set's classes (and
  country), the country itself excluded; a set needs ≥ 3 members with a value, all in one unit;
- a set named by a country needs that country's English label in the dumps;
- a question counts, ranks or sums only the members that have a value (the engine says how many had
  none); a superlative or ordinal with a tie at the asked place is dropped; an entity needs an English
  label no other entity of the dumps has, to be named in a list or as an answer;
- a test's answer is "yes" when its p-value is below 0.05 ("is it normally distributed": "no" then);
  a test needs ≥ 5 values in each set it looks at; r is given to two decimals;
- a relationship counts a member in a country by its best-rank P17; a country needs a unique label.
"""

from __future__ import annotations

import argparse
import bz2
import json
import statistics
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
    out += more_questions(raw, sets, unique)
    for i, q in enumerate(out, start=1):
        q["id"] = f"kgset-{i:04d}"
    return out, dropped


MIN_TEST_VALUES = 5
ALPHA = 0.05


def yes(p: float) -> str:
    return "yes" if p < ALPHA else "no"


def p_value(p: float) -> float:
    """A p-value to 10 significant digits. SciPy's tests call libm's special functions, whose last digits
    differ between CPUs (libm picks its code path by CPU): the full float would make the committed set
    differ from one machine to the next, while a verdict read at ``ALPHA`` needs two digits at most."""
    return float(f"{float(p):.10g}")


def more_questions(raw: dict[str, dict], sets: list, unique: set[str]) -> list[dict]:
    """Variance, distribution, correlation, variance-test and relationship questions over ``sets``."""
    from scipy import stats  # the reference tests; only the p-values come from here

    out: list[dict] = []
    one_unit: dict[tuple[int, str], dict[str, float]] = {}
    for s_index, (_, plural, demonym, members) in enumerate(sets):
        where = f"{demonym} {plural}" if demonym else plural
        for prop, words in PROPERTIES.items():
            values = {eid: v for eid in members if (v := value(raw[eid], prop)) is not None}
            if len(values) < MIN_TEST_VALUES or len({u for _, u in values.values()}) > 1:
                continue
            amounts = {eid: a for eid, (a, _) in values.items()}
            one_unit[(s_index, prop)] = amounts
            xs = list(amounts.values())
            noun = words["noun"]
            for text, gold in (
                (f"What is the variance of the {noun} of the {where}?", statistics.variance(xs)),
                (f"What is the standard deviation of the {noun} of the {where}?", statistics.stdev(xs)),
            ):
                out.append({"question": text, "answers": numbers(round(gold, 2)), "type": "variance",
                            "property": prop, "set_size": len(members)})  # fmt: skip
            if len(set(xs)) > 1:
                shapiro = stats.shapiro(xs)
                out.append({"question": f"Is the {noun} of the {where} normally distributed?",
                            "answers": ["no" if shapiro.pvalue < ALPHA else "yes"], "type": "distribution",
                            "property": prop, "set_size": len(members),
                            "p_value": p_value(shapiro.pvalue)})  # fmt: skip
        props = [p for p in PROPERTIES if (s_index, p) in one_unit]
        for i, first in enumerate(props):
            for second in props[i + 1 :]:
                a, b = one_unit[(s_index, first)], one_unit[(s_index, second)]
                both = sorted(set(a) & set(b))
                if len(both) < MIN_TEST_VALUES:
                    continue
                xs, ys = [a[e] for e in both], [b[e] for e in both]
                if len(set(xs)) < 2 or len(set(ys)) < 2:
                    continue
                r = statistics.correlation(xs, ys)
                pearson = stats.pearsonr(xs, ys)
                pair = f"the {PROPERTIES[first]['noun']} and the {PROPERTIES[second]['noun']} of the {where}"
                out.append({"question": f"What is the correlation between {pair}?", "answers": [f"{r:.2f}"],
                            "type": "correlation", "property": f"{first},{second}",
                            "set_size": len(both)})  # fmt: skip
                out.append({"question": f"Is there a correlation between {pair}?",
                            "answers": [yes(float(pearson.pvalue))], "type": "correlation",
                            "property": f"{first},{second}", "set_size": len(both),
                            "p_value": p_value(pearson.pvalue)})  # fmt: skip
    keys = sorted(one_unit)
    for i, (s1, prop) in enumerate(keys):
        for s2, prop2 in keys[i + 1 :]:
            if prop2 != prop or set(sets[s1][3]) & set(sets[s2][3]):
                continue  # one quantity, two disjoint sets
            a, b = one_unit[(s1, prop)], one_unit[(s2, prop)]
            name1 = f"{sets[s1][2]} {sets[s1][1]}" if sets[s1][2] else sets[s1][1]
            name2 = f"{sets[s2][2]} {sets[s2][1]}" if sets[s2][2] else sets[s2][1]
            levene = stats.levene(list(a.values()), list(b.values()), center="median")
            out.append({"question": f"Do the {name1} and the {name2} differ in the variance of their "
                        f"{PROPERTIES[prop]['noun']}?", "answers": [yes(float(levene.pvalue))],
                        "type": "variance test", "property": prop, "set_size": len(a) + len(b),
                        "p_value": p_value(levene.pvalue)})  # fmt: skip
    for _, plural, demonym, members in sets:
        if demonym or plural == "countries":
            continue  # a set already in one country; a country's country is itself
        by_country = Counter(c for eid in members for c in items(raw[eid], "P17") if c != eid)
        if not by_country:
            continue
        ranked = by_country.most_common()
        top = [c for c, n in ranked if n == ranked[0][1]]
        if len(top) == 1 and top[0] in unique:
            out.append({"question": f"Which country has the most {plural}?", "answers": [label(raw[top[0]])],
                        "entity": top[0], "type": "relationship", "property": "P17",
                        "set_size": len(members)})  # fmt: skip
        for country, n in ranked:
            if country in unique:
                out.append({"question": f"How many of the {plural} are in {label(raw[country])}?",
                            "answers": [str(n)], "type": "relationship", "property": "P17",
                            "set_size": len(members)})  # fmt: skip
    return out


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
