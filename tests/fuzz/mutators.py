"""Mutators: each takes an input's random generator and its bytes (or parsed value) and returns a new one.

Byte mutators know a boundary only through its ``Dialect`` (its own tokens and structure cuts); the
structured mutation swaps one value of a parsed JSON/YAML record for another type or shape. Only the
standard library generates inputs: no fuzzing package is needed.
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Callable
from dataclasses import dataclass
from typing import Any


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
