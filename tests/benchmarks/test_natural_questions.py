"""benchmarks/natural_questions: the hand-written question set's committed gold is what gold.py makes of the
sample dumps, the answer key imports no project code, and a few golds agree with the raw JSON read here."""

from __future__ import annotations

import ast
import json
import random
import re
import sys
from collections import Counter
from decimal import Decimal
from pathlib import Path
from types import ModuleType

import pytest

from tests.conftest import REPO, WIKIDATA_API, WIKIDATA_ITEMS, load_script, raw_entities

FOLDER = REPO / "benchmarks" / "natural_questions"
GOLD = FOLDER / "gold.py"
COMMITTED = FOLDER / "questions.jsonl"
KINDS = {"lookup", "lookup_year", "chain", "comparison", "count", "superlative", "yes_no", "unanswerable"}
BARE_ID = re.compile(r"[QPL]\d+")
STDLIB = set(sys.stdlib_module_names) | {"__future__"}


@pytest.fixture(scope="module")
def gold() -> ModuleType:
    return load_script(GOLD)


@pytest.fixture(scope="module")
def dump(gold: ModuleType):
    return gold.Dump(gold.read_entities(gold.DUMPS), gold.read_wiki_text(gold.WIKIS))


@pytest.fixture(scope="module")
def records() -> dict[str, dict]:
    rows = [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]
    return {r["id"]: r for r in rows}


def test_the_committed_set_is_what_gold_makes(gold: ModuleType, tmp_path: Path) -> None:
    out = tmp_path / "questions.jsonl"
    assert gold.main(["--out", str(out)]) == 0
    made = [json.loads(line) for line in out.read_text(encoding="utf-8").splitlines()]
    committed = [json.loads(line) for line in COMMITTED.read_text(encoding="utf-8").splitlines()]
    regenerate = "re-run the command in benchmarks/natural_questions/README.md"
    assert len(made) == len(committed), regenerate
    differ = [(m["id"], c["id"]) for m, c in zip(made, committed, strict=True) if m != c]
    assert not differ, f"{regenerate}: {differ[:5]}"


@pytest.mark.parametrize("script", [GOLD, FOLDER / "dump_model.py"], ids=lambda p: p.name)
def test_the_answer_key_imports_no_project_code(script: Path) -> None:
    tree = ast.parse(script.read_text(encoding="utf-8"))
    modules = {a.name for n in ast.walk(tree) if isinstance(n, ast.Import) for a in n.names}
    modules |= {n.module or "" for n in ast.walk(tree) if isinstance(n, ast.ImportFrom)}
    assert not {m.split(".")[0] for m in modules} & {"schemas", "ingest", "index", "query", "dags", "tests"}
    assert {m.split(".")[0] for m in modules} <= STDLIB | {"dump_model"}, modules


def test_size_kinds_and_folds(records: dict[str, dict]) -> None:
    assert len(records) >= 150
    kinds = Counter(r["kind"] for r in records.values())
    assert set(kinds) == KINDS
    assert min(kinds.values()) >= 20, kinds
    for kind in KINDS:
        folds = Counter(r["fold"] for r in records.values() if r["kind"] == kind)
        named = {"tune", "report", "holdout", "fold3", "fold4", "fold5", "fold6", "fold7", "fold8", "fold9"}
        named |= {"fold10", "fold11", "fold12", "fold13", "fold14", "fold15"}
        assert set(folds) == named, (kind, folds)
        assert abs(folds["tune"] - folds["report"]) <= 1, (kind, folds)
        assert folds["holdout"] >= 10, (kind, folds)
        assert folds["fold3"] >= 13, (kind, folds)
        assert folds["fold4"] == 13, (kind, folds)
        assert folds["fold5"] == 13, (kind, folds)
        assert folds["fold6"] == 13, (kind, folds)
        assert folds["fold7"] == 13, (kind, folds)
        assert folds["fold8"] == 13, (kind, folds)
        assert folds["fold9"] == 13, (kind, folds)
        assert folds["fold10"] == 13, (kind, folds)
        assert folds["fold11"] == 13, (kind, folds)
        assert folds["fold12"] == 13, (kind, folds)
        assert folds["fold13"] == 13, (kind, folds)
        assert folds["fold14"] == 13, (kind, folds)
        assert folds["fold15"] == 13, (kind, folds)
    assert sum(r["fold"] == "holdout" for r in records.values()) >= 80
    assert sum(r["fold"] == "fold3" for r in records.values()) >= 104
    assert sum(r["fold"] == "fold4" for r in records.values()) == 104
    assert sum(r["fold"] == "fold5" for r in records.values()) == 104
    assert sum(r["fold"] == "fold6" for r in records.values()) == 104
    assert sum(r["fold"] == "fold7" for r in records.values()) == 104
    assert sum(r["fold"] == "fold8" for r in records.values()) == 104
    assert sum(r["fold"] == "fold9" for r in records.values()) == 104
    assert sum(r["fold"] == "fold10" for r in records.values()) == 104
    assert sum(r["fold"] == "fold11" for r in records.values()) == 104
    assert sum(r["fold"] == "fold12" for r in records.values()) == 104
    assert sum(r["fold"] == "fold13" for r in records.values()) == 104
    assert sum(r["fold"] == "fold14" for r in records.values()) == 104
    assert sum(r["fold"] == "fold15" for r in records.values()) == 104
    assert len({r["question"].casefold() for r in records.values()}) == len(records)


def test_the_holdout_fold_is_named_in_its_source_lines(gold: ModuleType, records: dict[str, dict]) -> None:
    """The holdout, fold3, fold4, fold5, fold6, fold7, fold8, fold9, fold10, fold11, fold12, fold13, fold14
    and fold15 questions were written after the split: each source line says its fold, the shuffle leaves
    them out, so the 207 older questions keep the folds they had. Ids run past three digits from fold9 on
    (nq-938 to nq-1041, fold10 nq-1042 to nq-1145, fold11 nq-1146 to nq-1249, fold12 nq-1250 to nq-1353,
    fold13 nq-1354 to nq-1457, fold14 nq-1458 to nq-1561, fold15 nq-1562 to nq-1665)."""
    source = [json.loads(line) for line in gold.SOURCE.read_text(encoding="utf-8").splitlines()]
    later = ("holdout", "fold3", "fold4", "fold5", "fold6", "fold7", "fold8", "fold9", "fold10", "fold11")
    later += ("fold12", "fold13", "fold14", "fold15")
    for fold in later:
        named = {r["id"] for r in source if r.get("fold") == fold}
        assert named == {i for i, r in records.items() if r["fold"] == fold}
    assert not {r["id"] for r in source if r.get("fold") not in (None, *later)}
    fold3 = sorted(int(r["id"][3:]) for r in source if r.get("fold") == "fold3")
    assert fold3[0] == 314 and fold3 == list(range(314, 314 + len(fold3)))
    firsts = {
        "fold4": 418,
        "fold5": 522,
        "fold6": 626,
        "fold7": 730,
        "fold8": 834,
        "fold9": 938,
        "fold10": 1042,
        "fold11": 1146,
        "fold12": 1250,
        "fold13": 1354,
        "fold14": 1458,
        "fold15": 1562,
    }
    for fold, first in firsts.items():  # each later fold is 104 ids in a row, after the one before
        ids = sorted(int(r["id"][3:]) for r in source if r.get("fold") == fold)
        assert ids == list(range(first, first + 104)), fold
    assert all(re.fullmatch(r"nq-\d{3,4}", r["id"]) for r in source)
    older = [r for r in source if "fold" not in r]
    assert len(older) == 207 and all(int(r["id"][3:]) <= 207 for r in older)


def test_answers_are_names_numbers_or_refusals_never_bare_ids(records: dict[str, dict]) -> None:
    for r in records.values():
        assert r["answers"] and all(a.strip() for a in r["answers"]), r["id"]
        assert not any(BARE_ID.fullmatch(a) for a in r["answers"]), r["id"]
        refusal = r["answers"] == ["unknown"]
        assert refusal == (r["kind"] == "unanswerable"), r["id"]
        if r["kind"] == "yes_no":
            assert r["answers"] in (["yes"], ["no"]), r["id"]


