"""Every English word list and date word the query engine reads questions, tables and evidence with.

The rules of ``understand``, ``tabulate``, ``read`` and ``rerank`` are rules over words; the words are
data, and here they sit side by side so a list is changed in one place and two lists that look alike
can be told apart. Lists with different content serve different purposes and keep different names
(each docstring says why it differs from its neighbours); a list that is part of another is derived
from it, not written again. Month names come from ``schemas.calendar``, shared with ingest and index.
"""

from __future__ import annotations

import re
from typing import Literal

from schemas.calendar import MONTH_NAMES, MONTH_NUMBERS
from schemas.query import AnswerType, TimeCue

Direction = Literal["max", "min"]


def word_set(text: str) -> frozenset[str]:
    """A word list written as one string, so it reads as prose rather than a column of quotes."""
    return frozenset(text.split())


# -- words no match rests on ------------------------------------------------------------------------

SEARCH_STOPWORDS = word_set(
    """a an the of in on at to for from by with and or but is are was were be been being has have had do
    does did what which who whom whose when where why how that this these those it its as into than then
    there their they he she his her him i you we our your not no yes if so such also can could would
    should will shall may might must about over under after before during since until between among per
    via many much more most some any each other all both either neither one ones name named called"""
)
"""Folded tokens that say nothing about a topic, dropped where question words are matched against
evidence, headers and cell values (``query.text.search_words``, the table rules, the candidate reader).
It differs from ``FUNCTION_WORDS``, written for relation phrases, both ways: it drops "name", "named",
"called", "ones", "since" and "yes" (a question asks for a name in any topic) and keeps the rarer
function words ("only", "once", "still", "me", "s"). Each stage was tuned on its own list, so they stay
two lists."""

FUNCTION_WORDS = word_set(
    """a about above after again against all also am among an and any are aren as at be because been before
    being below between both but by can could d did do does doing don down during each either else ever
    few for from further had has have having he her here hers herself him himself his how i if in into is
    isn it its itself just least less ll m many may me might more most much must my myself neither no nor
    not now o of off on once one only or other our ours ourselves out over own per re s same shall she
    should so some such t than that the their theirs them themselves then there these they this those
    through thus to too under until up upon us ve very via was we were what whatever when where whether
    which while who whom whose why will with within without would y yet you your yours yourself
    currently still ever often already"""
)
"""Never part of a relation phrase, a mention's first or last word, or a keyword
(``query.understand.tokens.content_words`` drops them). Longer than ``SEARCH_STOPWORDS``: a relation
phrase keeps its verb and nouns only, so reflexives, contraction pieces ("d", "ll", "ve") and adverbs
("currently", "still") go too; "name" and "called" stay, for "birth name" or "called after" is the
relation."""

MAXSIM_STOPWORDS = word_set(
    """a an the of in on at to for from by with as and or is are was were be been being am do does did has
    have had what which that this these those it its there their his her they he she whose whom into
    about"""
)
"""Whole-word model tokens late interaction leaves out of the question: their MaxSim matches any text
and flattens the ranking. Much shorter than ``FUNCTION_WORDS``: the wh-words that name the answer type
(who, when, where, how, many) and quantity words are kept on purpose, the model's vectors use them."""

# -- the wh-phrase and the shape of a question --------------------------------------------------------

WH_WORDS = word_set("who whom whose what which when where how why")
LEAD_WORDS = word_set("in by of for during upon on at from to with and so but as")
"""Words a question may start with before its wh-word ("In which year", "By whom")."""
COPULAS = word_set("is was are were s")
DO_WORDS = word_set("did does do has have had can could will would should may might")
TYPE_ADJECTIVES = word_set("other full main official current original primary kind type sort exact")
"""Words between a wh-word and its type noun that are not the type ("what *other* name")."""
HOW_NUMBER = word_set("many much old long tall far big large high often deep wide heavy")
""""how <word>" asks for a number."""

