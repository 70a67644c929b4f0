"""How a copy of a sample item or page is renamed: new ids in a range no real dump uses, a copy word.

Every copy ``c`` of the samples gets one pronounceable word (``Bakoru``): item labels, aliases and
sitelink titles of entity block ``c`` and page titles and link targets of page copy ``c`` all end in
it, so the copy of a page links to the copies of its neighbours, and an item's enwiki sitelink names
the copy of its page. A word of letters (not a number) keeps names tokenizable as words, and distinct:
the last word of a name is its copy word, so two names are equal only when both halves are.

Ids start far above any id the sample references (Q56M at most; real Wikidata is at ~Q135M), so a
renamed item never collides with a dangling id that statements keep.
"""

from __future__ import annotations

ITEM_ID_BASE = 900_000_000
PAGE_ID_BASE = 100_000_000
REVISION_ID_BASE = 1_500_000_000

_CONSONANTS = "bdfgklmnprstvz"
_VOWELS = "aeiou"
_SYLLABLES = [c + v for c in _CONSONANTS for v in _VOWELS]
MIN_SYLLABLES = 3


def copy_word(copy: int) -> str:
    """The word naming copy ``copy``: its number in base 70 written as syllables, at least three.

    Numbers below 70³ get exactly three syllables, larger ones more, so no two copies share a word.
    """
    if copy < 0:
        raise ValueError(f"copy number {copy} is negative")
    digits = []
    n = copy
    while n or len(digits) < MIN_SYLLABLES:
        n, digit = divmod(n, len(_SYLLABLES))
        digits.append(_SYLLABLES[digit])
    return "".join(reversed(digits)).capitalize()


def item_number(index: int) -> int:
    """The numeric part of the Q-id of the corpus's ``index``-th entity."""
    return ITEM_ID_BASE + index


def page_id(index: int) -> int:
    return PAGE_ID_BASE + index


def revision_ids(index: int) -> tuple[int, int]:
    """(revision id, parent revision id) of the corpus's ``index``-th page: unique, parent below."""
    return REVISION_ID_BASE + 2 * index + 1, REVISION_ID_BASE + 2 * index