def test_the_split_is_seeded_and_stratified(gold: ModuleType, records: dict[str, dict]) -> None:
    named = ("holdout", "fold3", "fold4", "fold5", "fold6", "fold7", "fold8", "fold9", "fold10", "fold11")
    named += ("fold12", "fold13", "fold14", "fold15")

    def unsplit() -> list[dict]:  # a fold the source line names (holdout, fold3, ...) is kept, not shuffled
        shuffled = [{"id": r["id"], "kind": r["kind"], **({"fold": r["fold"]} if r["fold"] in named else {})}
                    for r in records.values()]  # fmt: skip
        random.Random(1).shuffle(shuffled)
        return shuffled

    committed = {i: r["fold"] for i, r in records.items()}
    split = unsplit()
    gold.assign_folds(split)
    assert {r["id"]: r["fold"] for r in split} == committed
    split = unsplit()
    gold.assign_folds(split, seed=gold.SEED + 1)
    moved = {r["id"]: r["fold"] for r in split}
    assert moved != committed
    kept = {i: f for i, f in committed.items() if f in named}
    assert {i: f for i, f in moved.items() if f in named} == kept


# --- golds read by hand from the raw JSON ----------------------------------------------------------


def entity(qid: str) -> dict:
    return raw_entities(WIKIDATA_ITEMS).get(qid) or raw_entities(WIKIDATA_API)[qid]


def claims(qid: str, prop: str) -> list[dict]:
    return entity(qid)["claims"][prop]


def test_count_of_germanys_neighbours(records: dict[str, dict]) -> None:
    preferred = [c for c in claims("Q183", "P47") if c["rank"] == "preferred"]
    assert len(preferred) == 9  # the historical neighbours (GDR, Czechoslovakia, ...) are normal rank
    ids = [c["mainsnak"]["datavalue"]["value"]["id"] for c in preferred]
    assert records["nq-106"]["answers"][0] == "9" and records["nq-106"]["evidence"]["counted"] == ids
    assert records["nq-070"]["answers"][0] == "9"  # the same count, reached from Kiel through P17


def test_value_in_a_year_and_a_year_the_dump_lacks(records: dict[str, dict]) -> None:
    dated = {
        c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]: c["mainsnak"]["datavalue"]["value"]
        for c in claims("Q31", "P1082")
    }
    assert dated["1995"]["amount"] == "+10136811"
    assert records["nq-030"]["answers"] == ["10,136,811", "10136811"]
    assert "2015" not in dated and max(dated) == "2014"
    assert records["nq-183"]["answers"] == ["unknown"]


def test_area_in_square_metres_is_converted(records: dict[str, dict]) -> None:
    (area,) = claims("Q807", "P2046")
    value = area["mainsnak"]["datavalue"]["value"]
    assert value["amount"] == "+41370000" and value["unit"].endswith("/Q25343")  # square metres
    lausanne = records["nq-017"]
    assert lausanne["answers"][0] == "41,370,000" and lausanne["unit"] == "square metre"
    assert lausanne["conversions"] == {"square kilometre": ["41.37"]}
    tours = claims("Q288", "P2046")[0]["mainsnak"]["datavalue"]["value"]
    assert tours["amount"] == "+34.36"  # km²: Lausanne (41.37 km²) is the larger
    assert records["nq-082"]["answers"][0] == "Lausanne"


def test_comparison_answers_the_name(records: dict[str, dict]) -> None:
    def current_population(qid: str) -> int:
        (best,) = [c for c in claims(qid, "P1082") if c["rank"] == "preferred"]
        return int(best["mainsnak"]["datavalue"]["value"]["amount"])

    assert current_population("Q586") == 327919 and current_population("Q1707") == 247236
    assert records["nq-080"]["answers"] == ["Bonn"]
    assert records["nq-164"]["answers"] == ["no"]  # "Does Kiel have more residents than Bonn?"


def test_a_former_capital_is_not_the_capital(records: dict[str, dict]) -> None:
    by_value = {c["mainsnak"]["datavalue"]["value"]["id"]: c for c in claims("Q183", "P36")}
    assert by_value["Q586"]["rank"] == "normal" and "P582" in by_value["Q586"]["qualifiers"]  # Bonn, ended
    assert by_value["Q64"]["rank"] == "preferred"  # Berlin, an item outside the dumps
    assert records["nq-171"]["answers"] == ["no"]
    assert records["nq-203"]["answers"] == ["unknown"]  # Berlin's population is not in the dumps


def test_superlative_members_and_winner(records: dict[str, dict]) -> None:
    record = records["nq-131"]  # the most populous city in Germany
    assert record["answers"][0] == "Düsseldorf"
    assert record["evidence"]["members"]["Q1718"] == ["613230"]
    assert max(record["evidence"]["members"].values(), key=lambda v: int(v[0])) == ["613230"]
    (best,) = [c for c in claims("Q1718", "P1082") if c["rank"] == "preferred"]
    assert best["mainsnak"]["datavalue"]["value"]["amount"] == "+613230"


def test_a_mention_of_the_winner_is_accepted(records: dict[str, dict]) -> None:
    (born,) = claims("Q9235", "P569")
    assert born["mainsnak"]["datavalue"]["value"]["time"].startswith("+1770")  # Quine: 1908
    assert records["nq-085"]["answers"][0] == "Georg Wilhelm Friedrich Hegel"
    assert records["nq-085"]["answers"][-1] == "Hegel"


def test_holdout_a_deprecated_language_is_not_counted(records: dict[str, dict]) -> None:
    by_value = {c["mainsnak"]["datavalue"]["value"]["id"]: c for c in claims("Q801", "P37")}
    assert by_value["Q9288"]["rank"] == "preferred"  # Hebrew
    assert by_value["Q13955"]["rank"] == "deprecated" and "P582" in by_value["Q13955"]["qualifiers"]  # Arabic
    assert records["nq-265"]["fold"] == "holdout"
    assert records["nq-265"]["answers"] == ["1", "one"]  # "How many official languages has Israel got?"


@pytest.mark.parametrize(
    ("qid", "fold", "in_m2", "m2", "in_km2", "km2"),
    [
        ("nq-260", "holdout", "Q3874", "+72560000", "Q3802", "+76.49"),  # Gießen against Hanau
        ("nq-353", "fold3", "Q807", "+41370000", "Q952", "+42.68"),  # Lausanne against Reggiolo
    ],
)
def test_square_metres_against_square_kilometres(
    records: dict[str, dict], qid: str, fold: str, in_m2: str, m2: str, in_km2: str, km2: str
) -> None:
    """The larger in km² wins, though read as raw numbers the one given in square metres would."""
    (metres,) = claims(in_m2, "P2046")
    (kilometres,) = claims(in_km2, "P2046")
    a, b = metres["mainsnak"]["datavalue"]["value"], kilometres["mainsnak"]["datavalue"]["value"]
    assert a["amount"] == m2 and a["unit"].endswith("/Q25343")  # square metres
    assert b["amount"] == km2 and b["unit"].endswith("/Q712226")  # square kilometres
    assert float(km2) > float(m2) / 1e6
    winner = entity(in_km2)["labels"]["en"]["value"]
    assert records[qid]["fold"] == fold and records[qid]["answers"][0] == winner


def test_holdout_a_census_year_and_a_year_between_censuses(records: dict[str, dict]) -> None:
    dated = {
        c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]: c["mainsnak"]["datavalue"]["value"]
        for c in claims("Q1494", "P1082")
        if "P585" in c.get("qualifiers", {})
    }
    assert dated["1930"]["amount"] == "+2009821"
    assert records["nq-222"]["answers"] == ["2,009,821", "2009821"]  # "How many Mississippians ... 1930?"
    assert "1905" not in dated and min(dated) == "1910"
    assert records["nq-307"]["answers"] == ["unknown"]


def test_fold3_ended_relations_are_not_counted(records: dict[str, dict]) -> None:
    relations = claims("Q801", "P530")
    ended = [c for c in relations if "P582" in c.get("qualifiers", {})]
    assert len(relations) == 82 and len(ended) == 8 and all(c["rank"] == "normal" for c in relations)
    assert records["nq-368"]["answers"] == ["74"]  # "Israel currently has diplomatic relations with ..."
    assert len(records["nq-368"]["evidence"]["left_out_ended"]) == 8


def test_fold4_neighbours_that_ended_are_not_counted(records: dict[str, dict]) -> None:
    neighbours = claims("Q1049", "P47")  # Sudan
    ended = [c for c in neighbours if "P582" in c.get("qualifiers", {})]
    assert len(neighbours) == 11 and len(ended) == 3 and all(c["rank"] == "normal" for c in neighbours)
    assert records["nq-477"]["fold"] == "fold4"
    assert records["nq-477"]["answers"] == ["8", "eight"]  # "These days, how many countries border Sudan?"