_PERSON = """person people player actor actress author writer coach manager director singer musician
    artist poet politician president ceo leader founder cyclist driver athlete footballer scientist king
    queen wife husband son daughter father mother spouse composer producer lyricist captain goalkeeper
    partner celebrity personality journalist architect painter inventor winner candidate chancellor
    minister mayor governor senator alumnus teacher professor pitcher quarterback rapper host presenter
    creator designer engineer chairman emperor man woman boy girl child brother sister rider boxer
    wrestler golfer swimmer runner skater dancer comedian novelist philosopher physicist chemist
    mathematician economist historian explorer monarch pope bishop prince princess duke general
    officer soldier pilot astronaut drummer guitarist vocalist bassist pianist conductor referee umpire
    jockey batsman bowler striker defender midfielder forward keeper lawyer judge doctor owner"""
_PLACE = """place city country state river stadium venue town village nation island valley mountain lake
    region province county location continent capital district airport ground arena park street
    building hometown birthplace department territory municipality neighborhood neighbourhood suburb
    sea ocean border peninsula desert forest station port harbor harbour bridge road highway circuit
    track field court hall church temple palace castle museum theatre theater hospital"""
_ORGANIZATION = """team club company band university party organization organisation school college
    network channel studio label firm agency league group institution ministry manufacturer developer
    publisher broadcaster airline franchise association federation sponsor newspaper corporation
    business brand employer army unit division squad orchestra choir government council committee"""
_NUMBER = """number population count amount percentage percent capacity area elevation height length
    size total attendance age distance weight duration rank ranking revenue budget margin width depth
    salary price cost income gdp density"""
_OTHER = """name nickname title genre position role style color colour meaning language nationality
    sport use motto slogan term word reason cause purpose"""
_ENTITY = """song film movie book album show series game award work event tournament competition
    championship prize product vehicle aircraft ship program programme single novel play character
    opera painting magazine entity thing"""
TYPE_NOUNS: dict[str, AnswerType] = {
    **{w: "entity" for w in _ENTITY.split()},
    **{w: "other" for w in _OTHER.split()},
    **{w: "number" for w in _NUMBER.split()},
    **{w: "organization" for w in _ORGANIZATION.split()},
    **{w: "place" for w in _PLACE.split()},
    **{w: "person" for w in _PERSON.split()},
    **dict.fromkeys(("year", "decade", "season"), "year"),
    **dict.fromkeys(("date", "day", "birthday", "month"), "date"),
}
"""Nouns naming what answers a question ("which *city*", "what is the *population*")."""

# -- names --------------------------------------------------------------------------------------------

NAME_PARTICLES = word_set("de del da di du la le van von der den al el bin ibn")
"""Lower-case words inside a person's or place's name a question writes ("Tour de France", "Ibn Saud");
a known n-gram may start with one."""
CONNECTORS = NAME_PARTICLES | {"of", "the", "for", "y"}
"""Lowercase words a capitalized name may contain: "University of Notre Dame", "Tour de France"."""
CELL_NAME_PARTICLES = word_set("de del della la le of da di do dos das du van von der den")
"""Lower-case words between the capitalised words of a name a question writes to match table cells
("Zamboanga del Norte", "Bank of America"). Not ``CONNECTORS``: the cells' names are Romance and
Germanic places and clubs, so "della", "dos", "das" are in; "the", "for" and "y" would join two names."""
NAME_ABBREVIATIONS = word_set("jr sr inc ltd co corp st mt dr bros jnr no")
"""A period after these ends an abbreviation inside a name ("Vaughn Jr. Smith"), not a sentence."""
DEMONYM_ENDINGS = ("ish", "ian", "ese", "ean", "ino")
DEMONYMS = word_set("dutch french czech greek thai swiss irish welsh scots")
"""Demonyms without a ``DEMONYM_ENDINGS`` ending: an adjective before a name, not a place."""
PLACE_DESCRIPTION_WORDS = word_set(
    """country city town village capital state province region county municipality island district
    commune continent territory monarchy republic nation kingdom borough neighbourhood neighborhood
    suburb archipelago peninsula department prefecture oblast canton settlement metropolis comune parish"""
)
"""A word of an entity's description that makes it a place (the intent's location)."""
NON_PLACE_WORDS = word_set(
    """cup series league championship championships university college school fc club games award prize
    tour season party company team festival olympics war battle band album film song"""
)
"""A short known name holding one of these is an event or a body, not a place ("in the FA Cup")."""

# -- time ---------------------------------------------------------------------------------------------

