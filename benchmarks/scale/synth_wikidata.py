"""Renamed copies of the sample Wikidata items, each a whole item or a small one, as dump lines.

Each sample item is compiled once into ``str.format`` templates of its JSON exactly as the dump
writes it (``json.dumps`` with its default separators and ASCII escapes, which is the sample's
layout byte for byte): the item id, each label, alias and sitelink title and each item value that
points inside the sample become fields. A copy is then a few ``format_map`` calls, no JSON work.

Copy ``g`` of the corpus is template ``g % T`` in entity block ``g // T`` (``T`` sample items). An
item value pointing at sample item ``t`` becomes the copy of ``t`` in the same block (dangling only in
a last, partial block); values pointing outside the sample keep their ids, dangling as in the real
slice. Qualifiers, references, ranks, units and datatypes are copied as they are. A small item keeps
its first ``instance of`` statement plus a random choice of the others, and English plus the first
few other languages of its labels, descriptions and sitelinks.
"""

from __future__ import annotations

import bz2
import json
import random
import re
from collections.abc import Sequence
from dataclasses import dataclass
from functools import lru_cache
from pathlib import Path
from typing import Any

from synth_names import copy_word, item_number
from synth_spread import SizeSpread

INSTANCE_OF = "P31"
SMALL_TERMS = 5
"""Languages (sites) a small item keeps of its labels, descriptions and sitelinks: English first."""
_REF = re.compile(r'"@@R(\d+)@@"')
_REF_KEYS = ["entity-type", "numeric-id", "id"]


@dataclass(frozen=True)
class Statement:
    prop: str
    fmt: str


@dataclass(frozen=True)
class ItemTemplate:
    """One sample item, compiled. ``refs``: template numbers of the sample items its statements name."""

    number: int
    source_id: str
    head: dict[bool, str]  # whole copy? -> the line up to the claims' opening brace
    tail: dict[bool, str]  # whole copy? -> the line after the claims
    statements: tuple[Statement, ...]
    first_instance_of: int | None
    refs: tuple[int, ...]


def read_dump_items(path: Path) -> list[dict[str, Any]]:
    """The entities of a ``latest-all.json`` layout dump (bz2 or plain), in file order."""
    with open(path, "rb") as f:
        opener = bz2.open if f.read(3) == b"BZh" else open
    items = []
    with opener(path, "rt", encoding="utf-8") as f:
        for number, line in enumerate(f, 1):
            line = line.strip().rstrip(",")
            if line in ("[", "]", ""):
                continue
            if not line.startswith("{"):
                raise ValueError(f"{path}:{number}: not an entity line of a Wikidata JSON dump")
            items.append(json.loads(line))
    return items


def _format(text: str) -> str:
    """JSON text with its sentinels as format fields (braces of the JSON doubled first)."""
    text = text.replace("{", "{{").replace("}", "}}")
    text = text.replace("@@Q@@", "{q}").replace("@@q@@", "{ql}").replace("@@S@@", " {s}")
    return _REF.sub(r"{r\1}", text)


def _mark_refs(value: Any, numbers: dict[str, int], found: set[int]) -> Any:
    """``value`` with every item value naming a sample item replaced by that item's sentinel."""
    if isinstance(value, dict):
        if value.get("entity-type") == "item" and value.get("id") in numbers:
            if list(value) != _REF_KEYS:
                raise ValueError(f"item value {value} is not shaped {_REF_KEYS}: the copier cannot rename it")
            found.add(numbers[value["id"]])
            return f"@@R{numbers[value['id']]}@@"
        return {k: _mark_refs(v, numbers, found) for k, v in value.items()}
    if isinstance(value, list):
        return [_mark_refs(v, numbers, found) for v in value]
    return value


def _small(terms: dict[str, Any], english: str) -> dict[str, Any]:
    keys = ([english] if english in terms else []) + [k for k in terms if k != english]
    return {k: terms[k] for k in keys[:SMALL_TERMS]}


def _suffixed(terms: dict[str, Any], field: str) -> dict[str, Any]:
    """Labels/sitelinks with the copy word after each name (aliases: lists of such terms)."""
    out = {}
    for key, term in terms.items():
        if isinstance(term, list):
            out[key] = [{**t, field: t[field] + "@@S@@"} for t in term]
        else:
            out[key] = {**term, field: term[field] + "@@S@@"}
    return out


def _head_tail(item: dict[str, Any], whole: bool) -> tuple[str, str]:
    pick = (lambda terms, english: terms) if whole else _small
    aliases = (
        item.get("aliases", {}) if whole else {k: v for k, v in item.get("aliases", {}).items() if k == "en"}
    )
    skeleton = {
        "type": item["type"],
        "id": "@@Q@@",
        "labels": _suffixed(pick(item.get("labels", {}), "en"), "value"),
        "descriptions": pick(item.get("descriptions", {}), "en"),
        "aliases": _suffixed(aliases, "value"),
        "claims": {},
        "sitelinks": _suffixed(pick(item.get("sitelinks", {}), "enwiki"), "title"),
    }
    head, marker, tail = _format(json.dumps(skeleton)).partition('"claims": {{}}')
    if not marker:
        raise ValueError(f"{item['id']}: no claims marker in the compiled line")
    return head + '"claims": {{', "}}" + tail