def test_fold4_least_area_with_one_area_in_square_metres(records: dict[str, dict]) -> None:
    """Edmonton's 684,370,000 is square metres (684.37 km²): read raw, it would be the largest by far."""
    areas = {q: claims(q, "P2046")[0]["mainsnak"]["datavalue"]["value"] for q in ("Q2096", "Q1297", "Q891")}
    assert areas["Q2096"]["amount"] == "+684370000" and areas["Q2096"]["unit"].endswith("/Q25343")
    assert areas["Q1297"]["amount"] == "+606.423602" and areas["Q1297"]["unit"].endswith("/Q712226")
    assert areas["Q891"]["amount"] == "+410.6" and areas["Q891"]["unit"].endswith("/Q712226")
    assert records["nq-463"]["answers"][0] == "Nizhny Novgorod"


def test_fold4_a_deprecated_official_language_is_not_official(records: dict[str, dict]) -> None:
    by_value = {c["mainsnak"]["datavalue"]["value"]["id"]: c for c in claims("Q801", "P37")}
    assert by_value["Q13955"]["rank"] == "deprecated"  # Arabic
    assert records["nq-507"]["answers"] == ["no"]  # "Is Arabic still an official language of Israel?"


def test_fold4_earliest_written_record(records: dict[str, dict]) -> None:
    def first_record(qid: str) -> str:
        (record,) = claims(qid, "P1249")
        return record["mainsnak"]["datavalue"]["value"]["time"]

    assert first_record("Q2119").startswith("+0766")  # Mannheim
    assert first_record("Q1711").startswith("+0993")  # Potsdam: older than all but Mannheim ...
    (preferred,) = [c for c in claims("Q1711", "P31") if c["rank"] == "preferred"]
    assert preferred["mainsnak"]["datavalue"]["value"]["id"] == "Q22865"  # ... and not of the city classes
    assert records["nq-492"]["answers"] == ["Mannheim"]
    assert first_record("Q2100").startswith("+1065") and first_record("Q1718").startswith("+1135")
    assert records["nq-460"]["answers"] == ["Duisburg"]  # mentioned in writing before Düsseldorf


def test_fold4_a_year_with_one_value_and_an_inverse_headquarters(records: dict[str, dict]) -> None:
    def year(c: dict) -> str:
        return c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]

    users = [(year(c), c["mainsnak"]["datavalue"]["value"]) for c in claims("Q328", "P1833")]
    assert [v["amount"] for y, v in users if y == "2017"] == ["+31331313"]
    assert len({v["amount"] for y, v in users if y == "2016"}) == 2  # 2016 disagrees, so it is not asked
    assert records["nq-433"]["answers"] == ["31,331,313", "31331313"]
    (seat,) = claims("Q2756", "P159")  # Robur Siena's headquarters is Siena
    assert seat["mainsnak"]["datavalue"]["value"]["id"] == "Q2751"
    assert claims("Q2756", "P576")[0]["mainsnak"]["datavalue"]["value"]["time"].startswith("+2014")
    assert records["nq-445"]["answers"] == ["2014"]


def test_fold5_the_preferred_neighbours_of_a_citizen_s_country(records: dict[str, dict]) -> None:
    (citizenship,) = claims("Q1112493", "P27")  # Paul Richter
    assert citizenship["mainsnak"]["datavalue"]["value"]["id"] == "Q183"
    neighbours = claims("Q183", "P47")
    preferred = [c for c in neighbours if c["rank"] == "preferred"]
    assert len(neighbours) == 13 and len(preferred) == 9  # the four normal ones are not best rank
    assert records["nq-552"]["fold"] == "fold5"
    assert records["nq-552"]["answers"] == ["9", "nine"]


def test_fold5_a_year_that_the_older_series_holds_once(records: dict[str, dict]) -> None:
    """Belgium's population has two series that disagree from 2001 to 2013; 1983 is in one only."""

    def year(c: dict) -> str:
        return c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]

    people = [(year(c), c["mainsnak"]["datavalue"]["value"]["amount"]) for c in claims("Q31", "P1082")]
    assert [a for y, a in people if y == "1983"] == ["+9855520"]
    assert len({a for y, a in people if y == "2005"}) == 2
    assert records["nq-536"]["answers"] == ["9,855,520", "9855520"]


def test_fold5_an_inverse_capital_then_a_count(records: dict[str, dict]) -> None:
    capitals = [c["mainsnak"]["datavalue"]["value"]["id"] for c in claims("Q45", "P36")]
    assert capitals == ["Q597"]  # Portugal is governed from Lisbon
    languages = claims("Q45", "P37")
    assert [c["mainsnak"]["datavalue"]["value"]["id"] for c in languages] == ["Q5146", "Q13330"]
    assert not [c for c in languages if "P582" in c.get("qualifiers", {})]  # Mirandese has a start, no end
    assert records["nq-549"]["answers"] == ["2", "two"]


def test_fold5_ships_measures_and_club_ages(records: dict[str, dict]) -> None:
    def amount(qid: str, prop: str) -> str:
        (statement,) = claims(qid, prop)
        return statement["mainsnak"]["datavalue"]["value"]["amount"]

    assert amount("Q544894", "P2262") == "+4.6"  # the Mary Rose's draft
    assert records["nq-525"]["answers"] == ["4.6"] and records["nq-525"]["unit"] == "metre"
    assert amount("Q544894", "P2261") == "+11.66"  # her beam: not more than 12 m wide
    assert records["nq-607"]["answers"] == ["no"]

    def founded(qid: str) -> str:
        (statement,) = claims(qid, "P571")
        return statement["mainsnak"]["datavalue"]["value"]["time"][1:5]

    assert founded("Q2052") == "1926" and founded("Q2674") == "1900"  # Fiorentina, Palermo
    assert records["nq-566"]["answers"][-1] == "Palermo" and records["nq-609"]["answers"] == ["yes"]


def test_fold5_a_year_that_is_not_the_preferred_one(records: dict[str, dict]) -> None:
    lille = claims("Q648", "P1082")
    by_year = {c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]: c for c in lille}
    assert by_year["2015"]["rank"] == "preferred" and by_year["2013"]["rank"] == "normal"  # Lille
    assert by_year["2013"]["mainsnak"]["datavalue"]["value"]["amount"] == "+231491"
    assert records["nq-545"]["answers"] == ["231,491", "231491"]


def test_fold6_a_summit_below_sea_level(records: dict[str, dict]) -> None:
    (elevation,) = claims("Q3516685", "P2044")  # Teahitia, a seamount
    value = elevation["mainsnak"]["datavalue"]["value"]
    assert value["amount"] == "-1600" and value["unit"].endswith("/Q11573")  # metres
    assert records["nq-633"]["answers"] == ["-1,600", "-1600"] and records["nq-633"]["unit"] == "metre"
    assert records["nq-714"]["answers"] == ["yes"]  # below the threshold 0


def test_fold6_a_year_that_reverses_the_current_order(records: dict[str, dict]) -> None:
    """Out-of-school children: in 2010 Angola had more than Mali; Mali's current (2015) figure is higher."""

    def by_year(qid: str) -> dict[str, tuple[str, str]]:  # year -> (rank, amount)
        out = {}
        for c in claims(qid, "P2573"):
            year = c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]
            out[year] = (c["rank"], c["mainsnak"]["datavalue"]["value"]["amount"])
        return out

    mali, angola = by_year("Q912"), by_year("Q916")
    assert mali["2010"][1] == "+2002971" and angola["2010"][1] == "+2088363"
    assert mali["2015"] == ("preferred", "+2474516") and angola["2010"][0] == "preferred"
    assert records["nq-669"]["answers"][0] == "Angola"


def test_fold6_a_capital_s_parishes_and_a_capital_of_with_two_values(records: dict[str, dict]) -> None:
    (capital,) = claims("Q45", "P36")
    assert capital["mainsnak"]["datavalue"]["value"]["id"] == "Q597"  # Portugal is governed from Lisbon
    parishes = claims("Q597", "P150")
    assert len({c["mainsnak"]["datavalue"]["value"]["id"] for c in parishes}) == 24
    assert not [c for c in parishes if "P582" in c.get("qualifiers", {}) or c["rank"] == "deprecated"]
    assert records["nq-662"]["answers"] == ["24"]
    seat_of = [c["mainsnak"]["datavalue"]["value"]["id"] for c in claims("Q1724", "P1376")]
    assert seat_of == ["Q1201", "Q310293"]  # Saarbrücken: so nq-664 goes back from Saarland's P36
    countries = {c["mainsnak"]["datavalue"]["value"]["id"]: c["rank"] for c in claims("Q1201", "P17")}
    assert countries == {"Q183": "preferred", "Q713750": "normal"}  # Saarland: Germany, not West Germany
    assert records["nq-664"]["answers"][0] == "Germany"


