"""The few inline templates whose visible text matters for QA, rendered without expanding them.

Every other template is dropped (citations, hatnotes, navboxes, pronunciations). The set is
kept small on purpose: dates, conversions, language wrappers, formatting wrappers and lists,
which together cover most of the text readers see in infoboxes and table cells.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

from mwparserfromhell.nodes import Template
from mwparserfromhell.wikicode import Wikicode

from ingest.wikitext.sink import Sink
from schemas.calendar import MONTH_NAMES

Render = Callable[[Wikicode, Sink], None]
Args = dict[str, Wikicode]
Handler = Callable[[Args, Render, Sink], None]

_COMMENTS = re.compile(r"<!--.*?(?:-->|$)", re.DOTALL)
_NAME_PREFIX = re.compile(r"^(?:template|subst|safesubst|msgnw)\s*:\s*", re.IGNORECASE)
_YES = frozenset({"y", "yes", "1", "true", "on"})
EN_DASH = "\u2013"
EM_DASH = "\u2014"
TIMES = "\u00d7"
# {{convert|3|to|4|km}}: the range word between two values and what the template prints for it.
_RANGE_WORDS = {"-": EN_DASH, EN_DASH: EN_DASH, "to": "to", "and": "and", "or": "or", "by": "by"}
_RANGE_WORDS.update({"x": TIMES, TIMES: TIMES, "+": "+", "to(-)": "to", "and(-)": "and", "&": "&"})
_RANGE_WORDS["+/-"] = "\u00b1"


@lru_cache(maxsize=16384)
def normalize_template_name(raw: str) -> str:
    """``' infobox_scientist <!-- x -->\\n'`` → ``'Infobox scientist'``: how names are compared."""
    if "<!--" in raw:
        raw = _COMMENTS.sub("", raw)
    name = " ".join(raw.replace("_", " ").split())
    name = _NAME_PREFIX.sub("", name)
    return name[:1].upper() + name[1:]


def template_args(node: Template) -> Args:
    """Parameters by name; positional ones are keyed "1", "2", … as MediaWiki numbers them."""
    args: Args = {}
    for param in node.params:
        name = str(param.name)
        args[name.strip() if param.showkey else name] = param.value
    return args


def _plain(value: Wikicode | None, render: Render) -> str:
    if value is None:
        return ""
    sink = Sink()
    render(value, sink)
    return " ".join(sink.text().split())


def _emit(args: Args, key: str, render: Render, sink: Sink) -> bool:
    value = args.get(key)
    if value is None:
        return False
    render(value, sink)
    return True


def _positional(args: Args) -> list[Wikicode]:
    values = []
    index = 1
    while (value := args.get(str(index))) is not None:
        values.append(value)
        index += 1
    return values


def _arg(key: str) -> Handler:
    def handler(args: Args, render: Render, sink: Sink) -> None:
        _emit(args, key, render, sink)

    return handler


def _literal(text: str) -> Handler:
    def handler(args: Args, render: Render, sink: Sink) -> None:
        sink.write(text)

    return handler


def _last(args: Args, render: Render, sink: Sink) -> None:
    values = _positional(args)
    if values:
        render(values[-1], sink)


def _second_or_first(args: Args, render: Render, sink: Sink) -> None:
    if not _emit(args, "2", render, sink):
        _emit(args, "1", render, sink)


def _items(args: Args, render: Render, sink: Sink) -> None:
    """List templates: one item per line, so infobox values can join them with ', '."""
    for value in _positional(args):
        sink.write("\n")
        render(value, sink)
    sink.write("\n")


def _block(args: Args, render: Render, sink: Sink) -> None:
    """``{{plainlist|* a\\n* b}}``: the list sits in the first argument as wikitext lines."""
    sink.write("\n")
    _emit(args, "1", render, sink)
    sink.write("\n")


def _words(args: Args, render: Render, sink: Sink) -> None:
    for index, value in enumerate(_positional(args)):
        if index:
            sink.write(" ")
        render(value, sink)


def format_date(year: str, month: str = "", day: str = "", *, day_first: bool = False) -> str:
    """``('1879', '3', '14')`` → ``'March 14, 1879'`` (or ``'14 March 1879'`` with day_first)."""
    year, month, day = year.strip(), month.strip(), day.strip()
    month_name = MONTH_NAMES[int(month) - 1] if month.isdigit() and 1 <= int(month) <= 12 else month
    day = day.lstrip("0") if day.isdigit() else day
    if month_name and day:
        return f"{day} {month_name} {year}" if day_first else f"{month_name} {day}, {year}"
    if month_name:
        return f"{month_name} {year}"
    return year


def _date(args: Args, render: Render, sink: Sink) -> None:
    parts = [_plain(args.get(str(index)), render) for index in (1, 2, 3)]
    if not parts[0]:
        return
    flag = _plain(args.get("df"), render).lower()
    sink.write(format_date(*parts, day_first=flag in _YES))


def _convert(args: Args, render: Render, sink: Sink) -> None:
    """``{{convert|5|km}}`` → ``5 km``; ``{{convert|5|to|10|km}}`` → ``5 to 10 km``."""
    values = [_plain(value, render) for value in _positional(args)]
    if not values:
        return
    words = [values[0]]
    rest = values[1:]
    if len(rest) >= 2 and rest[0] in _RANGE_WORDS:
        words += [_RANGE_WORDS[rest[0]], rest[1]]
        rest = rest[2:]
    if rest:
        words.append(rest[0])
    text = " ".join(words)
    sink.write(text.replace(f" {EN_DASH} ", EN_DASH))


def _frac(args: Args, render: Render, sink: Sink) -> None:
    values = [_plain(value, render) for value in _positional(args)]
    if len(values) == 3:
        sink.write(f"{values[0]} {values[1]}/{values[2]}")
    elif len(values) == 2:
        sink.write(f"{values[0]}/{values[1]}")
    elif values:
        sink.write(f"1/{values[0]}")


def _as_of(args: Args, render: Render, sink: Sink) -> None:
    parts = [_plain(args.get(str(index)), render) for index in (1, 2, 3)]
    if parts[0]:
        sink.write("As of " + format_date(*parts))


def _circa(args: Args, render: Render, sink: Sink) -> None:
    sink.write("c. ")
    _emit(args, "1", render, sink)


def _text_or(default: str) -> Handler:
    """Table-cell templates (``{{yes}}``, ``{{n/a|}}``): their own text, or the given argument."""

    def handler(args: Args, render: Render, sink: Sink) -> None:
        if not _emit(args, "1", render, sink):
            sink.write(default)

    return handler


def _font(args: Args, render: Render, sink: Sink) -> None:
    if not _emit(args, "text", render, sink):
        _emit(args, "1", render, sink)


_HANDLERS: dict[str, Handler] = {
    "convert": _convert,
    "cvt": _convert,
    "frac": _frac,
    "sfrac": _frac,
    "as of": _as_of,
    "circa": _circa,
    "c.": _circa,
    "font": _font,
    "sort": _second_or_first,
    "transl": _last,
    "resize": _last,
    "lang": _arg("2"),
    "langx": _arg("2"),
    "color": _arg("2"),
    "colour": _arg("2"),
    "linktext": _words,
    "'": _literal("'"),
    "'s": _literal("'s"),
    "snd": _literal(f" {EN_DASH} "),
    "spaced ndash": _literal(f" {EN_DASH} "),
    "spnd": _literal(f" {EN_DASH} "),
    "ndash": _literal(EN_DASH),
    "mdash": _literal(EM_DASH),
    "nbsp": _literal(" "),
    "•": _literal(" • "),
    "dot": _literal(" • "),
    "·": _literal(" · "),
    "middot": _literal(" · "),
    "!": _literal("|"),
    "=": _literal("="),
    "okina": _literal("\u02bb"),
    "br": _literal("\n"),
    "n/a": _text_or("N/A"),
    "na": _text_or("N/A"),
    "yes": _text_or("Yes"),
    "no": _text_or("No"),
    "partial": _text_or("Partial"),
    "dunno": _text_or("?"),
    "tba": _text_or("TBA"),
    "won": _text_or("Won"),
    "nom": _text_or("Nominated"),
    "cmain": _text_or("Main"),
    "crecurring": _text_or("Recurring"),
    "cguest": _text_or("Guest"),
}
for _name in (
    "birth date",
    "birth date and age",
    "death date",
    "death date and age",
    "start date",
    "start date and age",
    "end date",
    "end date and age",
    "film date",
    "dts",
):
    _HANDLERS[_name] = _date
for _name in (
    "nowrap",
    "nobr",
    "small",
    "smaller",
    "big",
    "bigger",
    "large",
    "larger",
    "huge",
    "midsize",
    "nobold",
    "noitalic",
    "sc",
    "smallcaps",
    "small caps",
    "abbr",
    "tooltip",
    "visible anchor",
    "vanchor",
    "em",
    "strong",
    "var",
    "mvar",
    "nihongo",
    "not a typo",
    "proper name",
    "sic",
    "flag",
    "flagcountry",
    "flag country",
    "flagu",
    "center",
    "nts",
    "ill",
    "interlanguage link",
    "interlanguage link multi",
    "highlight",
    "marriage",
    "iast",
    "unicode",
    "date",
    "birth year and age",
    "death year and age",
    "keypress",
    "angle bracket",
    "lower",
    "small-caps",
    "plain",
    "ipa",
):
    _HANDLERS[_name] = _arg("1")
for _name in ("plainlist", "plain list", "flatlist", "startplainlist", "indented plainlist"):
    _HANDLERS[_name] = _block
for _name in (
    "ubl",
    "unbulleted list",
    "bulleted list",
    "blist",
    "bull",
    "ordered list",
    "hlist",
    "collapsible list",
    "ublist",
    "plainlist/items",
):
    _HANDLERS[_name] = _items


def inline_handler(lower_name: str) -> Handler | None:
    """The handler for a template whose visible text is kept, or None to drop the template."""
    handler = _HANDLERS.get(lower_name)
    if handler is None and lower_name.startswith("lang-"):
        return _HANDLERS["nowrap"]
    return handler
