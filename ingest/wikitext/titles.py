"""MediaWiki title normalization for link targets, so links from wikitext and OTT-QA URLs meet.

MediaWiki resolves ``[[albert_einstein#Early life]]`` and ``/wiki/Albert_Einstein`` to the same page;
the link tables must store that one resolved title or joins on titles silently miss. The rules here
are those of English Wikipedia (first-letter case, ``_`` as space, namespace aliases).
"""

from __future__ import annotations

import html
import re
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Literal
from urllib.parse import unquote

# Canonical English Wikipedia namespace names, keyed by lower case, with their aliases.
_NAMESPACES: dict[str, str] = {
    name.lower(): name
    for name in (
        "Talk",
        "User",
        "User talk",
        "Wikipedia",
        "Wikipedia talk",
        "File",
        "File talk",
        "MediaWiki",
        "MediaWiki talk",
        "Template",
        "Template talk",
        "Help",
        "Help talk",
        "Category",
        "Category talk",
        "Portal",
        "Portal talk",
        "Draft",
        "Draft talk",
        "TimedText",
        "TimedText talk",
        "Module",
        "Module talk",
        "Book",
        "Book talk",
        "Education Program",
        "Gadget",
        "Special",
        "Media",
    )
}
_NAMESPACES.update(
    {
        "image": "File",
        "image talk": "File talk",
        "wp": "Wikipedia",
        "wt": "Wikipedia talk",
        "project": "Wikipedia",
        "project talk": "Wikipedia talk",
        "cat": "Category",
        "t": "Template",
        "h": "Help",
        "p": "Portal",
        "mos": "Wikipedia",
    }
)

# Namespaces whose links embed or point at media rather than at an article.
_MEDIA_NAMESPACES = frozenset({"File", "Media"})

# Interwiki prefixes of English Wikipedia that point off-wiki: sister projects and common wikis.
_INTERWIKI_WORDS = """
    w wikipedia wikt wiktionary b wikibooks q wikiquote s wikisource n wikinews v wikiversity voy
    wikivoyage c commons m meta metawikimedia mw mediawikiwiki species wikispecies d wikidata
    foundation wmf wikimedia phab phabricator mediazilla bugzilla incubator outreach strategy
    testwiki ten usability quality otrs otrswiki mail mailarchive gerrit rev sulutil toollabs tools
    wikitech oldwikisource betawikiversity arxiv doi google googlegroups imdbname imdbtitle
    imdbcompany imdbcharacter isbn rfc wikia wikiamemory memoryalpha lyricwiki scholar
"""
_INTERWIKI = frozenset(_INTERWIKI_WORDS.split())

# Language editions (subdomains) that may appear as interlanguage or interwiki prefixes.
_LANGUAGES_WORDS = """
    aa ab ace ady af ak als alt am an ang ar arc ary arz as ast atj av avk awa ay az azb ba ban bar
    bat-smg bcl be be-tarask be-x-old bg bh bi bjn bm bn bo bpy br bs bug bxr ca cbk-zam cdo ce ceb
    ch cho chr chy ckb co cr crh cs csb cu cv cy da de din diq dsb dty dv dz ee el eml en eo es et
    eu ext fa ff fi fiu-vro fj fo fr frp frr fur fy ga gag gan gcr gd gl glk gn gom gor got gu gv
    ha hak haw he hi hif ho hr hsb ht hu hy hyw hz ia id ie ig ii ik ilo inh io is it iu ja jam jbo
    jv ka kaa kab kbd kbp kg ki kj kk kl km kn ko koi kr krc ks ksh ku kv kw ky la lad lb lbe lez
    lfn lg li lij lld lmo ln lo lrc lt ltg lv mad mai map-bms mdf mg mh mhr mi min mk ml mn mni mnw
    mo mr mrj ms mt mus mwl my myv mzn na nah nap nds nds-nl ne new ng nia nl nn no nov nqo nrm nso
    nv ny oc olo om or os pa pag pam pap pcd pdc pfl pi pih pl pms pnb pnt ps pt qu rm rmy rn ro
    roa-rup roa-tara ru rue rw sa sah sat sc scn sco sd se sg sh shi shn si simple sk skr sl sm smn
    sn so sq sr srn ss st stq su sv sw szl szy ta tay tcy te tet tg th ti tk tl tn to tpi tr trv ts
    tt tum tw ty tyv udm ug uk ur uz ve vec vep vi vls vo wa war wo wuu xal xh xmf yi yo yue za zea
    zh zh-classical zh-min-nan zh-yue zu
"""
_LANGUAGES = frozenset(_LANGUAGES_WORDS.split())