def test_fold7_square_metres_lose_against_square_kilometres(records: dict[str, dict]) -> None:
    """Edmonton's area is in square metres: 684.37 km², so Skien's 779 km² is larger and 700 km² is not
    exceeded, though read as raw numbers Edmonton's 684,370,000 beats both."""
    items = raw_entities(WIKIDATA_ITEMS)
    (edmonton,) = items["Q2096"]["claims"]["P2046"]
    (skien,) = items["Q2272"]["claims"]["P2046"]
    e, s = edmonton["mainsnak"]["datavalue"]["value"], skien["mainsnak"]["datavalue"]["value"]
    assert e["amount"] == "+684370000" and e["unit"].endswith("/Q25343")  # square metres
    assert s["amount"] == "+779" and s["unit"].endswith("/Q712226")  # square kilometres
    assert records["nq-769"]["fold"] == "fold7" and records["nq-769"]["answers"] == ["Skien"]
    assert records["nq-810"]["answers"] == ["no"]  # "Does Edmonton's area exceed 700 square kilometres?"


def test_fold7_a_chain_ends_in_the_preferred_gdp_in_euros(records: dict[str, dict]) -> None:
    """Kiel's country is Germany; of Germany's two GDP figures for 2017 the preferred one is in euros, so
    the chain answers in euros, not with the normal-rank dollar figure of the same year."""
    items = raw_entities(WIKIDATA_ITEMS)
    (country,) = [c for c in items["Q1707"]["claims"]["P17"] if c["rank"] == "preferred"]
    assert country["mainsnak"]["datavalue"]["value"]["id"] == "Q183"
    in_2017 = [
        (c["rank"], c["mainsnak"]["datavalue"]["value"])
        for c in items["Q183"]["claims"]["P2131"]
        if c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"].startswith("+2017")
    ]
    assert sorted(r for r, _ in in_2017) == ["normal", "preferred"]
    (euros,) = [v for r, v in in_2017 if r == "preferred"]
    assert euros["amount"] == "+3263350000000" and euros["unit"].endswith("/Q4916")  # euro
    kiel = records["nq-766"]
    assert kiel["answers"][:2] == ["3,263,350,000,000", "3263350000000"] and kiel["unit"] == "euro"


def test_fold7_counts_leave_out_deprecated_and_ended_statements(records: dict[str, dict]) -> None:
    items = raw_entities(WIKIDATA_ITEMS)
    districts = items["Q3680"]["claims"]["P150"]  # Krasnodar Krai
    deprecated = [c for c in districts if c["rank"] == "deprecated"]
    assert len(districts) == 60 and len(deprecated) == 16
    assert records["nq-787"]["answers"] == ["44"]
    capitals = [c["mainsnak"]["datavalue"]["value"]["id"] for c in items["Q1201"]["claims"]["P36"]]
    assert capitals == ["Q1724"]  # Saarland is governed from Saarbrücken (nq-764 goes back from it)
    neighbours = items["Q1201"]["claims"]["P47"]
    ended = [
        c["mainsnak"]["datavalue"]["value"]["id"] for c in neighbours if "P582" in c.get("qualifiers", {})
    ]
    assert len(neighbours) == 5 and ended == ["Q183"]  # Germany, a neighbour until 1956
    assert records["nq-764"]["answers"] == ["4", "four"]


def test_fold8_ended_and_normal_rank_statements_are_not_current(records: dict[str, dict]) -> None:
    """Tajikistan's ruble is a normal-rank currency with an end time beside the preferred somoni, so "Is the
    Tajikistani ruble still Tajikistan's currency?" is no; Elizabeth-Jane Harris's first team has an end
    time, so she rides for one team now, not two."""
    items = raw_entities(WIKIDATA_ITEMS)
    currencies = {
        c["mainsnak"]["datavalue"]["value"]["id"]: (c["rank"], "P582" in c.get("qualifiers", {}))
        for c in items["Q863"]["claims"]["P38"]
    }
    assert currencies == {"Q199886": ("preferred", False), "Q2423956": ("normal", True)}
    assert records["nq-915"]["fold"] == "fold8" and records["nq-915"]["answers"] == ["no"]
    teams = raw_entities(WIKIDATA_API)["Q26252294"]["claims"]["P54"]
    current = [
        c["mainsnak"]["datavalue"]["value"]["id"] for c in teams if "P582" not in c.get("qualifiers", {})
    ]
    assert len(teams) == 2 and current == ["Q29608773"]
    assert records["nq-892"]["answers"] == ["1", "one"]
    assert records["nq-892"]["evidence"] == {"counted": ["Q29608773"], "left_out_ended": ["Q22079737"]}


def test_fold8_a_year_value_is_not_the_current_one(records: dict[str, dict]) -> None:
    """Mannheim's area was 144.96 km² in 1987 and is 144.97 km² now (preferred, 2016): the year's value is
    the answer, not the current one. Israel (14 May 1948) is older than China (1 October 1949) by a year."""
    items = raw_entities(WIKIDATA_ITEMS)
    areas = {}
    for c in items["Q2119"]["claims"]["P2046"]:
        year = c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]
        areas[year] = (c["rank"], c["mainsnak"]["datavalue"]["value"]["amount"])
    assert areas["1987"] == ("normal", "+144.96") and areas["2016"] == ("preferred", "+144.97")
    (unit,) = {c["mainsnak"]["datavalue"]["value"]["unit"] for c in items["Q2119"]["claims"]["P2046"]}
    assert unit.endswith("/Q712226")  # square kilometres throughout
    assert records["nq-857"]["answers"] == ["144.96"] and records["nq-857"]["unit"] == "square kilometre"
    (israel,) = items["Q801"]["claims"]["P571"]
    (china,) = items["Q148"]["claims"]["P571"]
    assert israel["mainsnak"]["datavalue"]["value"]["time"].startswith("+1948-05-14")
    assert china["mainsnak"]["datavalue"]["value"]["time"].startswith("+1949-10-01")
    assert records["nq-909"]["answers"][0] == "Israel"


def test_fold8_a_chain_to_a_city_s_visitors(records: dict[str, dict]) -> None:
    """Saarland's capital is Saarbrücken, whose one visitors-per-year figure is 336,335 (2017)."""
    items = raw_entities(WIKIDATA_ITEMS)
    (capital,) = items["Q1201"]["claims"]["P36"]
    assert capital["mainsnak"]["datavalue"]["value"]["id"] == "Q1724"
    (visitors,) = items["Q1724"]["claims"]["P1174"]
    assert visitors["mainsnak"]["datavalue"]["value"]["amount"] == "+336335"
    assert visitors["qualifiers"]["P585"][0]["datavalue"]["value"]["time"].startswith("+2017")
    assert records["nq-860"]["answers"] == ["336,335", "336335"]
    assert records["nq-860"]["evidence"] == {"via": ["Q1724"], "as_of": ["2017"]}


def test_fold9_percentages_by_year_and_a_threshold_met_exactly(records: dict[str, dict]) -> None:
    """Inflation and unemployment are in percent (Q11229), a unit the older folds never asked: Angola's
    inflation was 1,650.8 % in 1996 and 41.9 % in 2016 (its current figure, above Sudan's 30.5); Sudan's
    unemployment is exactly 15 %, so it is not above fifteen percent."""
    items = raw_entities(WIKIDATA_ITEMS)

    def by_year(qid: str, prop: str) -> dict[str, tuple[str, str]]:
        found = {}
        for c in items[qid]["claims"][prop]:
            year = c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]
            value = c["mainsnak"]["datavalue"]["value"]
            found[year] = (value["amount"], value["unit"].rsplit("/", 1)[-1])
        return found

    angola, sudan = by_year("Q916", "P1279"), by_year("Q1049", "P1279")
    assert angola["1996"] == ("+1650.8", "Q11229") and angola["2016"] == ("+41.9", "Q11229")
    assert max(sudan) == "2016" and sudan["2016"][0] == "+30.5" and max(angola) == "2016"
    assert records["nq-951"]["answers"] == ["1,650.8", "1650.8"] and records["nq-951"]["unit"] == "percent"
    assert records["nq-1017"]["answers"] == ["yes"]  # 41.9 > 40 in 2016
    assert records["nq-977"]["answers"][0] == "Angola"
    assert by_year("Q1049", "P1198") == {"2014": ("+15", "Q11229")}
    assert records["nq-1018"]["answers"] == ["no"] and records["nq-1018"]["evidence"]["left"] == ["15"]


def test_fold9_a_height_in_centimetres_is_compared_in_metres(records: dict[str, dict]) -> None:
    """Murat Didin's height is 186 centimetres: the lookup also accepts 1.86 metres, and "at least 1.90
    metres" is no."""
    (height,) = raw_entities(WIKIDATA_API)["Q323070"]["claims"]["P2048"]
    value = height["mainsnak"]["datavalue"]["value"]
    assert value["amount"] == "+186" and value["unit"].endswith("/Q174728")  # centimetre
    assert records["nq-940"]["answers"] == ["186", "1.86"] and records["nq-940"]["unit"] == "centimetre"
    assert records["nq-940"]["conversions"] == {"metre": ["1.86"]}
    assert records["nq-1024"]["answers"] == ["no"]
    assert records["nq-1024"]["evidence"] == {"left": ["1.86"], "right": ["1.9"]}


