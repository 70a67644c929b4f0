"""Wikidata's data model as the natural questions' answer key reads it: the dumps, ranks, points in time,
units, and the strings a value may be written as. Standard library only, like gold.py, and for the same
reason: the answer key must not share a bug with the code it grades (no ``schemas``, ``ingest``, ``index``,
``query``)."""

from __future__ import annotations

import bz2
import json
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from decimal import Decimal
from pathlib import Path

POINT_IN_TIME, END_TIME, INSTANCE_OF, COUNTRY, CONTINENT = "P585", "P582", "P31", "P17", "P30"
YEAR_PRECISION, DAY_PRECISION = 9, 11
DIMENSIONLESS = "1"
# Units by item id: (English label, dimension, factor to the dimension's base unit). Unit items are not
# in the dumps, so their labels are written here (from Wikidata), as benchmarks/kg_questions.py does.
UNITS = {
    "Q712226": ("square kilometre", "area", Decimal(1)),
    "Q25343": ("square metre", "area", Decimal("0.000001")),
    "Q232291": ("square mile", "area", Decimal("2.589988110336")),
    "Q11573": ("metre", "length", Decimal(1)),
    "Q828224": ("kilometre", "length", Decimal(1000)),
    "Q3710": ("foot", "length", Decimal("0.3048")),
    "Q4917": ("United States dollar", "money", Decimal(1)),
    "Q4916": ("euro", "money", None),  # no fixed rate: never converted
    "Q174728": ("centimetre", "length", Decimal("0.01")),
    "Q11229": ("percent", "percent", Decimal(1)),
    "Q24564698": ("years old", "age", Decimal(1)),
    "Q550207": ("Geary-Khamis dollar", "money at purchasing power parity", Decimal(1)),
}
BASE_UNITS = {"area": "Q712226", "length": "Q11573", "money": "Q4917"}
CONVERTED_PLACES = Decimal("0.0001")  # converted amounts are written rounded to 4 decimal places
NUMBER_WORDS = ("zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
                "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen",
                "eighteen", "nineteen", "twenty")  # fmt: skip
MONTHS = ("January", "February", "March", "April", "May", "June", "July", "August", "September", "October",
          "November", "December")  # fmt: skip
COMPARATORS = {">": Decimal.__gt__, ">=": Decimal.__ge__, "<": Decimal.__lt__, "<=": Decimal.__le__}
_TIME = re.compile(r"^([+-])(\d+)-(\d\d)-(\d\d)T")
_AMOUNT = re.compile(r"^([+-]?)(\d+)(?:\.(\d+))?$")


class GoldError(ValueError):
    """A spec whose gold cannot be computed: the run stops and says which record and why."""


# --- reading the dumps -----------------------------------------------------------------------------


def read_entities(paths: Iterable[Path]) -> dict[str, dict]:
    """Every entity of the dumps by id; of several revisions of one id, the one with the highest
    ``lastrevid`` (a stream dump holds each edit's revision, in the order the edits arrived)."""
    entities: dict[str, dict] = {}
    for path in paths:
        with bz2.open(path, "rt", encoding="utf-8") as lines:
            for number, line in enumerate(lines, start=1):
                text = line.strip().rstrip(",")
                if not text.startswith("{"):
                    continue
                try:
                    entity = json.loads(text)
                except json.JSONDecodeError as err:
                    raise GoldError(f"{path}, line {number}: not an entity JSON object ({err})") from err
                kept = entities.get(entity["id"])
                if kept is None or entity.get("lastrevid", 0) >= kept.get("lastrevid", 0):
                    entities[entity["id"]] = entity
    return entities


def read_wiki_text(paths: Iterable[Path]) -> str:
    """The Wikipedia dumps' XML, lower-cased: a fictional name must not occur anywhere in it."""
    return "\n".join(bz2.open(p, "rt", encoding="utf-8").read() for p in paths).casefold()


@dataclass(frozen=True)
class Dump:
    entities: dict[str, dict]
    wiki_text: str

    def entity(self, qid: str) -> dict:
        if qid not in self.entities:
            raise GoldError(f"{qid} is not in the dumps")
        return self.entities[qid]

    def label(self, qid: str) -> str | None:
        entity = self.entities.get(qid)
        return ((entity or {}).get("labels") or {}).get("en", {}).get("value") or None

    def name(self, qid: str) -> str:
        """The English label of an entity the gold names; an unlabeled one has no answer to give."""
        label = self.label(qid)
        if label is None:
            raise GoldError(f"{qid} has no English label in the dumps: the answer would be a bare id")
        return label

    def names(self, qid: str) -> list[str]:
        """The label first, then the English aliases a reader might write (not codes or flag emoji)."""
        label = self.name(qid)
        aliases = [a["value"] for a in (self.entity(qid).get("aliases") or {}).get("en", [])]
        wordy = [a for a in aliases if len(a) > 2 and any(c.isalpha() for c in a)]
        return list(dict.fromkeys([label, *wordy]))

    def statements(self, qid: str, prop: str) -> list[dict]:
        return (self.entity(qid).get("claims") or {}).get(prop, [])


