"""Seeded mutation fuzzing of every parser boundary: each input is parsed or rejected with its position, never
an unhandled exception, and the good records around it come out unchanged (issue 17).

    python benchmarks/fuzz.py [--inputs 10000] [--seed 1] [--boundary NAME ...]
                              [--out benchmarks/results/fuzz]
    python benchmarks/fuzz.py --replay NAME INDEX [--seed 1]     # print one generated input

Boundaries and what each input is:
- ``wikidata``: one entity line of a dump, through ``ingest_wikidata``;
- ``wikitext``: one article's wikitext, through ``parse_article``;
- ``xml``: one ``<page>`` of an export, through ``ingest_wikipedia``;
- ``ottqa``: one table (``tables.json.gz``) or one passage (``passages.json.gz``), through ``ingest_ottqa``;
- ``questions``: one line of a batch question file, through ``read_questions``;
- ``config``: one engine config file (TOML or YAML), through ``EngineConfig.load``.

Seeds are the real samples in ``data/samples`` (the config seeds are the repository's engine configs and the
defaults); an input is a seed with one to three stacked mutations: truncation, byte flips, invalid UTF-8,
deleted, duplicated and swapped spans, control characters, other scripts, huge strings, deep nesting, the
boundary's own tokens (``{{``, ``{|``, ``[[``, ``<ref>``, ``<!--``; tags, entities, CDATA, namespaces), a
mutation that knows the structure (hostile rowspan/colspan on a table cell, one closer of a template,
table, link, ref or comment cut out; an XML tag cut, dropped or moved to another namespace) and, for JSON
and YAML records, a type swap of one value (``{"id": 12}``). Input ``i`` of a boundary is drawn from
``random.Random(f"{seed}:{boundary}:{i}")`` alone, so any input is replayed from its index. Only the standard
library generates inputs: no fuzzing package is needed.

The whole-file boundaries (wikidata, xml, ottqa, questions) put a batch of mutated records among good ones
into one file per call and then account for every record: each mutated one must come out parsed, skipped
for a documented reason or quarantined at its own position, and each good one exactly as a clean run of
the good records alone gives it. wikitext and config take one input per call, and a good page or config
is read again after each batch. An exception out of a boundary is a crash (a whole-file batch is then
replayed record by record to name the input that caused it); anything else that breaks the property (a
good record lost or changed, a mutated record gone without trace, an error without its position or file)
is a violation. A call still running after ``INPUT_SECONDS`` is stopped and its input reported as slow.
"""

from __future__ import annotations

import argparse
import bz2
import gzip
import json
import logging
import os
import random
import re
import shlex
import signal
import sys
import tempfile
import time
import traceback
import xml.etree.ElementTree as ET
from collections import Counter
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any
from xml.sax.saxutils import escape

import yaml

REPO = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(REPO))

SAMPLES = REPO / "data" / "samples"
WIKIDATA_ITEMS = SAMPLES / "wikidata" / "wikidata-sample-items.json.bz2"
WIKIDATA_API = SAMPLES / "wikidata" / "wikidata-api-stream-sample.json.bz2"
ENWIKI_DUMPS = (
    SAMPLES / "wikipedia" / "enwiki-2016-sample-pages-articles.xml.bz2",
    SAMPLES / "wikipedia" / "enwiki-table-markup.xml.bz2",
)
OTTQA = SAMPLES / "ottqa"
QUESTIONS = SAMPLES / "questions.jsonl"
ENGINE_CONFIGS = sorted((REPO / "benchmarks" / "results" / "llm_reader").rglob("*engine.toml"))
EXCERPT = 300

# ---------------------------------------------------------------------------------------------------------
# Mutators: each takes the input's random generator and bytes, and returns new bytes.


def tokens(text: str) -> tuple[bytes, ...]:
    """Tokens written two spaces apart, several to a line, with backslash escapes (``\\n``, ``\\x20``)."""
    out = []
    for line in text.strip().splitlines():
        for token in line.strip().split("  "):
            out.append(token.encode("latin-1", "backslashreplace").decode("unicode_escape").encode())
    return tuple(out)


HOSTILE_SPANS = (
    b'rowspan="' + b"9" * 5000 + b'"',
    b"colspan=99999999999",
    b"rowspan=0",
    b"rowspan=-3",
    b'colspan="x"',
    "rowspan=\u0663".encode(),
    b'style="{{"',
)
_CELL_START = re.compile(rb"\n[|!](?![-}+])")
_WIKITEXT_CLOSER = re.compile(rb"\}\}|\n\|\}|\]\]|</ref>|-->")
_XML_TAG = re.compile(rb"</?[A-Za-z][^<>]*>")


def wikitext_structure(rng: random.Random, data: bytes) -> bytes | None:
    """Hostile span attributes on a table cell, or one closer cut out so its template, table, link, ref or
    comment runs on to the end; None when the text has neither."""
    cells = [m.end() for m in _CELL_START.finditer(data)]
    if cells and rng.random() < 0.5:
        at = rng.choice(cells)
        return data[:at] + b" " + rng.choice(HOSTILE_SPANS) + b" |" + data[at:]
    closers = [m.span() for m in _WIKITEXT_CLOSER.finditer(data)]
    if not closers:
        return None
    start, end = rng.choice(closers)
    return data[:start] + data[end:]


def xml_structure(rng: random.Random, data: bytes) -> bytes | None:
    """One tag cut, dropped, moved into an undeclared namespace or given a namespace of its own."""
    tags = [m.span() for m in _XML_TAG.finditer(data)]
    if not tags:
        return None
    start, end = rng.choice(tags)
    tag = data[start:end]
    name_at = 2 if tag.startswith(b"</") else 1
    changed = rng.choice(
        (
            b"",
            tag[: rng.randrange(1, len(tag))],
            tag[:name_at] + b"mw:" + tag[name_at:],
            tag[:-1] + b' xmlns="http://example.org/other">' if not tag.startswith(b"</") else tag + tag,
        )
    )
    return data[:start] + changed + data[end:]


@dataclass(frozen=True)
class Dialect:
    """What a boundary's records are made of: tokens worth inserting, pairs worth nesting, and a mutation that
    knows their structure."""

    tokens: tuple[bytes, ...]
    nests: tuple[tuple[bytes, bytes], ...]
    structure: Callable[[random.Random, bytes], bytes | None] | None = None