def test_fold9_a_name_two_people_share_and_ended_employers(records: dict[str, dict]) -> None:
    """Two Stephen Barretts are in the dumps; the one who died in 1976 was born on 26 December 1913. N. Gray
    has three employers, two of them with an end time, so one today."""
    api = raw_entities(WIKIDATA_API)
    barretts = {
        q: e for q, e in api.items() if e.get("labels", {}).get("en", {}).get("value") == "Stephen Barrett"
    }
    deaths = {
        q: e["claims"]["P570"][0]["mainsnak"]["datavalue"]["value"]["time"][:5] for q, e in barretts.items()
    }
    assert deaths == {"Q7608665": "+1976", "Q7608666": "+1801"}
    born = api["Q7608665"]["claims"]["P569"][0]["mainsnak"]["datavalue"]["value"]["time"]
    assert born.startswith("+1913-12-26")
    assert records["nq-938"]["answers"][:2] == ["1913", "26 December 1913"]
    employers = api["Q56816983"]["claims"]["P108"]
    current = [
        c["mainsnak"]["datavalue"]["value"]["id"] for c in employers if "P582" not in c.get("qualifiers", {})
    ]
    assert len(employers) == 3 and current == ["Q192775"]
    assert records["nq-993"]["answers"] == ["1", "one"]
    assert records["nq-993"]["evidence"]["left_out_ended"] == ["Q1333399", "Q2413375"]


def test_fold10_water_shares_and_a_tie_that_is_not_longer(records: dict[str, dict]) -> None:
    """Water as a percent of area (P2927), a property no older fold asks: Belgium 0.8, Germany 2.3,
    Massachusetts 26.1, Portugal and Malta none (so Europe's largest share is Germany's, of two). Belgian
    and Israeli compulsory schooling both end at 18 (P3271): Belgium's is not longer."""
    items = raw_entities(WIKIDATA_ITEMS)

    def amounts(qid: str, prop: str) -> list[tuple[str, str]]:
        values = [c["mainsnak"]["datavalue"]["value"] for c in items[qid]["claims"].get(prop, [])]
        return [(v["amount"], v["unit"].rsplit("/", 1)[-1]) for v in values]

    assert amounts("Q31", "P2927") == [("+0.8", "Q11229")]
    assert amounts("Q183", "P2927") == [("+2.3", "Q11229")]
    assert amounts("Q771", "P2927") == [("+26.1", "Q11229")]
    assert amounts("Q45", "P2927") == [] and amounts("Q233", "P2927") == []
    assert records["nq-1044"]["answers"] == ["0.8"] and records["nq-1044"]["unit"] == "percent"
    assert records["nq-1081"]["answers"][0] == "Belgium"
    assert records["nq-1109"]["answers"][0] == "Germany"
    assert records["nq-1109"]["evidence"]["without_value"] == ["Q45", "Q233"]
    assert records["nq-1125"]["answers"] == ["yes"] and records["nq-1126"]["answers"] == ["no"]
    assert amounts("Q31", "P3271") == amounts("Q801", "P3271") == [("+18", "Q24564698")]
    assert records["nq-1130"]["answers"] == ["no"]


def test_fold10_ended_relations_memberships_and_an_inverse_capital(records: dict[str, dict]) -> None:
    """Mali's diplomatic relations (P530): eleven statements, the one with Israel has an end time (P582), so
    ten today. Sierra Leone is a member (P463) of the Commonwealth of Nations (Q7785), Mali is not. Lisbon is
    Portugal's capital, and Portugal's retirement age (P3001) is 66 years."""
    items = raw_entities(WIKIDATA_ITEMS)
    relations = items["Q912"]["claims"]["P530"]
    ended = [
        c["mainsnak"]["datavalue"]["value"]["id"] for c in relations if "P582" in c.get("qualifiers", {})
    ]
    today = {c["mainsnak"]["datavalue"]["value"]["id"] for c in relations} - set(ended)
    assert ended == ["Q801"] and len(today) == 10
    assert records["nq-1095"]["answers"] == ["10", "ten"]
    assert records["nq-1095"]["evidence"]["left_out_ended"] == ["Q801"]

    def members(qid: str) -> set[str]:
        return {c["mainsnak"]["datavalue"]["value"]["id"] for c in items[qid]["claims"]["P463"]}

    assert "Q7785" in members("Q1044") and "Q7785" not in members("Q912")
    assert records["nq-1120"]["answers"] == ["yes"] and records["nq-1121"]["answers"] == ["no"]
    (capital,) = items["Q45"]["claims"]["P36"]
    assert capital["mainsnak"]["datavalue"]["value"]["id"] == "Q597"
    (retirement,) = items["Q45"]["claims"]["P3001"]
    assert retirement["mainsnak"]["datavalue"]["value"]["amount"] == "+66"
    assert records["nq-1077"]["answers"] == ["66"] and records["nq-1077"]["evidence"]["via"] == ["Q45"]


def test_fold11_properties_no_older_fold_asks(records: dict[str, dict]) -> None:
    """Age of candidacy (P2998) is held by Israel alone: 21 years old. Belgium's mobile country code (P2258)
    is the string 206. Belgian trains run on the left (railway traffic side P5658: Q13196750, left-hand
    traffic) while its cars keep right (driving side P1622: Q14565199); German trains keep right. Israel's
    continent (P30) is Asia (Q48), Malta's Europe (Q46) only."""
    items = raw_entities(WIKIDATA_ITEMS)
    everything = {**raw_entities(WIKIDATA_API), **items}

    def values(qid: str, prop: str) -> list:
        return [c["mainsnak"]["datavalue"]["value"] for c in everything[qid]["claims"].get(prop, [])]

    assert [q for q, e in everything.items() if "P2998" in e.get("claims", {})] == ["Q801"]
    (candidacy,) = values("Q801", "P2998")
    assert candidacy["amount"] == "+21" and candidacy["unit"].endswith("/Q24564698")
    assert records["nq-1146"]["answers"] == ["21"] and records["nq-1146"]["unit"] == "years old"
    assert values("Q31", "P2258") == ["206"] and records["nq-1147"]["answers"] == ["206"]
    assert [v["id"] for v in values("Q31", "P5658")] == ["Q13196750"]
    assert [v["id"] for v in values("Q31", "P1622")] == ["Q14565199"]
    assert [v["id"] for v in values("Q183", "P5658")] == ["Q14565199"]
    assert records["nq-1226"]["answers"] == ["yes"] and records["nq-1227"]["answers"] == ["no"]
    assert [v["id"] for v in values("Q801", "P30")] == ["Q48"] and records["nq-1224"]["answers"] == ["yes"]
    assert [v["id"] for v in values("Q233", "P30")] == ["Q46"] and records["nq-1225"]["answers"] == ["no"]


def test_fold11_a_twin_town_reached_backwards_and_a_year_that_reverses_the_order(
    records: dict[str, dict],
) -> None:
    """Chicago is the one entity of the dumps whose twin towns (P190) name Düsseldorf, so the chain through
    ^P190 ends at Chicago's demonym. Bonn has more people than Mannheim today (327,919 against 304,781) but
    had fewer in 1990 (292,234 against 310,411). Israel holds thirteen memberships (P463), one of them, in
    UNESCO, with an end time: twelve today, the OECD among them."""
    items = raw_entities(WIKIDATA_ITEMS)
    everything = {**raw_entities(WIKIDATA_API), **items}

    def ids(entity: dict, prop: str) -> list[str]:
        return [c["mainsnak"]["datavalue"]["value"]["id"] for c in entity.get("claims", {}).get(prop, [])]

    assert [q for q, e in everything.items() if "Q1718" in ids(e, "P190")] == ["Q1297"]
    demonyms = [c["mainsnak"]["datavalue"]["value"] for c in items["Q1297"]["claims"]["P1549"]]
    assert [d["text"] for d in demonyms if d["language"] == "en"] == ["Chicagoan"]
    assert records["nq-1172"]["answers"] == ["Chicagoan"]
    assert records["nq-1172"]["evidence"]["via"] == ["Q1297"]

    def population(qid: str) -> tuple[str, str]:
        claims = items[qid]["claims"]["P1082"]
        (now,) = [c for c in claims if c["rank"] == "preferred"]
        in_1990 = [
            c for c in claims if c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"].startswith("+1990")
        ]
        amounts = {c["mainsnak"]["datavalue"]["value"]["amount"] for c in in_1990}
        (then,) = amounts
        return now["mainsnak"]["datavalue"]["value"]["amount"], then

    assert population("Q586") == ("+327919", "+292234") and population("Q2119") == ("+304781", "+310411")
    assert records["nq-1186"]["answers"] == ["Mannheim"]
    memberships = items["Q801"]["claims"]["P463"]
    with_end = [c for c in memberships if "P582" in c.get("qualifiers", {})]
    ended = [c["mainsnak"]["datavalue"]["value"]["id"] for c in with_end]
    assert len(memberships) == 13 and ended == ["Q7809"]
    assert records["nq-1205"]["answers"] == ["12", "twelve"]
    assert records["nq-1205"]["evidence"]["left_out_ended"] == ["Q7809"]
    assert "Q41550" in ids(items["Q801"], "P463") and "Q41550" not in ids(items["Q869"], "P463")
    assert records["nq-1232"]["answers"] == ["yes"] and records["nq-1233"]["answers"] == ["no"]