# --- statements ------------------------------------------------------------------------------------


def best_rank(statements: list[dict]) -> list[dict]:
    """The preferred statements if any, else the normal ones; deprecated ones never count."""
    preferred = [s for s in statements if s.get("rank") == "preferred"]
    return preferred or [s for s in statements if s.get("rank") == "normal"]


def with_values(statements: list[dict], what: str) -> list[dict]:
    """The statements, none of them an unknown (somevalue) or absent (novalue) value."""
    if not statements:
        raise GoldError(f"{what}: no best-rank statement")
    if any(s["mainsnak"].get("snaktype") != "value" for s in statements):
        raise GoldError(f"{what}: a best-rank value is unknown or 'no value'")
    return statements


def with_values_or_empty(statements: list[dict]) -> list[dict]:
    """The statements with a value, silently without the unknown and 'no value' ones."""
    return [s for s in statements if s["mainsnak"].get("snaktype") == "value"]


def qualifier_times(statement: dict, prop: str) -> list[dict]:
    snaks = (statement.get("qualifiers") or {}).get(prop, [])
    return [s["datavalue"]["value"] for s in snaks if s.get("snaktype") == "value"]


def time_key(statement: dict) -> tuple[int, int, int]:
    """When a statement holds (its latest P585); an undated statement sorts before every dated one."""
    times = [parse_time(t)[:3] for t in qualifier_times(statement, POINT_IN_TIME)]
    return max(times) if times else (-(10**9), 0, 0)


def current(statements: list[dict]) -> list[dict]:
    """The best-rank statements with the latest point in time (all of them when none is dated)."""
    best = best_rank(statements)
    if not best:
        return []
    latest = max(time_key(s) for s in best)
    return [s for s in best if time_key(s) == latest]


def in_year(statements: list[dict], year: int, what: str) -> dict:
    """The one value the non-deprecated statements dated in ``year`` agree on."""
    dated = [
        s
        for s in statements
        if s.get("rank") != "deprecated"
        and s["mainsnak"].get("snaktype") == "value"
        and any(
            t["precision"] >= YEAR_PRECISION and parse_time(t)[0] == year
            for t in qualifier_times(s, POINT_IN_TIME)
        )
    ]
    values = {json.dumps(s["mainsnak"]["datavalue"]["value"], sort_keys=True) for s in dated}
    if len(values) != 1:
        raise GoldError(f"{what}: {len(values)} different values dated {year}; need exactly one")
    return dated[0]["mainsnak"]["datavalue"]["value"]


def dated_years(statements: list[dict]) -> list[int]:
    return sorted(
        {
            parse_time(t)[0]
            for s in statements
            if s.get("rank") != "deprecated"
            for t in qualifier_times(s, POINT_IN_TIME)
            if t["precision"] >= YEAR_PRECISION
        }
    )


def item_ids(statements: list[dict]) -> list[str]:
    return [s["mainsnak"]["datavalue"]["value"]["id"] for s in statements]


def parse_time(value: dict) -> tuple[int, int, int, int]:
    """(signed year, month, day, precision) of a Wikidata time value."""
    match = _TIME.match(value["time"])
    if match is None:
        raise GoldError(f"not a Wikidata timestamp: {value['time']!r}")
    sign, year, month, day = match.groups()
    return (-int(year) if sign == "-" else int(year)), int(month), int(day), value["precision"]


# --- values and their accepted strings -------------------------------------------------------------


@dataclass(frozen=True)
class Answer:
    """A value's accepted strings (canonical first), its unit, and strings in other units."""

    strings: list[str]
    unit: str | None = None
    conversions: dict[str, list[str]] = field(default_factory=dict)