MONTH_ALTERNATION = "|".join(MONTH_NAMES)
"""Capitalised full month names as a regex alternation ("January|February|…"), for text as printed."""
MONTH_GROUP = r"(?P<month>" + "|".join(sorted(MONTH_NUMBERS, key=len, reverse=True)) + r")\.?"
"""A regex group ``month`` for any written month ("September", "Sept.", "sep"); match it ignoring case
and look the group up in ``MONTH_NUMBERS`` lower-cased, its period stripped."""
TIME_CUES: dict[str, TimeCue] = {
    "first": "first", "earliest": "first",
    "last": "last", "latest": "last", "recent": "last", "recently": "last",
    "before": "before", "prior": "before",
    "after": "after", "during": "during", "since": "since", "until": "until", "till": "until",
}  # fmt: skip
"""Words that restrict a question in time."""
CUE_BLOCKERS = {"first": frozenset({"name"}), "last": frozenset({"name"})}
"""A cue followed by these is no time: "first name", "last name"."""
RECENT_WORDS = word_set("recent recently")
""""most recent(ly)": the latest; alone, no cue."""
COUNT_NOUN_EXCEPTIONS = word_set("season census series class")
"""Words ending in -s that are no plural count after a year ("1995 season" is a year, "1500 songs" not)."""
INTERVAL_WORDS = word_set("since before after until till between from by")
"""A year after these is an interval's end ("since 1952"), not a point in time."""
RANGE_MARKS = ("-", "\u2013", "to")
"""Between two years: a range ("1988 - 2013", "1988 to 2013")."""

# -- superlatives, ordinals, counts over table rows -----------------------------------------------------

ORDINALS = {
    "first": 1, "second": 2, "third": 3, "fourth": 4, "fifth": 5, "sixth": 6, "seventh": 7,
    "eighth": 8, "ninth": 9, "tenth": 10, "1st": 1, "2nd": 2, "3rd": 3, "4th": 4, "5th": 5,
    "6th": 6, "7th": 7, "8th": 8, "9th": 9, "10th": 10,
}  # fmt: skip
MAX_WORDS = word_set("most highest largest biggest greatest best top maximum")
MIN_WORDS = word_set("least fewest lowest smallest minimum worst")
_BORN = ("age", "born", "birth", "founded", "established", "formed", "opened", "built", "year")
_WHEN = ("date", "year", "season", "released", "founded", "opened", "established", "time")
_LENGTH = ("length", "time", "duration", "years", "distance", "km", "runtime", "tenure")
IMPLIED: dict[str, tuple[tuple[str, ...], Direction, Direction]] = {
    # word: (words its column's header may hold, direction over amounts, over dates and years)
    "oldest": (_BORN, "max", "min"),
    "youngest": (_BORN, "min", "max"),
    "earliest": (_WHEN, "min", "min"),
    "latest": (_WHEN, "max", "max"),
    "newest": (_WHEN, "max", "max"),
    "longest": (_LENGTH, "max", "max"),
    "shortest": (_LENGTH, "min", "min"),
    "tallest": (("height", "ft", "m", "metres", "meters", "floors"), "max", "max"),
    "heaviest": (("weight", "kg", "lb", "mass"), "max", "max"),
    "fastest": (("time", "speed"), "min", "min"),
    "slowest": (("time", "speed"), "max", "max"),
}
"""Superlatives that name no quantity but imply one, found in a column's header."""
NOT_RANKING = frozenset({("best", "known"), ("most", "likely"), ("most", "often"), ("top", "of")})
"""A superlative word followed by this one ranks nothing ("best known")."""
MEASURE_STOP = word_set(
    "in of for at on with by from during among between who whom which that than as to and or since"
)
"""Words that end the phrase naming a ranked quantity ("the most goals *in* a season")."""
AUXILIARIES = word_set("is was are were did does do has have had be been being")
QUANTITY_NOUNS = word_set("number amount total count")
""""the highest number of goals": the goals are the quantity."""
TARGET_SKIP = ("with", "had", "has", "have", "whose", "that", "who", "the", "a", "an")
"""Words between an answer noun and a superlative ("the *driver* who had the most")."""
TIME_NOUNS = ("year", "time", "season", "week", "game", "day", "month")
"""After "the last": a time ("the last season"), not a place in the table's order."""
DETERMINERS = word_set("the a an this that these those its his her their")
VALUE_NOUNS = word_set("people live times time years miles kilometers km")
""""how many <these>" asks for a value stated about one thing, not a count of rows."""
PREPOSITIONS = word_set("in at on of for from to by within")
SET_ORDINALS = {w: ORDINALS[w] for w in ("second", "third", "fourth", "fifth", "2nd", "3rd", "4th", "5th")}
"""The places a question over an entity set may ask ("the second largest"); a subset of ``ORDINALS``."""
SET_MAX_WORDS = MAX_WORDS - {"best", "top", "maximum"}
SET_MIN_WORDS = MIN_WORDS - {"minimum", "worst"}
"""Superlatives of a quantity over an entity set: "best" and "worst" rank no quantity of an entity."""
ANY_CLASS = word_set("place entity item thing one location site")
"""Nouns that name no class: "the Chilean places" is every entity in Chile."""