def test_fold12_properties_no_older_fold_asks(records: dict[str, dict]) -> None:
    """Hegel's cause of death (P509) is cholera (Q12090) and his native language (P103) German (Q188), though
    Latin (Q397) is among the languages he wrote in (P1412). Quine's doctoral advisor (P184) is Alfred North
    Whitehead (Q183372). Brazil's Dewey Decimal Classification (P1036) is the string 2--81, Düsseldorf's
    hashtag (P2572) Duesseldorf."""
    everything = {**raw_entities(WIKIDATA_API), **raw_entities(WIKIDATA_ITEMS)}

    def values(qid: str, prop: str) -> list:
        return [c["mainsnak"]["datavalue"]["value"] for c in everything[qid]["claims"].get(prop, [])]

    assert [v["id"] for v in values("Q9235", "P509")] == ["Q12090"]
    assert records["nq-1328"]["answers"] == ["yes"]
    assert [v["id"] for v in values("Q9235", "P103")] == ["Q188"]
    assert "Q397" in [v["id"] for v in values("Q9235", "P1412")] and records["nq-1338"]["answers"] == ["no"]
    assert [v["id"] for v in values("Q214969", "P184")] == ["Q183372"]
    assert records["nq-1330"]["answers"] == ["yes"]
    assert values("Q155", "P1036") == ["2--81"] and records["nq-1250"]["answers"] == ["2--81"]
    assert values("Q1718", "P2572") == ["Duesseldorf"] and records["nq-1255"]["answers"] == ["Duesseldorf"]


def test_fold12_a_work_cited_backwards_and_thresholds_in_other_units(records: dict[str, dict]) -> None:
    """One paper of the dumps cites "Why do people cooperate with medical research?" (Q28816173): the study
    of informed consent documents (Q28816164), in volume 34. Cerro Tuxuma's 3,968 m clear 13,000 feet
    (3,962.4 m); Nizhny Novgorod's 200 m fall short of 700 feet (213.36 m); Massachusetts' 27,336 km² exceed
    10,000 square miles. Belgium holds 35 memberships (P463), one of them ended: 34 today, reached from the
    cyclist Jelle Cant's citizenship."""
    api, items = raw_entities(WIKIDATA_API), raw_entities(WIKIDATA_ITEMS)
    everything = {**api, **items}

    def cites(entity: dict) -> list[str]:
        return [c["mainsnak"]["datavalue"]["value"]["id"] for c in entity.get("claims", {}).get("P2860", [])]

    assert [q for q, e in everything.items() if "Q28816173" in cites(e)] == ["Q28816164"]
    (volume,) = api["Q28816164"]["claims"]["P478"]
    assert volume["mainsnak"]["datavalue"]["value"] == "34"
    assert records["nq-1276"]["answers"] == ["34"] and records["nq-1276"]["evidence"]["via"] == ["Q28816164"]

    def amount(entity: dict, prop: str) -> Decimal:
        (claim,) = entity["claims"][prop]
        return Decimal(claim["mainsnak"]["datavalue"]["value"]["amount"])

    foot, square_mile = Decimal("0.3048"), Decimal("2.589988110336")
    assert amount(api["Q22472992"], "P2044") > 13000 * foot and records["nq-1332"]["answers"] == ["yes"]
    assert amount(items["Q891"], "P2044") < 700 * foot and records["nq-1337"]["answers"] == ["no"]
    assert amount(items["Q771"], "P2046") > 10000 * square_mile and records["nq-1333"]["answers"] == ["yes"]
    memberships = items["Q31"]["claims"]["P463"]
    with_end = [c for c in memberships if "P582" in c.get("qualifiers", {})]
    ended = [c["mainsnak"]["datavalue"]["value"]["id"] for c in with_end]
    assert len(memberships) == 35 and ended == ["Q161549"]
    assert records["nq-1278"]["answers"] == ["34"] and records["nq-1278"]["evidence"]["via"] == ["Q31"]
    assert records["nq-1278"]["evidence"]["left_out_ended"] == ["Q161549"]


def test_fold13_properties_no_older_fold_asks(records: dict[str, dict]) -> None:
    """Tours' INSEE code (P374) is the string 37261 and Bonn's X/Twitter username (P2002) bundesstadtbonn.
    Düsseldorf is the capital (P1376) of five units, North Rhine-Westphalia (Q1198) among them. Wikidata has
    two developers (P178). Germany, Uetersen's country (P17), has two legislative bodies (P194), none
    ended."""
    items = raw_entities(WIKIDATA_ITEMS)

    def values(qid: str, prop: str) -> list:
        return [c["mainsnak"]["datavalue"]["value"] for c in items[qid]["claims"].get(prop, [])]

    assert values("Q288", "P374") == ["37261"] and records["nq-1354"]["answers"] == ["37261"]
    assert values("Q586", "P2002") == ["bundesstadtbonn"] and records["nq-1355"]["answers"] == [
        "bundesstadtbonn"
    ]
    capital_of = [v["id"] for v in values("Q1718", "P1376")]
    assert len(capital_of) == 5 and "Q1198" in capital_of and records["nq-1439"]["answers"] == ["yes"]
    developers = {v["id"] for v in values("Q2013", "P178")}
    assert developers == {"Q180", "Q8288"} and records["nq-1407"]["answers"] == ["2", "two"]
    assert [v["id"] for v in values("Q1404", "P17")] == ["Q183"]
    chambers = items["Q183"]["claims"]["P194"]
    assert len(chambers) == 2 and not any("P582" in c.get("qualifiers", {}) for c in chambers)
    assert records["nq-1391"]["answers"] == ["2", "two"] and records["nq-1391"]["evidence"]["via"] == ["Q183"]


def test_fold13_a_border_followed_backwards_and_close_calls_in_a_year(records: dict[str, dict]) -> None:
    """China is the one entity of the dumps whose neighbours (P47) name Tajikistan; its population dated 2012
    is 1,375,198,619. In 2011 Belgium's fertility rate (1.81) was above Chile's (1.806), though today Chile's
    is higher; in 1990 Brazil's HDI (0.608) was below Tajikistan's (0.616). Langenzenn's 313 m clear 1,000
    feet (304.8 m)."""
    items = raw_entities(WIKIDATA_ITEMS)
    everything = {**raw_entities(WIKIDATA_API), **items}

    def neighbours(entity: dict) -> list[str]:
        claims = entity.get("claims", {}).get("P47", [])
        return [
            c["mainsnak"].get("datavalue", {}).get("value", {}).get("id")
            for c in claims
            if c["rank"] != "deprecated"
        ]

    assert [q for q, e in everything.items() if "Q863" in neighbours(e)] == ["Q148"]

    def dated(qid: str, prop: str, year: str) -> list[str]:
        claims = items[qid]["claims"][prop]
        return [
            c["mainsnak"]["datavalue"]["value"]["amount"]
            for c in claims
            if c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"].startswith(f"+{year}-")
        ]

    assert dated("Q148", "P1082", "2012") == ["+1375198619"]
    assert records["nq-1380"]["answers"] == ["1,375,198,619", "1375198619"]
    assert records["nq-1380"]["evidence"]["via"] == ["Q148"]
    belgium, chile = dated("Q31", "P4841", "2011"), dated("Q298", "P4841", "2011")
    assert belgium == ["+1.81"] and chile == ["+1.806"] and Decimal(belgium[0]) > Decimal(chile[0])
    assert records["nq-1401"]["answers"][0] == "Belgium"
    brazil, tajikistan = dated("Q155", "P1081", "1990"), dated("Q863", "P1081", "1990")
    assert brazil == ["+0.608"] and tajikistan == ["+0.616"] and records["nq-1432"]["answers"] == ["no"]
    (elevation,) = items["Q2230"]["claims"]["P2044"]
    value = elevation["mainsnak"]["datavalue"]["value"]
    assert value["unit"].endswith("/Q11573") and Decimal(value["amount"]) > 1000 * Decimal("0.3048")
    assert records["nq-1434"]["answers"] == ["yes"]