def number_strings(text: str) -> list[str]:
    """'+11150516' -> ['11,150,516', '11150516']; '2570.0' also as '2,570' and '2570'."""
    match = _AMOUNT.match(text)
    if match is None:
        raise GoldError(f"amount not a plain decimal: {text!r}")
    sign, whole, fraction = match.groups()
    sign = "-" if sign == "-" else ""
    forms = []
    for tail in (fraction, (fraction or "").rstrip("0") or None):
        dot = f".{tail}" if tail else ""
        forms += [f"{sign}{int(whole):,}{dot}", f"{sign}{int(whole)}{dot}"]
    return list(dict.fromkeys(forms))


def decimal_text(value: Decimal) -> str:
    """A computed decimal written plainly (no exponent), rounded to ``CONVERTED_PLACES``."""
    rounded = value.quantize(CONVERTED_PLACES).normalize()
    return format(rounded, "f")


def unit_of(value: dict) -> str | None:
    unit = value["unit"]
    return None if unit == DIMENSIONLESS else unit.rsplit("/", 1)[-1]


def unit_label(unit: str | None) -> str | None:
    if unit is None:
        return None
    if unit not in UNITS:
        raise GoldError(f"unit {unit} has no label here: add it to UNITS")
    return UNITS[unit][0]


def base_amount(value: dict) -> tuple[Decimal, str | None]:
    """A quantity in its dimension's base unit (km², m, US dollar), exactly; dimensionless as is."""
    amount, unit = Decimal(value["amount"]), unit_of(value)
    if unit is None:
        return amount, None
    label, dimension, factor = UNITS.get(unit, (None, None, None))
    if factor is None:
        raise GoldError(f"unit {unit} ({label}) has no conversion to a base unit")
    return amount * factor, dimension


def quantity_answer(values: list[dict]) -> Answer:
    """The amounts as written, in their one unit, plus their value in the base unit when that differs."""
    units = {unit_of(v) for v in values}
    if len(units) > 1:
        raise GoldError(f"values in different units: {sorted(map(str, units))}")
    unit = units.pop()
    strings = list(dict.fromkeys(s for v in values for s in number_strings(v["amount"])))
    conversions: dict[str, list[str]] = {}
    if unit is not None and UNITS.get(unit, ("", "", None))[2] not in (None, Decimal(1)):
        base = BASE_UNITS[UNITS[unit][1]]
        converted = [s for v in values for s in number_strings(decimal_text(base_amount(v)[0]))]
        conversions[UNITS[base][0]] = list(dict.fromkeys(converted))
    return Answer(strings, unit_label(unit), conversions)


def time_strings(value: dict) -> list[str]:
    """The year first; with day precision also the date as people write it."""
    year, month, day, precision = parse_time(value)
    if precision < YEAR_PRECISION:
        raise GoldError(f"time {value['time']} is coarser than a year")
    if year < 0:
        return [f"{-year} BC", f"{-year} BCE"]
    strings = [str(year)]
    if precision >= DAY_PRECISION and month and day:
        name = MONTHS[month - 1]
        strings += [f"{day} {name} {year}", f"{name} {day}, {year}", f"{year}-{month:02d}-{day:02d}"]
    return strings


def value_answer(dump: Dump, statements: list[dict], what: str) -> Answer:
    """Accepted strings for the values of statements of one datatype."""
    values = [s["mainsnak"]["datavalue"] for s in with_values(statements, what)]
    kinds = {v["type"] for v in values}
    if len(kinds) != 1:
        raise GoldError(f"{what}: values of several types {sorted(kinds)}")
    kind, raw = kinds.pop(), [v["value"] for v in values]
    if kind == "quantity":
        return quantity_answer(raw)
    if kind == "time":
        return Answer(list(dict.fromkeys(s for v in raw for s in time_strings(v))))
    if kind == "wikibase-entityid":
        return Answer(list(dict.fromkeys(n for v in raw for n in dump.names(v["id"]))))
    if kind == "string":
        return Answer(list(dict.fromkeys(raw)))
    if kind == "monolingualtext":
        english = [v["text"] for v in raw if v["language"] == "en"]
        if not english:
            raise GoldError(f"{what}: no English text")
        return Answer(list(dict.fromkeys(english)))
    raise GoldError(f"{what}: values of type {kind} are not asked about here")


def comparable(statement: dict) -> tuple[Decimal, str | None]:
    """A value reduced to something ordered: a quantity in its base unit, a time as its year."""
    value = statement["mainsnak"]["datavalue"]
    if value["type"] == "quantity":
        return base_amount(value["value"])
    if value["type"] == "time":
        return Decimal(parse_time(value["value"])[0]), "time"
    raise GoldError(f"a {value['type']} value cannot be compared")


def plain(value: Decimal) -> str:
    return format(value.normalize(), "f")