# Characters MediaWiki forbids in titles; a target holding one is not a page.
_ILLEGAL = re.compile(r"[\[\]{}|<>\x00-\x1f\x7f]")
_SPACES = re.compile(r"[\s_\u00a0\u1680\u180e\u2000-\u200b\u2028\u2029\u202f\u205f\u3000]+")
_DIRECTION_MARKS = re.compile(r"[\u200e\u200f\u202a-\u202e]")

LinkKind = Literal["article", "namespace", "category", "media", "language", "interwiki", "section", "invalid"]


@dataclass(frozen=True, slots=True)
class LinkTarget:
    """A link target as MediaWiki resolves it, with what kind of page it names.

    ``title`` carries the namespace prefix (``Category:Physics``); ``leading_colon`` tells a
    ``[[:Category:X]]`` link apart from a ``[[Category:X]]`` page categorization, and a
    ``[[:fr:Paris]]`` inline link apart from a ``[[fr:Paris]]`` interlanguage link. ``language``
    targets point at another language edition, ``interwiki`` ones at a sister project.
    """

    kind: LinkKind
    title: str
    fragment: str | None
    leading_colon: bool


def _upper_first(text: str) -> str:
    """Uppercase the first letter only, as MediaWiki does with $wgCapitalLinks."""
    if not text:
        return text
    first = text[0].upper()
    # 'ß'.upper() is 'SS'; MediaWiki keeps such letters as they are.
    return (first if len(first) == 1 else text[0]) + text[1:]


def _squash(text: str) -> str:
    # Fast path for the common case: exotic spaces and marks are all non-printable in Python's sense.
    if "_" not in text and "  " not in text and text.isprintable():
        return text.strip()
    return _SPACES.sub(" ", text).strip()


def classify_target(raw: str) -> LinkTarget:
    """Resolve one raw link target (what sits left of ``|`` in ``[[...]]``) to a typed title."""
    text = raw
    if "&" in text:
        text = html.unescape(text)
    if "%" in text:
        text = unquote(text)
    if not text.isprintable():
        text = _DIRECTION_MARKS.sub("", text)
    text = _squash(text)
    leading_colon = text.startswith(":")
    if leading_colon:
        text = text[1:].lstrip()
    title, hash_mark, fragment_raw = text.partition("#")
    title = title.strip()
    fragment = _squash(fragment_raw) or None if hash_mark else None
    if not title:
        return LinkTarget("section" if hash_mark else "invalid", "", fragment, leading_colon)
    if _ILLEGAL.search(title):
        return LinkTarget("invalid", title, fragment, leading_colon)
    prefix, colon, rest = title.partition(":")
    if colon:
        key = prefix.strip().lower()
        namespace = _NAMESPACES.get(key)
        if namespace is not None:
            name = _upper_first(rest.strip())
            if not name:
                return LinkTarget("invalid", title, fragment, leading_colon)
            full = f"{namespace}:{name}"
            if namespace == "Category":
                return LinkTarget("category", full, fragment, leading_colon)
            if namespace in _MEDIA_NAMESPACES:
                return LinkTarget("media", full, fragment, leading_colon)
            return LinkTarget("namespace", full, fragment, leading_colon)
        if key in _LANGUAGES:
            return LinkTarget("language", title, fragment, leading_colon)
        if key in _INTERWIKI:
            return LinkTarget("interwiki", title, fragment, leading_colon)
    return LinkTarget("article", _upper_first(title), fragment, leading_colon)