def test_fold14_properties_no_older_fold_asks(records: dict[str, dict]) -> None:
    """Dorsten's German municipality key (P439) is the string 05562012 and Mali's ISO numeric code (P299) 466.
    Germany's head of government (P6) is Angela Merkel (Q567) by the one preferred statement, the ended ones
    being normal rank. Wikidata's software engines (P408) include MediaWiki (Q83). Israel's age of consent
    (P2999) is 14 years old, under 16. Israel's preferred head of state (P35) and the 2019 Settlers game's
    publisher (P123) are items neither dump holds."""
    items = raw_entities(WIKIDATA_ITEMS)
    stream = raw_entities(WIKIDATA_API)

    def values(entity: dict, prop: str, rank: str | None = None) -> list:
        return [c["mainsnak"]["datavalue"]["value"] for c in entity["claims"].get(prop, [])
                if rank is None or c["rank"] == rank]  # fmt: skip

    assert values(items["Q3886"], "P439") == ["05562012"] and records["nq-1458"]["answers"] == ["05562012"]
    assert values(items["Q912"], "P299") == ["466"] and records["nq-1462"]["answers"] == ["466"]
    germany = items["Q183"]
    assert [v["id"] for v in values(germany, "P6", "preferred")] == ["Q567"]
    assert all("P582" in c.get("qualifiers", {}) for c in germany["claims"]["P6"] if c["rank"] == "normal")
    assert records["nq-1536"]["answers"] == ["yes"]
    assert "Q83" in [v["id"] for v in values(items["Q2013"], "P408")]
    assert records["nq-1540"]["answers"] == ["yes"]
    (consent,) = values(items["Q801"], "P2999")
    assert consent["unit"].endswith("/Q24564698") and Decimal(consent["amount"]) < 16
    assert records["nq-1547"]["answers"] == ["no"]
    (president,) = values(items["Q801"], "P35", "preferred")
    assert president["id"] not in items and president["id"] not in stream
    assert records["nq-1560"]["answers"] == ["unknown"]
    (publisher,) = values(stream["Q61455660"], "P123")
    assert publisher["id"] not in items and publisher["id"] not in stream
    assert records["nq-1561"]["answers"] == ["unknown"]


def live_item_ids(entity: dict, prop: str) -> list[str]:
    """The item ids an entity's non-deprecated ``prop`` statements name, read from its raw JSON."""
    found = entity.get("claims", {}).get(prop, [])
    return [c["mainsnak"].get("datavalue", {}).get("value", {}).get("id") for c in found
            if c["rank"] != "deprecated"]  # fmt: skip


def test_fold14_links_followed_backwards_and_close_calls(records: dict[str, dict]) -> None:
    """Tokke is the one entity whose neighbours (P47) name Seljord; its municipality number is 0833. The
    Settlers (2019) is the one entity whose country of origin (P495) is Germany; it has two genres. Saarland's
    preferred country (P17) is Germany, whose HDI dated 1990 is 0.801. China's latest HDI (0.728) beats
    Thailand's (0.726); Vanuatu's reserves beat Sudan's. Lille is capital (P1376) of 17 units, 8 of them
    ended. Tokke's 984 km² fall short of a thousand."""
    items = raw_entities(WIKIDATA_ITEMS)
    everything = {**raw_entities(WIKIDATA_API), **items}

    assert [q for q, e in everything.items() if "Q2236" in live_item_ids(e, "P47")] == ["Q2241"]
    assert [c["mainsnak"]["datavalue"]["value"] for c in items["Q2241"]["claims"]["P2504"]] == ["0833"]
    assert records["nq-1484"]["answers"] == ["0833"] and records["nq-1484"]["evidence"]["via"] == ["Q2241"]
    assert [q for q, e in everything.items() if "Q183" in live_item_ids(e, "P495")] == ["Q61455660"]
    assert len(set(live_item_ids(everything["Q61455660"], "P136"))) == 2
    assert records["nq-1487"]["answers"] == ["2", "two"]
    preferred = [c for c in items["Q1201"]["claims"]["P17"] if c["rank"] == "preferred"]
    assert [c["mainsnak"]["datavalue"]["value"]["id"] for c in preferred] == ["Q183"]

    def dated(qid: str, prop: str) -> dict[str, str]:  # year -> amount, one statement a year here
        claims = items[qid]["claims"][prop]
        return {c["qualifiers"]["P585"][0]["datavalue"]["value"]["time"][1:5]: c["mainsnak"]["datavalue"][
            "value"]["amount"] for c in claims}  # fmt: skip

    assert dated("Q183", "P1081")["1990"] == "+0.801"
    assert records["nq-1491"]["answers"] == ["0.801"]
    assert records["nq-1491"]["evidence"]["via"] == ["Q1201", "Q183"]
    china, thailand = dated("Q148", "P1081"), dated("Q869", "P1081")
    assert china[max(china)] == "+0.728" and thailand[max(thailand)] == "+0.726"
    assert records["nq-1497"]["answers"][0] == "People's Republic of China"
    sudan, vanuatu = (items[q]["claims"]["P2134"] for q in ("Q1049", "Q686"))
    assert len(sudan) == len(vanuatu) == 1
    reserves = [Decimal(c[0]["mainsnak"]["datavalue"]["value"]["amount"]) for c in (sudan, vanuatu)]
    assert reserves[1] > reserves[0] and records["nq-1501"]["answers"][0] == "Vanuatu"
    capital_of = items["Q648"]["claims"]["P1376"]
    ended = [c for c in capital_of if "P582" in c.get("qualifiers", {})]
    assert len(capital_of) == 17 and len(ended) == 8 and records["nq-1510"]["answers"] == ["9", "nine"]
    (area,) = items["Q2241"]["claims"]["P2046"]
    assert Decimal(area["mainsnak"]["datavalue"]["value"]["amount"]) == 984
    assert records["nq-1543"]["answers"] == ["no"]


def test_fold15_properties_no_older_fold_asks(records: dict[str, dict]) -> None:
    """Brazil's Universal Decimal Classification (P1190) is the string (81), held by no other entity. The gene
    that encodes the protein TsM_000804600.1 (P702) ends (P645) at 1661. Wikidata is named after (P138) two
    items. Brazil's currency (P38) has eight statements, seven of them ended, so one is counted. Chile's
    central bank (P1304) and Palermo's head coach (P286) are items neither dump holds. No entity holds
    fiscal/tax revenue (P3087)."""
    items = raw_entities(WIKIDATA_ITEMS)
    stream = raw_entities(WIKIDATA_API)
    everything = {**stream, **items}

    def values(entity: dict, prop: str) -> list:
        return [c["mainsnak"]["datavalue"]["value"] for c in entity["claims"].get(prop, [])]

    assert [q for q, e in everything.items() if "P1190" in e.get("claims", {})] == ["Q155"]
    assert values(items["Q155"], "P1190") == ["(81)"] and records["nq-1562"]["answers"] == ["(81)"]
    (gene,) = values(everything["Q62372169"], "P702")
    assert values(everything[gene["id"]], "P645") == ["1661"]
    assert records["nq-1590"]["answers"] == ["1661"] and records["nq-1590"]["evidence"]["via"] == [gene["id"]]
    assert len(values(everything["Q2013"], "P138")) == 2 and records["nq-1617"]["answers"] == ["2", "two"]
    currencies = items["Q155"]["claims"]["P38"]
    ended = [c for c in currencies if "P582" in c.get("qualifiers", {})]
    assert len(currencies) == 8 and len(ended) == 7 and records["nq-1625"]["answers"] == ["1", "one"]
    for qid, prop, rid in (("Q298", "P1304", "nq-1664"), ("Q2674", "P286", "nq-1665")):
        (value,) = values(everything[qid], prop)
        assert value["id"] not in everything and records[rid]["answers"] == ["unknown"]
    assert not [q for q, e in everything.items() if "P3087" in e.get("claims", {})]
    assert records["nq-1656"]["answers"] == ["unknown"]