# -- table headers and cells --------------------------------------------------------------------------

HEADER_ABBREVIATIONS = {
    "pts": "points", "pt": "points", "gp": "games", "apps": "appearances", "app": "appearances",
    "gls": "goals", "w": "wins", "l": "losses", "d": "draws", "t": "ties", "pos": "position",
    "no": "number", "pop": "population", "att": "attendance", "avg": "average", "pct": "percentage",
    "yds": "yards", "td": "touchdowns", "tds": "touchdowns", "ht": "height", "wt": "weight",
    "min": "minutes", "mins": "minutes", "sec": "seconds", "km2": "area", "sq": "area",
    "rk": "rank", "gf": "goals", "ga": "goals", "pld": "played", "mp": "matches", "g": "goals",
    "a": "assists", "reb": "rebounds", "ast": "assists", "yr": "year", "yrs": "years",
}  # fmt: skip
"""Sports and statistics abbreviations of table headers, spelled out."""
HEADER_SYNONYMS = {
    "team": ("club", "franchise", "side", "school"),
    "club": ("team",),
    "player": ("name", "athlete"),
    "athlete": ("name", "player"),
    "nation": ("country", "nationality", "team"),
    "country": ("nation", "nationality"),
    "person": ("name",),
    "city": ("location", "town"),
    "film": ("title", "movie"),
    "song": ("title", "single"),
    "album": ("title",),
    "celebrity": ("name", "contestant"),
    "wins": ("won", "win", "w"),
    "finishes": ("top",),
    "born": ("birth", "date of birth", "dob"),
}
"""A question's word -> header words that name the same column."""
PLACING_HEADER_WORDS = word_set("rank ranking seed seeding position place placing finish pick")
"""Header words of a column where 1 is the best: the best or top seed is the smallest number."""
BETTER: dict[str, Direction] = {"best": "min", "top": "min", "worst": "max"}
"""Cues that say better or worse, not larger or smaller: over a place column they rank the other way
round ("the best seed" is seed 1; "the lowest rank" keeps its literal, smallest-number reading)."""
TIME_HEADER_WORDS = word_set("year season date released release aired held edition")
"""Header words of a column a year can condition (singular: "Years" is "year")."""
EMPTY_CELLS = frozenset({"", "-", "\u2014", "\u2013", "n/a", "na", "none", "?", "tba", "tbd"})
"""A cell holding one of these (case-folded) holds no value."""

# -- numbers ----------------------------------------------------------------------------------------

SCALE_WORDS = {
    "thousand": 1e3, "k": 1e3, "million": 1e6, "mil": 1e6, "m": 1e6, "mn": 1e6,
    "billion": 1e9, "bn": 1e9, "b": 1e9, "trillion": 1e12,
}  # fmt: skip
"""Words and abbreviations after a figure that scale it ("$3.2 million", "5bn")."""
SET_SCALE_WORDS = {word: SCALE_WORDS[word] for word in ("thousand", "million", "billion")}
"""The scales a question over an entity set writes out ("more than 1.5 million inhabitants")."""
NUMBER_WORDS = (
    "zero", "one", "two", "three", "four", "five", "six", "seven", "eight", "nine", "ten",
    "eleven", "twelve", "thirteen", "fourteen", "fifteen", "sixteen", "seventeen", "eighteen", "nineteen",
    "twenty",
)  # fmt: skip
"""Numbers written as words; ``NUMBER_WORDS[n]`` is n."""
COUNT_WORDS = (*NUMBER_WORDS[2:], "once", "twice")
"""Words a prose answer counts with ("three", "twice"): "zero" and "one" say too little to be one."""
TENS_WORDS = ("twenty", "thirty", "forty", "fifty", "sixty", "seventy", "eighty", "ninety")
"""``TENS_WORDS[n - 2]`` is 10 n."""