def compile_item(item: dict[str, Any], number: int, numbers: dict[str, int]) -> ItemTemplate:
    if list(item) != ["type", "id", "labels", "descriptions", "aliases", "claims", "sitelinks"]:
        raise ValueError(f"{item.get('id')}: keys {list(item)} are not the dump's item layout")
    statements, refs, first_p31 = [], set(), None
    for prop, claims in item["claims"].items():
        for claim in claims:
            marked = _mark_refs(claim, numbers, refs)  # builds new containers
            sid = marked["id"]
            if "$" not in sid or sid[0] not in "Qq":
                raise ValueError(f"{item['id']}: statement id {sid!r} is not shaped Q…$GUID")
            marked["id"] = ("@@Q@@" if sid[0] == "Q" else "@@q@@") + sid[sid.index("$") :]
            if prop == INSTANCE_OF and first_p31 is None:
                first_p31 = len(statements)
            statements.append(Statement(prop, _format(json.dumps(marked))))
    heads, tails = {}, {}
    for whole in (True, False):
        heads[whole], tails[whole] = _head_tail(item, whole)
    return ItemTemplate(number, item["id"], heads, tails, tuple(statements), first_p31, tuple(sorted(refs)))


@lru_cache(maxsize=2)
def load_item_templates(path: Path) -> tuple[ItemTemplate, ...]:
    """The compiled items of a sample dump (kept: a process making several corpora compiles once)."""
    items = read_dump_items(path)
    numbers = {item["id"]: n for n, item in enumerate(items)}
    for item in items:
        if "@@" in json.dumps(item):
            raise ValueError(f"{item['id']}: holds the copier's sentinel '@@'")
    return tuple(compile_item(item, numbers[item["id"]], numbers) for item in items)


@lru_cache(maxsize=4096)
def _word(block: int) -> str:
    return copy_word(block)


def _chosen(template: ItemTemplate, keep: int, rng: random.Random) -> list[int]:
    """Indices of the statements a small item keeps: its first P31, then a random choice, in order."""
    total = len(template.statements)
    if keep >= total:
        return list(range(total))
    p31 = template.first_instance_of
    if p31 is None:
        return sorted(rng.sample(range(total), keep))
    others = [i + (i >= p31) for i in rng.sample(range(total - 1), keep - 1)]
    return sorted([p31, *others])


def _claims(template: ItemTemplate, chosen: list[int], fields: dict[str, str]) -> str:
    parts, previous = [], None
    for i in chosen:
        statement = template.statements[i]
        if statement.prop != previous:
            parts.append(("], " if previous else "") + f'"{statement.prop}": [')
            previous = statement.prop
        else:
            parts.append(", ")
        parts.append(statement.fmt.format_map(fields))
    return "".join(parts) + ("]" if previous else "")


@dataclass
class ItemCounts:
    """What a chunk of items holds, for the corpus manifest."""

    items: int = 0
    whole: int = 0
    statements: int = 0
    histogram: dict[int, int] | None = None

    def add(self, other: ItemCounts) -> None:
        self.items += other.items
        self.whole += other.whole
        self.statements += other.statements
        hist = self.histogram if self.histogram is not None else {}
        for k, v in (other.histogram or {}).items():
            hist[k] = hist.get(k, 0) + v
        self.histogram = hist


def render_item(
    template: ItemTemplate, index: int, block: int, per_block: int, spread: SizeSpread, rng: random.Random
) -> tuple[str, bool, int]:
    """The dump line (without its ``,\\n``) of corpus entity ``index``; (line, whole?, statements)."""
    number = item_number(index)
    fields = {"q": f"Q{number}", "ql": f"q{number}", "s": _word(block)}
    for ref in template.refs:
        target = item_number(block * per_block + ref)
        fields[f"r{ref}"] = f'{{"entity-type": "item", "numeric-id": {target}, "id": "Q{target}"}}'
    whole, keep = spread.item_size(rng, len(template.statements))
    chosen = _chosen(template, keep, rng)
    line = template.head[whole].format_map(fields) + _claims(template, chosen, fields)
    return line + template.tail[whole].format_map(fields), whole, len(chosen)


def render_items(
    templates: Sequence[ItemTemplate], start: int, count: int, spread: SizeSpread, seed: int
) -> tuple[bytes, ItemCounts]:
    """Dump lines of entities ``start`` … ``start + count - 1``; random draws seeded by the chunk."""
    rng = random.Random(f"{seed}/items/{start}")
    per_block = len(templates)
    lines, counts = [], ItemCounts(histogram={})
    for index in range(start, start + count):
        block, number = divmod(index, per_block)
        line, whole, statements = render_item(templates[number], index, block, per_block, spread, rng)
        lines.append(line)
        counts.items += 1
        counts.whole += whole
        counts.statements += statements
        counts.histogram[statements] = counts.histogram.get(statements, 0) + 1  # type: ignore[index]
    return ("".join(f"{line},\n" for line in lines)).encode("ascii"), counts