JSON_DIALECT = Dialect(
    tokens(r"""
        {  }  [  ]  ,  :  "  \\  \\u  \\ud800  \\udfff  \\u0000  null  true  -  1e999  NaN  Infinity  -0
        0x1F  99999999999999999999999  "id"  "id": 12  "claims"  "mainsnak"  "datavalue"  "type"  "value"
        ,,  //  /*  \ufeff
    """),
    nests=((b"[", b"]"), (b'{"a":', b"}"), (b'{"value": {"value": ', b"}}")),
)
WIKITEXT_DIALECT = Dialect(
    (
        *tokens(r"""
            {{  }}  {{{  }}}  {{Infobox person\n| name =\x20  \n| birth_place = [[  {{cite web|url=  {{#if:
            {{!}}  {|  |}  {| class="wikitable"\n  \n|-\n  \n|\x20  ||  !!  \n!\x20  |+\x20  rowspan="
            colspan=99999999999 |  rowspan=0 |  [[  ]]  [[Category:  [[File:X.jpg|thumb|[[  [[:fr:  [[#  |
            <ref>  </ref>  <ref name="a"/>  <references/>  <!--  -->  ''  '''  \n==\x20  \x20==\n  \n=
            <nowiki>  </nowiki>  <math>  <div>  </div>  <table><tr><td>  <br/>  &nbsp;  &#x0;  &#xD800;
            &bogus;  __NOTOC__  #REDIRECT [[  [http://x.org a  \n*  \n#  \n:  ~~~~  <pre>  <gallery>
            <span style="  \u200f  <ref>{{cite|  }}</ref>  \n\n
        """),
        b"rowspan=" + b"9" * 5000 + b" |",
    ),
    nests=(
        (b"{{", b"}}"),
        (b"[[", b"]]"),
        (b"{|\n|", b"\n|}"),
        (b"<ref>", b"</ref>"),
        (b"<!--", b"-->"),
        (b"'''", b"'''"),
        (b"<div>", b"</div>"),
        (b"{{{", b"}}}"),
        (b"{{Infobox x|a=", b"}}"),
        (b"{|\n|-\n| {|\n|", b"\n|}\n|}"),
    ),
    structure=wikitext_structure,
)
XML_DIALECT = Dialect(
    tokens(r"""
        <page>  </page>  <title>  </title>  <id>  </id>  <ns>  </ns>  <revision>  </revision>  </text>
        <text xml:space="preserve">  <redirect title="Elsewhere" />  <![CDATA[  ]]>  <![CDATA[</page><page>]]>
        &amp;  &lt;  &#0;  &#x1F;  &#1114112;  &#xD800;  &bogus;  <!DOCTYPE page [<!ENTITY e "x">]>  &e;
        <?xml version="1.0"?>  <mw:page xmlns:mw="urn:x">  \x20xmlns="http://example.org/"
        \x20xmlns:x="urn:y" x:a="1"  <x:title>  <!-- c -->  <  >  &  "  <ns>1</ns>  <ns>-1</ns>  <ns>x</ns>
        <id>-5</id>  <id>\u00b2</id>  <id>99999999999999999999999</id>  </mediawiki>  <mediawiki>
        <siteinfo>  {{  [[  {|  <ref>
    """),
    nests=((b"<a>", b"</a>"), (b"<b x='1'>", b"</b>"), (b"&lt;ref&gt;", b"&lt;/ref&gt;"), (b"{{", b"}}")),
    structure=xml_structure,
)
CONFIG_DIALECT = Dialect(
    (
        *tokens(r"""
            [  ]  [[  ]]  [engine]  [engine.rerank]  =  "  '''  \x22\x22\x22  \\  :  -\x20  {  }  !!binary
            !!python/object:os.system  &a  *a  <<: *a  ---  ...  %YAML 1.1  modes = 12  modes = ["sql"]
            reader = 3  null  ~  inf  nan  1979-05-27  0x_1  \t  #  llm_reader:  \x20 evidence: -1
            evidence = true  \n
        """),
        b"9" * 5000,
    ),
    nests=((b"[", b"]"), (b"{a = ", b"}"), (b"- ", b""), (b"a:\n ", b"")),
)

INVALID_UTF8 = (b"\xff", b"\xfe", b"\xc3", b"\xc0\xaf", b"\xed\xa0\x80", b"\xf8\x88\x80\x80\x80", b"\x80")
CONTROL = tokens(r"""
    \x00  \x01  \x07  \x08  \x0b  \x0c  \x0e  \x1b  \x1f  \x7f  \r  \x85  \u2028  \u2029  \ufeff  \ufffe
""")
# Look-alike letters and digits (fraktur, fullwidth) are the point here.
SCRIPTS = tokens(r"""
    Ελληνικά  Русский  中文字符  日本語のテキスト  العربية  עברית  हिन्दी  ภาษาไทย  한국어
    🙂👩\u200d👩\u200d👧  e\u0301\u0301\u0301  \u202eevil\u202c  𝔘𝔫𝔦𝔠𝔬𝔡𝔢  Ⅻ  ٣٤٥  １２３  ß  İı
""")  # noqa: RUF001
HUGE_UNITS = (b"a", "é".encode(), "中".encode(), b"{{", b"[[", b"'", b" ", b"\\", b"<", b"\n", b"|")


def _pos(rng: random.Random, data: bytes) -> int:
    return rng.randrange(len(data) + 1)


def _span(rng: random.Random, data: bytes) -> tuple[int, int]:
    start = _pos(rng, data)
    length = min(len(data) - start, int(rng.expovariate(1 / rng.choice((4, 64, 1024)))) + 1)
    return start, start + length


def _insert(rng: random.Random, data: bytes, piece: bytes) -> bytes:
    at = _pos(rng, data)
    return data[:at] + piece + data[at:]