def normalize_title(raw: str) -> tuple[str, str | None] | None:
    """Normalize a link target to ``(title, fragment)``, or None when it names no wiki page.

    None covers pure ``#section`` links, interwiki and language links and File/Image/Media links.
    Other namespaces (``Category:``, ``Template:``…) come back with their canonical prefix; use
    :func:`is_category` to tell categories apart.
    """
    target = classify_target(raw)
    if target.kind in ("article", "namespace", "category"):
        return target.title, target.fragment
    return None


def is_category(title: str) -> bool:
    """True for a normalized title in the Category namespace."""
    return title.startswith("Category:")


def category_name(title: str) -> str:
    """Strip the ``Category:`` prefix from a normalized category title."""
    return title[len("Category:") :] if is_category(title) else title


_WIKI_URL_PREFIX = re.compile(r"^(?:https?:)?(?://[a-z0-9.-]*wikipedia\.org)?/wiki/", re.IGNORECASE)


# A '/wiki/' path of plain ASCII words joined by single '_' or ' ': none of the characters that make
# ``classify_target`` unescape, drop, split or reject anything ('%', '&', ':', '#', '?', brackets, controls).
_PLAIN_PATH = re.compile(r"[A-Za-z0-9!\"$'()*+,\-./;=@\\^`~ _]+")


def _plain_wiki_path(url: str) -> str | None:
    """The path of a plain '/wiki/' URL (see above), or None."""
    if not url.startswith("/wiki/"):
        return None
    path = url[6:]
    if not path or path[0] in " _" or path[-1] in " _" or _PLAIN_PATH.fullmatch(path) is None:
        return None
    if "__" in path or "  " in path or "_ " in path or " _" in path:
        return None
    return path


def wiki_url_to_title(url: str) -> str | None:
    """Turn an OTT-QA style ``/wiki/Eek!_The_Cat`` link into a normalized title (fragment dropped).

    Returns None for URLs that are not wiki page links or that name no article-like page. Most links
    are plain ASCII words: for them the full resolution reduces to '_' → ' ' and a capital first letter,
    done here directly (an OTT-QA release normalizes ~350k distinct URLs).
    """
    plain = _plain_wiki_path(url)
    if plain is not None:
        title = plain.replace("_", " ")
        return title[0].upper() + title[1:]
    return resolve_wiki_url(url)


_PLAIN_URL_PATTERN = r"^/wiki/W+(?:[ _]W+)*$".replace("W", r"[A-Za-z0-9!\"$'()*+,\-./;=@\\^`~]")


def wiki_url_titles(urls: Iterable[str]) -> dict[str, str | None]:
    """``wiki_url_to_title`` of many URLs at once: the plain ones by whole-column string steps (polars), the
    rest one by one. A release's ~180k distinct links cost a fraction of resolving them singly."""
    import polars as pl  # only the bulk path needs it

    distinct = pl.Series("url", list(set(urls)), dtype=pl.String)
    plain = distinct.str.contains(_PLAIN_URL_PATTERN)
    paths = distinct.filter(plain).str.slice(6).str.replace_all("_", " ", literal=True)
    titles = paths.str.slice(0, 1).str.to_uppercase() + paths.str.slice(1)
    out: dict[str, str | None] = dict(zip(distinct.filter(plain).to_list(), titles.to_list(), strict=True))
    for url in distinct.filter(~plain).to_list():
        out[url] = resolve_wiki_url(url)
    return out


def resolve_wiki_url(url: str) -> str | None:
    """``wiki_url_to_title`` through the full MediaWiki resolution, for every URL (the fast path's check)."""
    match = _WIKI_URL_PREFIX.match(url.strip())
    if match is None:
        return None
    path = url.strip()[match.end() :]
    path = path.split("?", 1)[0]
    normalized = normalize_title(path)
    return None if normalized is None else normalized[0]