def spoken_number(words: str) -> int | None:
    """The value of a number said in words up to 99 ("six", "nineteen", "sixty-five", "oh five"); None
    when a word of it is no number word."""
    total, said = 0, False
    for word in re.split(r"[- ]+", words.strip().lower()):
        if word in TENS_WORDS:
            total += 10 * (TENS_WORDS.index(word) + 2)
        elif word in NUMBER_WORDS:
            total += NUMBER_WORDS.index(word)
        elif word not in ("oh", "and"):
            return None
        said = True
    return total if said else None


def spoken_amount(words: str) -> int | None:
    """The value of an amount said in words with hundreds and thousands ("two hundred and fifty",
    "three thousand four hundred"); None when a word of it is no number word."""
    total = current = 0
    said = False
    for word in re.split(r"[- ]+", words.strip().lower()):
        if word == "hundred":
            current = (current or 1) * 100
        elif word == "thousand":
            total, current = total + (current or 1) * 1000, 0
        elif word in TENS_WORDS:
            current += 10 * (TENS_WORDS.index(word) + 2)
        elif word in NUMBER_WORDS:
            current += NUMBER_WORDS.index(word)
        elif word != "and":
            return None
        said = True
    return total + current if said else None


SPOKEN_NUMBER_WORDS = word_set(" ".join((*NUMBER_WORDS, *TENS_WORDS, "hundred", "thousand", "oh", "and")))
"""The words a year or a count is said in ("nineteen sixty-five", "two thousand and ten"): numbers, as
digits are, never a relation or a name."""
SPOKEN_YEAR_LEADS = word_set("in year of since by until till around circa during from to before after")
"""Words a year said as "two thousand …" follows ("in the year two thousand"); without one, "two thousand"
is an amount ("two thousand people")."""

# -- relation words and the properties they stand for ------------------------------------------------

IRREGULAR_STEMS = {
    "born": "born", "died": "die", "dies": "die", "wrote": "writ", "written": "writ", "married": "marry",
}  # fmt: skip
"""Verb forms the light stemmer cannot reach by rule."""
VERB_CUES: dict[str, tuple[str, ...]] = {
    "born": ("date of birth", "place of birth"),
    "birth": ("date of birth", "place of birth"),
    "died": ("date of death", "place of death", "cause of death"),
    "death": ("date of death", "place of death", "cause of death"),
    "direct": ("director",),
    "write": ("author", "screenwriter"),
    "written": ("author", "screenwriter"),
    "wrote": ("author", "screenwriter"),
    "found": ("inception", "founded by"),
    "establish": ("inception",),
    "create": ("creator", "inception"),
    "compose": ("composer",),
    "produce": ("producer",),
    "star": ("cast member",),
    "play": ("cast member", "member of sports team"),
    "marry": ("spouse",),
    "married": ("spouse",),
    "own": ("owned by",),
    "locate": ("location", "located in the administrative territorial entity"),
    "live": ("residence", "population"),
    "resident": ("population",),
    "inhabitant": ("population",),
    "capital": ("capital",),
    "population": ("population",),
    "coach": ("head coach",),
    "manage": ("manager",),
    "publish": ("publisher", "publication date"),
    "release": ("publication date",),
    "design": ("designer",),
    "build": ("inception", "architect"),
    "built": ("inception", "architect"),
    "open": ("date of official opening",),
    "win": ("winner", "award received"),
    "won": ("winner", "award received"),
    "award": ("award received",),
    "educate": ("educated at",),
    "study": ("educated at",),
    "graduate": ("educated at",),
    "attend": ("educated at",),
    "member": ("member of",),
    "sing": ("performer",),
    "sung": ("performer",),
    "perform": ("performer",),
    "nickname": ("nickname",),
    "height": ("height",),
    "tall": ("height",),
    "area": ("area",),
    "elevation": ("elevation above sea level",),
}
"""Question words -> labels of the properties they usually stand for (questions use verbs where
Wikidata has nouns: "directed" -> director, "died" -> date of death)."""