def truncate(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    return data[: _pos(rng, data)]


def flip_bytes(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    if not data:
        return bytes([rng.randrange(256)])
    out = bytearray(data)
    for _ in range(rng.randint(1, 8)):
        i = rng.randrange(len(out))
        out[i] = rng.randrange(256) if rng.random() < 0.3 else out[i] ^ (1 << rng.randrange(8))
    return bytes(out)


def invalid_utf8(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    for _ in range(rng.randint(1, 3)):
        data = _insert(rng, data, rng.choice(INVALID_UTF8))
    return data


def delete_span(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    start, end = _span(rng, data)
    return data[:start] + data[end:]


def duplicate_span(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    start, end = _span(rng, data)
    return data[:end] + data[start:end] * rng.choice((1, 1, 2, 10)) + data[end:]


def swap_spans(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    (a, b), (c, d) = sorted((_span(rng, data), _span(rng, data)))
    if c < b:  # overlapping spans: move the first one to the end instead
        return data[:a] + data[b:] + data[a:b]
    return data[:a] + data[c:d] + data[b:c] + data[a:b] + data[d:]


def control_chars(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    for _ in range(rng.randint(1, 5)):
        data = _insert(rng, data, rng.choice(CONTROL))
    return data


def other_scripts(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    for _ in range(rng.randint(1, 3)):
        data = _insert(rng, data, rng.choice(SCRIPTS))
    return data


def huge_string(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    size = rng.choice((2_000, 20_000, 200_000, 200_000, 1_500_000))
    unit = rng.choice(HUGE_UNITS + dialect.tokens[:4])
    return _insert(rng, data, unit * (size // len(unit)))


def deep_nesting(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    opener, closer = rng.choice(dialect.nests)
    depth = rng.choice((20, 200, 2_000, 20_000, 100_000))
    closing = closer * depth if rng.random() < 0.5 else closer * rng.randrange(depth)
    at = _pos(rng, data)
    return data[:at] + opener * depth + closing + data[at:]


def insert_tokens(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    for _ in range(rng.randint(1, 6)):
        data = _insert(rng, data, rng.choice(dialect.tokens))
    return data


def structure(rng: random.Random, data: bytes, dialect: Dialect) -> bytes:
    changed = dialect.structure(rng, data) if dialect.structure is not None else None
    return insert_tokens(rng, data, dialect) if changed is None else changed


BYTE_MUTATORS: dict[str, Callable[[random.Random, bytes, Dialect], bytes]] = {
    "truncate": truncate,
    "flip_bytes": flip_bytes,
    "invalid_utf8": invalid_utf8,
    "delete_span": delete_span,
    "duplicate_span": duplicate_span,
    "swap_spans": swap_spans,
    "control_chars": control_chars,
    "other_scripts": other_scripts,
    "huge_string": huge_string,
    "deep_nesting": deep_nesting,
    "insert_tokens": insert_tokens,
    "structure": structure,
}
# Huge strings and deep nesting are costly to parse: drawn less often than the cheap mutations.
BYTE_WEIGHTS = {"huge_string": 0.4, "deep_nesting": 0.6, "structure": 2.0}


def mutate_bytes(rng: random.Random, data: bytes, dialect: Dialect, names: list[str]) -> bytes:
    """One to three stacked byte-level mutations; their names are appended to ``names``."""
    choices = [name for name in BYTE_MUTATORS if name != "structure" or dialect.structure is not None]
    weights = [BYTE_WEIGHTS.get(name, 1.0) for name in choices]
    for _ in range(rng.choice((1, 1, 1, 2, 2, 3))):
        name = rng.choices(choices, weights)[0]
        names.append(name)
        data = BYTE_MUTATORS[name](rng, data, dialect)
    return data


# Structured mutations: one value of a parsed JSON/YAML record swapped for another type or shape.
NEST_MARK = "\u2063fuzz-nest\u2063"  # replaced by deep nesting after serialization (json.dumps would recurse)


def _replacement(rng: random.Random, old: Any) -> tuple[str, Any]:
    """A value of another type (or a hostile one of the same type) to put where ``old`` was."""
    options: list[tuple[str, Callable[[], Any]]] = [
        ("int", lambda: rng.choice((12, 0, -1, 2**31, 2**63, 2**70, 10**40))),
        ("float", lambda: rng.choice((1.5, -0.0, 1e308, float("nan"), float("inf")))),
        ("bool", lambda: rng.random() < 0.5),
        ("null", lambda: None),
        ("list", lambda: rng.choice(([], [old], [old, old], [None], [[1, [2]]]))),
        ("object", lambda: rng.choice(({}, {"value": old}, {"id": old, "type": 12}, {"": None}))),
        ("str", lambda: rng.choice(("", "x", str(old)[:100], " ", "\x00", "\ud800", "Q12$", "/wiki/"))),
        ("script", lambda: rng.choice(SCRIPTS).decode()),
        ("huge_str", lambda: rng.choice(("x", "é", "{{", "[[")) * rng.choice((10_000, 300_000))),
        ("deep", lambda: NEST_MARK),
    ]
    name, make = rng.choice(options)
    return name, make()


def _paths(value: Any, limit: int = 2_000) -> list[tuple[Any, ...]]:
    """Paths (keys and indexes) to the nodes of a parsed record, breadth first, at most ``limit``."""
    out: list[tuple[Any, ...]] = [()]
    queue: list[tuple[tuple[Any, ...], Any]] = [((), value)]
    while queue and len(out) < limit:
        path, node = queue.pop(0)
        children = (
            node.items() if isinstance(node, dict) else enumerate(node) if isinstance(node, list) else ()
        )
        for key, child in children:
            out.append((*path, key))
            queue.append(((*path, key), child))
    return out


def mutate_value(rng: random.Random, value: Any, names: list[str]) -> Any:
    """Swap the type of one node of ``value`` (or drop / add a key); returns the changed copy."""
    value = json.loads(json.dumps(value))  # a private copy
    paths = _paths(value)
    # Deep nodes are far more numerous; pick the depth first so the record's own fields get their share.
    depth = rng.randrange(1 + max(len(p) for p in paths))
    path = rng.choice([p for p in paths if len(p) == depth] or paths)
    if not path:
        name, new = _replacement(rng, value)
        names.append(f"type:{name}@root")
        return new
    parent = value
    for key in path[:-1]:
        parent = parent[key]
    key = path[-1]
    roll = rng.random()
    if isinstance(parent, dict) and roll < 0.12:
        del parent[key]
        names.append(f"drop:{'/'.join(map(str, path))[:80]}")
        return value
    if isinstance(parent, dict) and roll < 0.18:
        parent[rng.choice(("unexpected", "", "\u00e9", "id"))] = parent[key]
        names.append(f"add-key:{'/'.join(map(str, path[:-1]))[:80]}")
        return value
    name, parent[key] = _replacement(rng, parent[key])
    names.append(f"type:{name}@{'/'.join(map(str, path))[:80]}")
    return value


def dump_json(rng: random.Random, value: Any) -> bytes:
    text = json.dumps(value, ensure_ascii=rng.random() < 0.5)
    if NEST_MARK in text or json.dumps(NEST_MARK) in text:
        depth = rng.choice((50, 1_000, 100_000))
        nest = "[" * depth + "]" * depth if rng.random() < 0.6 else '{"a":' * depth + "1" + "}" * depth
        text = text.replace(json.dumps(NEST_MARK), nest).replace(
            json.dumps(NEST_MARK, ensure_ascii=False), nest
        )
    return text.encode("utf-8", errors="surrogatepass")


# ---------------------------------------------------------------------------------------------------------
# Inputs, outcomes and the per-boundary report.


@dataclass
class FuzzInput:
    index: int
    seed_name: str
    mutations: list[str]
    data: bytes


@dataclass
class Finding:
    """A crash (an exception out of the boundary) or a violation of the property, with what reproduces it."""

    kind: str  # "crash", "violation" or "slow"
    index: int | None
    message: str
    mutations: list[str] = field(default_factory=list)
    seed_name: str = ""
    excerpt: str = ""

    @classmethod
    def of(cls, kind: str, item: FuzzInput | None, message: str) -> Finding:
        if item is None:
            return cls(kind, None, message)
        return cls(kind, item.index, message, item.mutations, item.seed_name, repr(item.data[:EXCERPT]))


@dataclass
class BoundaryReport:
    boundary: str
    inputs: int = 0
    parsed: int = 0
    rejected: int = 0
    skipped: int = 0
    good_records_checked: int = 0
    calls: int = 0
    seconds: float = 0.0
    slowest_call_seconds: float = 0.0
    findings: list[Finding] = field(default_factory=list)
    reasons: Counter[str] = field(default_factory=Counter)  # why inputs were skipped, or counted unusually

    def add(self, finding: Finding) -> None:
        self.findings.append(finding)

    def skip(self, reason: str) -> None:
        self.skipped += 1
        self.reasons[f"skipped: {reason}"] += 1

    @property
    def slow(self) -> int:
        return sum(1 for f in self.findings if f.kind == "slow")

    @property
    def crashes(self) -> int:
        return sum(1 for f in self.findings if f.kind == "crash")

    @property
    def violations(self) -> int:
        return sum(1 for f in self.findings if f.kind == "violation")

    def count(self, outcome: str) -> None:
        setattr(self, outcome, getattr(self, outcome) + 1)

    def as_dict(self) -> dict[str, Any]:
        return {
            "boundary": self.boundary,
            "inputs": self.inputs,
            "parsed": self.parsed,
            "quarantined_or_rejected": self.rejected,
            "skipped": self.skipped,
            "reasons": dict(self.reasons),
            "crashes": self.crashes,
            "violations": self.violations,
            "slow": self.slow,
            "good_records_checked": self.good_records_checked,
            "calls": self.calls,
            "seconds": round(self.seconds, 1),
            "slowest_call_seconds": round(self.slowest_call_seconds, 2),
            "findings": [f.__dict__ for f in self.findings[:50]],
        }


# Some inputs take minutes (the wikitext parsers are quadratic on long runs of unclosed tables, refs and
# comments): a call is interrupted after this long and its input reported as slow, so the job ends.
INPUT_SECONDS = 20.0
BATCH_SECONDS = 60.0


class CallTimeout(BaseException):
    """Raised in the main thread when a call outlives its time limit (a BaseException: parsers that catch
    every Exception must not swallow it)."""


@contextmanager
def time_limit(seconds: float) -> Iterator[None]:
    """Interrupt the block after ``seconds`` with ``CallTimeout`` (SIGALRM; main thread only)."""

    def expire(signum: int, frame: object) -> None:
        raise CallTimeout(f"still running after {seconds:g} s")

    previous = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)


def last_line(exc: BaseException) -> str:
    return traceback.format_exception_only(type(exc), exc)[-1].strip()[:500]


def input_rng(seed: int, boundary: str, index: int) -> random.Random:
    return random.Random(f"{seed}:{boundary}:{index}")


class Boundary:
    """One parser boundary: seeds, a generator of mutated inputs, and a runner that checks a batch of them."""

    name = ""
    batch = 1

    def __init__(self, work: Path):
        self.work = work

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        raise NotImplementedError

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        raise NotImplementedError


def run_boundary(boundary: Boundary, inputs: int, seed: int, *, start: int = 0) -> BoundaryReport:
    """Generate ``inputs`` inputs of one boundary (indexes ``start`` on) and check them batch by batch."""
    report = BoundaryReport(boundary.name)
    started = time.perf_counter()
    for first in range(start, start + inputs, boundary.batch):
        indexes = range(first, min(first + boundary.batch, start + inputs))
        items = [boundary.generate(input_rng(seed, boundary.name, i), i) for i in indexes]
        call_start = time.perf_counter()
        boundary.run_batch(items, report)
        report.slowest_call_seconds = max(report.slowest_call_seconds, time.perf_counter() - call_start)
        report.inputs += len(items)
    report.seconds = time.perf_counter() - started
    return report


class RecordBoundary(Boundary):
    """A boundary called on a file of many records: a crash (or a hang) of the call is pinned on its record by
    replaying the batch one record at a time, among the same good records."""

    def call(self, items: list[FuzzInput]) -> Any:
        raise NotImplementedError

    def account(self, items: list[FuzzInput], result: Any, report: BoundaryReport) -> None:
        raise NotImplementedError

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        self.run_group(items, report)

    def run_group(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        report.calls += 1
        try:
            with time_limit(BATCH_SECONDS):
                result = self.call(items)
        except (Exception, CallTimeout) as exc:
            if len(items) == 1:
                report.add(
                    Finding.of("slow" if isinstance(exc, CallTimeout) else "crash", items[0], last_line(exc))
                )
                return
            blamed = False
            for item in items:
                report.calls += 1
                try:
                    with time_limit(INPUT_SECONDS):
                        result = self.call([item])
                except CallTimeout as slow:
                    report.add(Finding.of("slow", item, last_line(slow)))
                    blamed = True
                except Exception as solo:
                    report.add(Finding.of("crash", item, last_line(solo)))
                    blamed = True
                else:
                    self.account([item], result, report)
            if not blamed:
                span = f"inputs {items[0].index}..{items[-1].index} together"
                report.add(Finding.of("crash", None, f"{span}: {last_line(exc)}"))
            return
        self.account(items, result, report)


def _interleave(rng: random.Random, mutated: list[Any], good: list[Any]) -> list[tuple[str, int]]:
    """Good and mutated records in one random order: ("good", i) / ("mut", k), each list keeping its order."""
    slots = [("mut", k) for k in range(len(mutated))] + [("good", i) for i in range(len(good))]
    rng.shuffle(slots)
    order = {"mut": iter(range(len(mutated))), "good": iter(range(len(good)))}
    return [(kind, next(order[kind])) for kind, _ in slots]


def _read_tables(paths: dict[str, str]) -> dict[str, list[dict]]:
    import pyarrow.parquet as pq

    return {table: pq.read_table(path).to_pylist() for table, path in paths.items()}


# ---------------------------------------------------------------------------------------------------------
# 1. A Wikidata entity line, through ingest_wikidata.


def dump_lines(path: Path) -> list[bytes]:
    """The entity lines of a sample dump, without the array brackets and trailing commas."""
    lines = bz2.decompress(path.read_bytes()).split(b"\n")
    return [ln.rstrip().rstrip(b",") for ln in lines if ln.strip() not in (b"[", b"]", b"")]


def unread_dump_line(data: bytes) -> bool:
    """Lines a Wikidata dump reader passes over: blank ones and array brackets (one trailing comma aside)."""
    data = data.strip()
    if data.endswith(b","):
        data = data[:-1]
    return data in (b"", b"[", b"]")


class WikidataBoundary(RecordBoundary):
    name = "wikidata"
    batch = 100
    good_count = 16

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.wikidata.ingest import WikidataIngestOptions, ingest_wikidata

        self._ingest = ingest_wikidata
        self._options = WikidataIngestOptions(workers=1, max_error_rate=None, max_line_bytes=1 << 20)
        items, api = dump_lines(WIKIDATA_ITEMS), dump_lines(WIKIDATA_API)
        self.good = (
            sorted(items, key=len)[: self.good_count // 2]
            + api[:: len(api) // (self.good_count // 2)][: self.good_count // 2]
        )
        good_ids = {json.loads(line)["id"] for line in self.good}
        self.seeds = [ln for ln in items + api if json.loads(ln)["id"] not in good_ids and len(ln) < 400_000]
        baseline = self.call([])
        self.good_entities = baseline["entities"]
        self.good_statements = {row["statement_id"]: row for row in baseline["statements"]}
        assert len(self.good_entities) == len(self.good) and not baseline["quarantine"]

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        seed = rng.choice(self.seeds)
        names: list[str] = []
        data = dump_json(rng, mutate_value(rng, json.loads(seed), names)) if rng.random() < 0.45 else seed
        if not names or rng.random() < 0.2:
            data = mutate_bytes(rng, data + (b"," if rng.random() < 0.8 else b""), JSON_DIALECT, names)
        return FuzzInput(index, f"entity {json.loads(seed)['id']}", names, data)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        order = _interleave(rng, items, self.good)
        records = [self.good[i] + b"," if kind == "good" else items[i].data for kind, i in order]
        body = b"[\n" + b"\n".join(records) + b"\n]\n"
        owners: list[tuple[str, int] | None] = [None]  # physical line 1 is '['
        for slot, record in zip(order, records, strict=True):
            owners += [slot] * (record.count(b"\n") + 1)
        owners.append(None)  # ']'
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            dump = Path(tmp) / "fuzz-wikidata.json.bz2"
            dump.write_bytes(bz2.compress(body, 1))
            summary = self._ingest(dump, Path(tmp) / "out", self._options)
            tables = _read_tables({o.table: o.path for o in summary.outputs})
        tables.update(owners=owners, lines=body.split(b"\n"), summary=summary)
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        owners, lines = result["owners"], result["lines"]
        quarantined_lines: set[int] = set()
        rejected: set[int] = set()
        for row in result["quarantine"]:
            line = row["line"]
            owner = owners[line - 1] if line is not None and 0 < line <= len(owners) else None
            item = items[owner[1]] if owner and owner[0] == "mut" else None
            if line is None or row["byte_offset"] is None or not row["error"]:
                report.add(Finding.of("violation", item, f"quarantined without its position: {row}"))
            elif owner is None or owner[0] == "good":
                report.add(Finding.of("violation", None, f"a good line was quarantined: {row}"))
            else:
                quarantined_lines.add(line)
                rejected.add(owner[1])
        entities = iter(result["entities"])
        readable: set[int] = set()
        for line_no, (owner, data) in enumerate(zip(owners, lines, strict=False), start=1):
            if line_no in quarantined_lines or unread_dump_line(data):
                continue
            row = next(entities, None)
            if row is None:
                report.add(Finding.of("violation", None, f"line {line_no}: no entity row"))
                return
            if owner is not None and owner[0] == "good":
                report.good_records_checked += 1
                if row != self.good_entities[owner[1]]:
                    report.add(Finding.of("violation", None, f"good entity changed: {row['id']}"))
            elif owner is not None:
                readable.add(owner[1])
        if next(entities, None) is not None:
            report.add(Finding.of("violation", None, "more entity rows than readable lines"))
        statements: dict[str, list[dict]] = {}
        for row in result["statements"]:
            statements.setdefault(row["statement_id"], []).append(row)
        for statement_id, row in self.good_statements.items():
            if row not in statements.get(statement_id, []):
                report.add(Finding.of("violation", None, f"good statement lost: {statement_id}"))
        for k in range(len(items)):
            if k in rejected or k in readable:
                report.count("rejected" if k in rejected else "parsed")
            else:
                report.skip("a blank line or an array bracket, which a dump reader passes over")


# ---------------------------------------------------------------------------------------------------------
# 2. One article's wikitext, through parse_article.


def raw_pages(path: Path) -> tuple[bytes, list[bytes]]:
    """The export's header (up to the first page) and each ``<page>…</page>`` as bytes, cut independently."""
    data = bz2.decompress(path.read_bytes())
    pages, pos = [], data.find(b"<page>")
    header = data[:pos]
    while pos >= 0:
        end = data.index(b"</page>", pos) + len(b"</page>")
        pages.append(data[pos:end])
        pos = data.find(b"<page>", end)
    return header, pages


@dataclass
class SamplePage:
    raw: bytes
    page_id: int
    title: str
    namespace: int
    redirect: bool
    text: str


def sample_pages() -> list[SamplePage]:
    out = []
    for dump in ENWIKI_DUMPS:
        for raw in raw_pages(dump)[1]:
            root = ET.fromstring(raw)
            out.append(
                SamplePage(
                    raw=raw,
                    page_id=int(root.findtext("id") or 0),
                    title=root.findtext("title") or "",
                    namespace=int(root.findtext("ns") or 0),
                    redirect=root.find("redirect") is not None,
                    text=root.findtext("revision/text") or "",
                )
            )
    return out


def text_window(rng: random.Random, text: str) -> str:
    """A stretch of real wikitext, starting at a line: whole small pages, else 0.5-6 kB of a long one."""
    if len(text) <= 3_000 or (rng.random() < 0.05 and len(text) < 40_000):
        return text
    start = rng.randrange(len(text))
    start = 0 if rng.random() < 0.2 else text.rfind("\n", 0, start) + 1
    return text[start : start + rng.choice((500, 2_000, 6_000))]


PROBLEM_KINDS = {
    "too_long",
    "too_deep",
    "unclosed_template",
    "unclosed_table",
    "table_parse_error",
    "parse_error",
}


class WikitextBoundary(Boundary):
    name = "wikitext"
    batch = 50

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.parquet_sink import rows_to_table
        from ingest.wikitext import parse_article
        from schemas.wikipedia import InfoboxField, Link, Passage, TableRow

        self._parse = parse_article
        self._rows_to_table = rows_to_table
        self._models = {
            "passages": Passage,
            "infobox_fields": InfoboxField,
            "table_rows": TableRow,
            "links": Link,
        }
        articles = [p for p in sample_pages() if p.namespace == 0 and not p.redirect and p.text]
        self.seeds = articles
        self.good = [(p.page_id, p.title, p.text[:8_000]) for p in articles[:: max(1, len(articles) // 6)]]
        self.baseline = [parse_article(*page) for page in self.good]
        self.batches = 0

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        page = rng.choice(self.seeds)
        names: list[str] = []
        data = mutate_bytes(rng, text_window(rng, page.text).encode(), WIKITEXT_DIALECT, names)
        return FuzzInput(index, f"page {page.title!r}", names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        for item in items:
            report.calls += 1
            text = item.data.decode("utf-8", errors="replace")  # the XML reader hands over str
            try:
                with time_limit(INPUT_SECONDS):
                    article = self._parse(item.index + 1, f"Fuzz {item.index}", text)
            except CallTimeout as exc:
                report.add(Finding.of("slow", item, last_line(exc)))
                continue
            except Exception as exc:
                report.add(Finding.of("crash", item, last_line(exc)))
                continue
            for table, model in self._models.items():
                try:
                    self._rows_to_table(getattr(article, table), model)
                except ValueError as exc:  # the ingest would fail writing this page's rows
                    report.add(Finding.of("violation", item, f"{table}: {str(exc)[:300]}"))
            if not all(isinstance(c, str) for c in article.categories):
                report.add(Finding.of("violation", item, f"categories {article.categories[:5]}"))
            for problem in article.problems:
                if problem.kind not in PROBLEM_KINDS or not problem.message:
                    report.add(Finding.of("violation", item, f"unknown problem {problem}"))
                elif not -1 <= problem.char_offset <= len(text):
                    report.add(Finding.of("violation", item, f"problem outside the page {problem}"))
            report.count("rejected" if article.problems else "parsed")
        # A good page parsed after the mutated ones comes out as it did alone: no state leaks between pages.
        which = self.batches % len(self.good)
        self.batches += 1
        report.good_records_checked += 1
        if self._parse(*self.good[which]) != self.baseline[which]:  # parse_article never raises on good pages
            report.add(Finding.of("violation", None, f"good page {self.good[which][1]!r} changed"))


# ---------------------------------------------------------------------------------------------------------
# 3. An XML <page>, through ingest_wikipedia.

_TEXT_ELEMENT = re.compile(rb"(<text\b[^>]*>)(.*?)(</text>)", re.DOTALL)
_FIRST_ID = re.compile(r"<id>\s*(\d+)\s*</id>")  # \d: the reader takes any Unicode digits, as int() does
_FIRST_NS = re.compile(rb"<ns>(.*?)</ns>", re.DOTALL)


def with_text(page: SamplePage, text: str) -> bytes:
    """The page's real XML with its wikitext replaced by ``text`` (escaped as the dumps escape it)."""
    match = _TEXT_ELEMENT.search(page.raw)
    if match is None:
        return page.raw
    body = escape(text, {'"': "&quot;"}).encode("utf-8", errors="replace")
    return page.raw[: match.start(2)] + body + page.raw[match.end(2) :]


class XmlBoundary(RecordBoundary):
    name = "xml"
    batch = 100
    first_good_id = 900_000_000

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.wikipedia.ingest import WikipediaIngestOptions, ingest_wikipedia

        self._ingest = ingest_wikipedia
        self._options = WikipediaIngestOptions(workers=1, max_error_rate=None, max_page_bytes=1 << 20)
        self.header = raw_pages(ENWIKI_DUMPS[0])[0]
        pages = sample_pages()
        articles = [p for p in pages if p.namespace == 0 and not p.redirect]
        chosen = (
            articles[3::25][:7] + [p for p in pages if p.redirect][:1] + [p for p in pages if p.namespace][:1]
        )
        self.good = []
        for k, page in enumerate(chosen):
            raw = with_text(page, page.text[:5_000])
            good_id = f"<id>{self.first_good_id + k}</id>"
            self.good.append(_FIRST_ID.sub(good_id, raw.decode(), count=1).encode())
        self.good_ids = {self.first_good_id + k for k in range(len(chosen))}
        good_titles = {p.title for p in chosen}
        self.seeds = [p for p in pages if p.title not in good_titles]
        baseline = self.call([])
        self.baseline = {
            table: self._good_rows(table, rows) for table, rows in baseline.items() if table != "meta"
        }
        self.baseline_problems = {self._problem(row) for row in baseline["quarantine"]}
        assert len(self.baseline["pages"]) == len(chosen) - 1  # the page outside namespace 0 is skipped

    def _good_rows(self, table: str, rows: list[dict]) -> list[dict]:
        key = "source_page_id" if table == "links" else "page_id"
        return [row for row in rows if row.get(key) in self.good_ids]

    @staticmethod
    def _problem(row: dict) -> tuple:
        return row["record_id"], row["error_type"], row["char_offset"], row["error"], row["excerpt"]

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        page = rng.choice(self.seeds)
        names: list[str] = []
        text = text_window(rng, page.text)
        roll = rng.random()
        if roll < 0.5:  # the wikitext is broken, the XML around it is sound
            text = mutate_bytes(rng, text.encode(), WIKITEXT_DIALECT, names).decode("utf-8", errors="replace")
        data = with_text(page, text)
        if roll >= 0.35:  # the XML itself is broken: cut tags, entities, CDATA, namespaces, bytes
            data = mutate_bytes(rng, data, XML_DIALECT, names)
        return FuzzInput(index, f"page {page.title!r}", names, data)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        order = _interleave(rng, items, self.good)
        body = bytearray(self.header)
        spans: list[tuple[tuple[str, int], int, int]] = []
        for kind, i in order:
            body += b"  "
            record = self.good[i] if kind == "good" else items[i].data
            spans.append(((kind, i), len(body), len(body) + len(record)))
            body += record + b"\n"
        body += b"</mediawiki>\n"
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            dump = Path(tmp) / "fuzz-enwiki.xml.bz2"
            dump.write_bytes(bz2.compress(bytes(body), 1))
            summary = self._ingest(dump, Path(tmp) / "out", self._options)
            tables = _read_tables({o.table: o.path for o in summary.outputs})
        tables["meta"] = {"spans": spans, "summary": summary}
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        spans, summary = result["meta"]["spans"], result["meta"]["summary"]
        rejected: set[int] = set()
        page_rejects = 0
        for row in result["quarantine"]:
            offset = row["byte_offset"]
            if offset is None or not row["error"]:
                report.add(Finding.of("violation", None, f"quarantined without its position: {row}"))
                continue
            slot = next((s for s, a, b in spans if a <= offset < b), None)
            wikitext = row["error_type"].startswith("Wikitext:")
            page_rejects += not wikitext
            if slot is None or slot[0] == "good":
                if not (wikitext and slot is not None and self._problem(row) in self.baseline_problems):
                    report.add(Finding.of("violation", None, f"quarantined outside a mutated page: {row}"))
            elif not wikitext:
                rejected.add(slot[1])
        for table, rows in self.baseline.items():
            got = self._good_rows(table, result[table])
            report.good_records_checked += len(rows)
            if table != "quarantine" and got != rows:
                missing = [r for r in rows if r not in got][:1]
                report.add(Finding.of("violation", None, f"good {table} rows changed: {missing}"))
        if summary.records_read != summary.records_written + summary.records_skipped + page_rejects:
            report.add(Finding.of("violation", None, f"pages unaccounted for: {summary}"))
        page_ids = {row["page_id"] for row in result["pages"]} - self.good_ids
        order = [slot for slot, _, _ in spans]
        before = dict(zip(order[1:], order[:-1], strict=True))
        for k, item in enumerate(items):
            if k in rejected:
                report.count("rejected")
                continue
            found_id = _FIRST_ID.search(item.data.decode("utf-8", errors="replace"))
            if found_id and int(found_id.group(1)) in page_ids:
                report.count("parsed")
                continue
            found_ns = _FIRST_NS.search(item.data)
            if found_ns and found_ns.group(1).strip() != b"0":
                report.skip("a page outside the kept namespaces")
                continue
            previous = before.get(("mut", k))
            if (
                previous
                and previous[0] == "mut"
                and previous[1] in rejected
                and self._unclosed(items[previous[1]])
                and b"<page>" not in item.data
            ):
                # It lost its <page>, the page before it its </page>: one page to the reader, quarantined.
                report.count("rejected")
                report.reasons["quarantined: merged into the page before it, which lost its </page>"] += 1
                continue
            if b"<page>" not in item.data and b"</page>" not in item.data:
                # Both tags gone: nothing marks these bytes as a page (a known gap, see the report).
                report.skip("no <page> nor </page> left: read as bytes between pages")
                continue
            report.add(Finding.of("violation", item, "page vanished: no row, no quarantine entry"))

    @staticmethod
    def _unclosed(item: FuzzInput) -> bool:
        """Whether the record's last <page> has no </page> after it (or it holds none at all)."""
        return item.data.rfind(b"</page>") < item.data.rfind(b"<page>") or b"</page>" not in item.data


# ---------------------------------------------------------------------------------------------------------
# 4. An OTT-QA table and a passage, through ingest_ottqa.


@dataclass
class Member:
    """A mutated member as it will sit in the document, and the keys a JSON parser reads from it alone."""

    item: FuzzInput
    file: str  # "tables" or "passages"
    keys: list[str] | None  # None: the member breaks the document

    @property
    def goes_last(self) -> bool:
        """A member that breaks the document, or repeats a key, gets the end of a file of its own."""
        return self.keys is None or len(set(self.keys)) != len(self.keys)


def member_keys(data: bytes) -> list[str] | None:
    """The keys ``data`` holds as members of an object, or None when it is not a well-formed member list."""
    pairs: list[list[tuple[str, Any]]] = []
    try:
        text = (b"{" + data + b"}").decode("utf-8", errors="surrogateescape")  # as the reader decodes
        json.loads(text, object_pairs_hook=lambda p: pairs.append(p) or dict(p))
    except (ValueError, RecursionError):
        return None
    keys = [key for key, _ in pairs[-1]] if pairs else []
    return keys or None


class OttqaBoundary(RecordBoundary):
    name = "ottqa"
    batch = 40
    good_count = 6

    def __init__(self, work: Path):
        super().__init__(work)
        from ingest.ottqa import OttqaIngestOptions, ingest_ottqa

        self._ingest = ingest_ottqa
        self._options = OttqaIngestOptions(max_error_rate=None)
        self._members: dict[int, Member] = {}
        with gzip.open(OTTQA / "tables.json.gz", "rb") as t, gzip.open(OTTQA / "passages.json.gz", "rb") as p:
            tables, passages = json.load(t), json.load(p)
        titles = sorted({table["title"] for table in tables.values()})
        good_titles = set(titles[:: len(titles) // self.good_count][: self.good_count])
        self.good_tables = {k: v for k, v in tables.items() if v["title"] in good_titles}
        self.table_seeds = [(k, v) for k, v in tables.items() if v["title"] not in good_titles]
        table_titles = {t.replace(" ", "_") for t in titles}
        free = [k for k in passages if k.removeprefix("/wiki/") not in table_titles]
        self.good_passages = {
            k: passages[k] for k in free[:: len(free) // self.good_count][: self.good_count]
        }
        self.passage_seeds = [(k, v) for k, v in passages.items() if k not in self.good_passages]
        self.good_titles = good_titles | {
            k.removeprefix("/wiki/").replace("_", " ") for k in self.good_passages
        }
        self.baseline = self._good_rows(self.call([]))
        assert all(self.baseline.values())

    def _good_rows(self, result: dict[str, Any]) -> dict[str, list]:
        return {
            "table_rows": [r for r in result["table_rows"] if r["table_id"] in self.good_tables],
            "links": [r for r in result["links"] if r["source_title"] in self.good_titles],
            "passages": [r for r in result["passages"] if r["page_title"] in self.good_titles],
            "pages": sorted(r["title"] for r in result["pages"] if r["title"] in self.good_titles),
        }

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        names: list[str] = []
        if rng.random() < 0.5:
            seed_key, value = rng.choice(self.table_seeds)
            key, seed_name = f"Fuzz{index}_{seed_key}", f"table {seed_key}"  # keeps the '_<n>' table index
        else:
            seed_key, value = rng.choice(self.passage_seeds)
            key, seed_name = f"/wiki/Fuzz{index}_{seed_key.removeprefix('/wiki/')}", f"passage {seed_key}"
        if rng.random() < 0.55:
            data = json.dumps(key).encode() + b": " + dump_json(rng, mutate_value(rng, value, names))
        else:
            data = mutate_bytes(rng, json.dumps({key: value})[1:-1].encode(), JSON_DIALECT, names)
        return FuzzInput(index, seed_name, names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        """Members that keep the document well formed share a file; one that breaks it goes last in one."""
        members = [
            Member(
                item, "tables" if item.seed_name.startswith("table ") else "passages", member_keys(item.data)
            )
            for item in items
        ]
        whole = [m for m in members if not m.goes_last]
        last = {f: [m for m in members if m.goes_last and m.file == f] for f in ("tables", "passages")}
        while whole or last["tables"] or last["passages"]:
            group = whole + [pending.pop() for pending in last.values() if pending]
            whole = []
            self._members = {m.item.index: m for m in group}
            self.run_group([m.item for m in group], report)

    def call(self, items: list[FuzzInput]) -> dict[str, Any]:
        members = [self._members[item.index] for item in items]
        rng = random.Random(f"layout:{items[0].index}" if items else "layout")
        docs: dict[str, dict[str, Any]] = {}
        for file, good in (("tables", self.good_tables), ("passages", self.good_passages)):
            good_members = [json.dumps({k: v})[1:-1].encode() for k, v in good.items()]
            mine = [m for m in members if m.file == file and not m.goes_last]
            order = _interleave(rng, mine, good_members)
            parts = [good_members[i] if kind == "good" else mine[i].item.data for kind, i in order]
            last = [m for m in members if m.file == file and m.goes_last]
            prefix = b"{" + b", ".join(parts) + (b", " if parts and last else b"")
            starts = {m.item.index: len(prefix.decode(errors="surrogateescape")) for m in last}
            docs[file] = {"body": prefix + b"".join(m.item.data for m in last) + b"}", "starts": starts}
        with tempfile.TemporaryDirectory(dir=self.work) as tmp:
            release = Path(tmp) / "release"
            release.mkdir()
            for file, doc in docs.items():
                (release / f"{file}.json.gz").write_bytes(gzip.compress(doc["body"], 1))
            summary = self._ingest(release, Path(tmp) / "out", self._options)
            tables = _read_tables({o.table: o.path for o in summary.outputs})
        tables["meta"] = {"docs": docs, "summary": summary}
        return tables

    def account(self, items: list[FuzzInput], result: dict[str, Any], report: BoundaryReport) -> None:
        docs, summary = result["meta"]["docs"], result["meta"]["summary"]
        quarantined_keys: set[str] = set()
        member_rejects = 0
        breaks: dict[str, dict] = {}
        for row in result["quarantine"]:
            if row["record_id"] in ("tables.json.gz", "passages.json.gz"):
                breaks[row["record_id"].split(".")[0]] = row
                if row["char_offset"] is None:
                    report.add(Finding.of("violation", None, f"document break without position: {row}"))
            elif row["record_id"]:
                quarantined_keys.add(row["record_id"])
                member_rejects += 1
            else:
                report.add(Finding.of("violation", None, f"quarantined without its key: {row}"))
        good_keys = set(self.good_tables) | set(self.good_passages)
        if quarantined_keys & good_keys:
            report.add(Finding.of("violation", None, f"good quarantined: {quarantined_keys & good_keys}"))
        got = self._good_rows(result)
        for table, rows in self.baseline.items():
            report.good_records_checked += len(rows)
            if got[table] != rows:
                missing = [r for r in rows if r not in got[table]][:1]
                report.add(Finding.of("violation", None, f"good OTT-QA {table} changed: {missing}"))
        if summary.records_written + member_rejects != summary.records_read:
            report.add(Finding.of("violation", None, f"members unaccounted for: {summary}"))
        for item in items:
            member = self._members[item.index]
            cut = breaks.get(member.file)
            if not member.goes_last or (member.keys is not None and cut is None):
                report.count("rejected" if set(member.keys or ()) & quarantined_keys else "parsed")
                continue
            start = docs[member.file]["starts"][item.index]
            if cut is not None and (cut["char_offset"] is None or cut["char_offset"] >= start - 2):
                report.count("rejected")
            else:
                report.add(Finding.of("violation", item, f"break not reported at its member: {cut}"))


# ---------------------------------------------------------------------------------------------------------
# 5. A question line of the batch job, through read_questions.

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
        order = _interleave(rng, items, self.good)
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


# ---------------------------------------------------------------------------------------------------------
# 6. An engine config file, through EngineConfig.load.


def to_toml(table: dict[str, Any], prefix: tuple[str, ...] = ()) -> str:
    """A TOML document for nested dicts of scalars and lists (the standard library only reads TOML)."""
    lines, subtables = [], []
    for key, value in table.items():
        if isinstance(value, dict):
            subtables.append((key, value))
        elif value is not None:  # TOML has no null: the key is left out
            lines.append(f"{json.dumps(key)} = {_toml_value(value)}")
    out = "".join(f"{line}\n" for line in lines)
    for key, value in subtables:
        name = ".".join(json.dumps(part) for part in (*prefix, key))
        out += f"\n[{name}]\n" + to_toml(value, (*prefix, key))
    return out


def _toml_value(value: Any) -> str:
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        return (
            "nan"
            if value != value
            else ("inf" if value > 0 else "-inf")
            if abs(value) == float("inf")
            else repr(value)
        )
    if isinstance(value, int):
        return str(value)
    if isinstance(value, str):
        return json.dumps(value) if value != NEST_MARK else "[" * 5_000 + "]" * 5_000
    if isinstance(value, list):
        return "[" + ", ".join(_toml_value(v) for v in value if v is not None) + "]"
    if isinstance(value, dict):
        return (
            "{"
            + ", ".join(f"{json.dumps(k)} = {_toml_value(v)}" for k, v in value.items() if v is not None)
            + "}"
        )
    raise TypeError(f"no TOML for {type(value).__name__}")


def _yaml_nest(text: str) -> str:
    return text.replace(NEST_MARK, "[" * 5_000 + "]" * 5_000)


class ConfigBoundary(Boundary):
    name = "config"
    batch = 100

    def __init__(self, work: Path):
        super().__init__(work)
        from query.config import EngineConfig

        self._config = EngineConfig
        defaults = EngineConfig().model_dump(mode="json")
        self.seeds: list[tuple[str, str]] = [(".toml", path.read_text()) for path in ENGINE_CONFIGS]
        for values in (
            defaults,
            {"engine": defaults},
            *(tomllib_loads(text) for _, text in list(self.seeds)),
        ):
            self.seeds += [(".toml", to_toml(values)), (".yaml", yaml.safe_dump(values, sort_keys=False))]
        self.good = self.seeds[:4]
        self.good_configs = [self._load(self.work / f"good-{i}{s}", t) for i, (s, t) in enumerate(self.good)]

    def _load(self, path: Path, text: str | bytes) -> Any:
        path.write_bytes(text.encode() if isinstance(text, str) else text)
        try:
            return self._config.load(path)
        finally:
            path.unlink()

    def generate(self, rng: random.Random, index: int) -> FuzzInput:
        suffix, text = rng.choice(self.seeds)
        names: list[str] = []
        if rng.random() < 0.4:
            value = mutate_value(
                rng, tomllib_loads(text) if suffix == ".toml" else yaml.safe_load(text), names
            )
            if suffix == ".toml" and isinstance(value, dict):
                data = to_toml(value).encode("utf-8", errors="surrogatepass")
            else:
                suffix = rng.choice((".yaml", ".yml"))
                data = _yaml_nest(yaml.safe_dump(value, allow_unicode=rng.random() < 0.5)).encode(
                    "utf-8", errors="surrogatepass"
                )
        else:
            data = mutate_bytes(rng, text.encode(), CONFIG_DIALECT, names)
        return FuzzInput(index, f"config{suffix}", names, data)

    def run_batch(self, items: list[FuzzInput], report: BoundaryReport) -> None:
        from pydantic import ValidationError

        for item in items:
            report.calls += 1
            path = self.work / f"fuzz-{item.index}{item.seed_name.removeprefix('config')}"
            try:
                with time_limit(INPUT_SECONDS):
                    self._load(path, item.data)
            except CallTimeout as exc:
                report.add(Finding.of("slow", item, last_line(exc)))
            except (ValueError, ValidationError) as exc:  # ValidationError is a ValueError: the named kind
                if str(path) not in str(exc):
                    report.add(Finding.of("violation", item, f"error without the path: {last_line(exc)}"))
                report.count("rejected")
            except Exception as exc:
                report.add(Finding.of("crash", item, last_line(exc)))
            else:
                report.count("parsed")
        for (suffix, text), want in zip(self.good, self.good_configs, strict=True):
            report.good_records_checked += 1
            try:
                same = self._load(self.work / f"good{suffix}", text) == want
            except Exception as exc:
                same = False
                report.add(Finding.of("violation", None, f"a good config no longer loads: {last_line(exc)}"))
            if not same:
                report.add(Finding.of("violation", None, "a good config loads differently"))


def tomllib_loads(text: str) -> dict[str, Any]:
    import tomllib

    return tomllib.loads(text)


# ---------------------------------------------------------------------------------------------------------
# The job: every boundary, a report in Markdown and JSON.

BOUNDARIES: dict[str, type[Boundary]] = {
    b.name: b
    for b in (
        WikidataBoundary,
        WikitextBoundary,
        XmlBoundary,
        OttqaBoundary,
        QuestionsBoundary,
        ConfigBoundary,
    )
}
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
    "- Replay any input: `python benchmarks/fuzz.py --replay NAME INDEX --seed SEED`.",
]


def fuzz(names: list[str], inputs: int, seed: int, work: Path, log: Callable[[str], None] = print) -> dict:
    reports = []
    for name in names:
        started = time.perf_counter()
        boundary = BOUNDARIES[name](work)
        setup = time.perf_counter() - started
        report = run_boundary(boundary, inputs, seed)
        reports.append(report)
        log(
            f"{name:10s} {report.inputs:6d} inputs {report.parsed:6d} parsed {report.rejected:6d} rejected "
            f"{report.skipped:5d} skipped  {report.crashes} crashes  {report.violations} violations  "
            f"{report.slow} slow  {report.seconds:7.1f} s (+{setup:.1f} s setup)"
        )
    return {"seed": seed, "inputs_per_boundary": inputs, "boundaries": [r.as_dict() for r in reports]}


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
        "`benchmarks/fuzz.py` for the mutations.",
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


def main(argv: list[str] | None = None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--inputs", type=int, default=10_000, help="generated inputs per boundary")
    parser.add_argument("--seed", type=int, default=1)
    parser.add_argument("--boundary", nargs="+", choices=list(BOUNDARIES), default=list(BOUNDARIES))
    parser.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results" / "fuzz")
    parser.add_argument("--replay", nargs=2, metavar=("NAME", "INDEX"), help="print one input and exit")
    args = parser.parse_args(argv)
    logging.basicConfig(level=logging.ERROR)  # readers warn about every bad record: that is the point here
    os.environ.setdefault("HQA_PROGRESS", "0")
    with tempfile.TemporaryDirectory(prefix="hqa-fuzz-") as tmp:
        if args.replay:
            name, index = args.replay[0], int(args.replay[1])
            item = BOUNDARIES[name](Path(tmp)).generate(input_rng(args.seed, name, index), index)
            how = ", ".join(item.mutations)
            print(f"# {name} input {index} (seed {args.seed}) from {item.seed_name} by {how}")
            sys.stdout.buffer.write(item.data + b"\n")
            return 0
        result = fuzz(args.boundary, args.inputs, args.seed, Path(tmp))
    from query.evaluation.machine import machine

    result = {"command": "python " + shlex.join(sys.argv), "machine": machine(), **result}
    write_report(result, args.out)
    failed = sum(b["crashes"] + b["violations"] for b in result["boundaries"])
    print(f"wrote {args.out / 'report.md'}; {failed} crashes and violations")
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