def test_fold15_links_followed_backwards_years_and_close_calls(records: dict[str, dict]) -> None:
    """The United Arab Emirates is the one entity whose diplomatic relations (P530) name Bahrain; its ships
    carry the MIDs 470 and 471. Chicago is the one entity whose twin towns (P190) name Düsseldorf. Malta had
    325,250 people in 1961 against Bahrain's 167,924, though Bahrain is the more populous today. Mali's 2016
    growth (5.4 %) beats Sierra Leone's (4.9 %); Vanuatu's 3,031 PPP dollars a head clear 3,000; China's 1.531
    children per woman in 2008 fall short of Thailand's 1.553."""
    items = raw_entities(WIKIDATA_ITEMS)
    everything = {**raw_entities(WIKIDATA_API), **items}

    def amounts(qid: str, prop: str) -> dict[str, str]:  # year -> amount of the statements dated that year
        out: dict[str, str] = {}
        for c in items[qid]["claims"][prop]:
            for when in c.get("qualifiers", {}).get("P585", []):
                out[when["datavalue"]["value"]["time"][1:5]] = c["mainsnak"]["datavalue"]["value"]["amount"]
        return out

    assert [q for q, e in everything.items() if "Q398" in live_item_ids(e, "P530")] == ["Q878"]
    mids = [c["mainsnak"]["datavalue"]["value"] for c in items["Q878"]["claims"]["P2979"]]
    assert sorted(mids) == ["470", "471"] and sorted(records["nq-1588"]["answers"]) == ["470", "471"]
    assert [q for q, e in everything.items() if "Q1718" in live_item_ids(e, "P190")] == ["Q1297"]
    assert records["nq-1592"]["evidence"]["via"] == ["Q1297"]
    malta, bahrain = amounts("Q233", "P1082"), amounts("Q398", "P1082")
    assert malta["1961"] == "+325250" and bahrain["1961"] == "+167924"
    assert Decimal(bahrain[max(bahrain)]) > Decimal(malta[max(malta)])
    assert records["nq-1611"]["answers"][0] == "Malta"
    mali, sierra_leone = amounts("Q912", "P2219"), amounts("Q1044", "P2219")
    assert Decimal(mali["2016"]) > Decimal(sierra_leone["2016"])
    assert records["nq-1601"]["answers"][0] == "Mali"
    (ppp,) = items["Q686"]["claims"]["P2299"]
    assert Decimal(ppp["mainsnak"]["datavalue"]["value"]["amount"]) == 3031
    assert records["nq-1649"]["answers"] == ["yes"]
    china, thailand = amounts("Q148", "P4841"), amounts("Q869", "P4841")
    assert china["2008"] == "+1.531" and thailand["2008"] == "+1.553"
    assert records["nq-1645"]["answers"] == ["no"]


def test_inverse_chain(records: dict[str, dict]) -> None:
    capitals = [c["mainsnak"]["datavalue"]["value"]["id"] for c in claims("Q1201", "P36")]
    assert capitals == ["Q1724"]  # Saarland's capital is Saarbrücken
    assert records["nq-061"]["answers"] == ["Saarland"]
    assert records["nq-073"]["answers"][0] == "995,597"  # Saarland's population, reached the same way


# --- what the answer key refuses -------------------------------------------------------------------


@pytest.mark.parametrize(
    ("spec", "says"),
    [
        ({"op": "lookup", "subject": "Q31", "property": "P36"}, "bare id"),  # Brussels: outside the dumps
        ({"op": "chain", "start": "Q183", "path": ["P36", "P1082"]}, "one entity of the dumps"),
        ({"op": "in_year", "subject": "Q31", "property": "P1082", "year": 2005}, "different values"),
        # Bonn and Everswinkel both lie at 60 m: a tie has no winner
        ({"op": "compare", "entities": ["Q586", "Q2809"], "property": "P2044", "pick": "max"}, "no clear"),
        ({"op": "compare", "entities": ["Q586", "Q586"], "property": "P1082", "pick": "max"}, "different"),
        ({"op": "count", "subject": "Q233", "property": "P47"}, "'no value'"),  # Malta: novalue + Italy
        ({"op": "refuse", "why": "no_entity", "name": "Oslo"}, "not a fictional place"),
        # a mention must be a word of the winner's names: it cannot bring in another answer
        (
            {
                "op": "compare",
                "entities": ["Q214969", "Q9235"],
                "property": "P569",
                "pick": "min",
                "mentions": {"Q9235": "Kant"},
            },
            "not a word",
        ),
        ({"op": "refuse", "why": "no_year", "subject": "Q31", "property": "P1082", "year": 2014}, "dated"),
        ({"op": "refuse", "why": "no_property", "property": "P1082"}, "exists"),
    ],
)
def test_a_spec_without_one_defensible_answer_is_refused(
    gold: ModuleType, dump, spec: dict, says: str
) -> None:
    with pytest.raises(gold.GoldError, match=re.escape(says)):
        gold.OPERATIONS[spec["op"]](dump, spec)


def test_a_source_error_names_the_line_and_what_to_do(gold: ModuleType, dump, tmp_path: Path) -> None:
    source = tmp_path / "questions.source.jsonl"
    good = {"id": "x-1", "kind": "lookup", "question": "Q?", "spec": {"op": "lookup", "subject": "Q585",
            "property": "P1082"}}  # fmt: skip
    bad = {**good, "id": "x-2", "spec": {"op": "lookup", "subject": "Q31", "property": "P36"}}
    source.write_text(json.dumps(good) + "\n" + json.dumps(bad) + "\n")
    with pytest.raises(gold.GoldError, match=r"line 2 \(x-2.*rewrite or drop the question"):
        gold.build(dump, source)
    source.write_text(json.dumps({**good, "kind": "count"}) + "\n")  # a kind with an op it may not use
    with pytest.raises(gold.GoldError, match="line 1"):
        gold.build(dump, source)


# --- the evaluator's rule --------------------------------------------------------------------------


def test_the_judge_matches_names_numbers_units_and_refusals() -> None:
    evaluate = load_script(FOLDER / "evaluate.py")
    lausanne = {"kind": "lookup", "answers": ["41,370,000", "41370000", "41.37"], "unit": "square metre",
                "conversions": {"square kilometre": ["41.37"]}}  # fmt: skip
    assert evaluate.is_right("41370000", lausanne)
    assert evaluate.is_right("41.37 km²", lausanne)
    assert not evaluate.is_right("41.37 square metres", lausanne)  # the number of another unit
    population = {"kind": "lookup", "answers": ["634,463", "634463"]}
    assert evaluate.is_right("634,463", population) and evaluate.is_right("635,000", population)  # 0.08 %
    assert not evaluate.is_right("640,000", population)  # 0.87 %: beyond 0.5 %
    assert not evaluate.is_right(None, population)  # a refusal is wrong where there is an answer
    assert evaluate.is_right("düsseldorf", {"kind": "superlative", "answers": ["Düsseldorf"]})
    assert not evaluate.is_right("Düsseldorf (Q1718)", {"kind": "superlative", "answers": ["Düsseldorf"]})
    unanswerable = {"kind": "unanswerable", "answers": ["unknown"]}
    assert evaluate.is_right(None, unanswerable) and not evaluate.is_right("10,084,475", unanswerable)


def test_the_evaluator_asks_the_holdout_fold_only_by_name(records: dict[str, dict]) -> None:
    evaluate = load_script(FOLDER / "evaluate.py")
    everything = list(records.values())
    later = ("holdout", "fold3", "fold4", "fold5", "fold6", "fold7", "fold8", "fold9", "fold10", "fold11")
    later += ("fold12", "fold13", "fold14", "fold15")
    for fold in later:
        args = evaluate.arguments().parse_args(["run", "--index", "x", "--fold", fold])
        assert args.fold == fold
        asked = evaluate.selected(everything, fold)
        assert {r["id"] for r in asked} == {i for i, r in records.items() if r["fold"] == fold}
    assert not [r for r in evaluate.selected(everything, "all") if r["fold"] in later]
    assert len(evaluate.selected(everything, "all")) == 207
    rows = [{"kind": "count", "fold": "holdout", "right": True},
            {"kind": "count", "fold": "holdout", "right": False},
            {"kind": "count", "fold": "report", "right": True}]  # fmt: skip
    table = evaluate.per_kind(rows)
    assert table["count"]["holdout"] == {"n": 2, "right": 1, "em": 50.0}
    assert table["all"]["report"]["n"] == 1 and table["all"]["all"]["n"] == 3
    section = evaluate.reader_section("candidates", table, {"candidates": [{**r, "mode": "m", "ms": 1.0}
                                      for r in rows]}, 1.0, [])  # fmt: skip
    header = (
        "| kind | tune | report | holdout | fold3 | fold4 | fold5 | fold6 | fold7 | fold8 | fold9 | fold10 "
        "| fold11 | fold12 | fold13 | fold14 | fold15 | all |"
    )
    assert header in section
    cells = "| - | 100.0 (1/1) | 50.0 (1/2) | " + "- | " * 13 + "66.7 (2/3) |"
    assert f"| count {cells}" in section
