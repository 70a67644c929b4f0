"""Everyday words for what a question plan needs: the properties people ask about without naming them
("How many folks call Skien home?" asks P1082), the words that say which end of a comparison is wanted,
the class nouns of a superlative and the hop phrases of a chain.

These are English, not data: no entity id appears here (a place's id always comes from the index —
the alias index for a name, the demonym statements for "German"). Property ids do: they are the
vocabulary the statements are written in, as ``query.modes.kg_lookup`` names P36 or P17.
Every pattern is tried on the lower-cased question; the first that matches wins, so narrower
phrases come before broader ones ("sea level" before "high").
"""

from __future__ import annotations

import re
from dataclasses import dataclass

from query.lexicon import NUMBER_WORDS, TENS_WORDS, word_set

_POPULATION = (
    r"\bpopulat\w*|\bpeople\b|\binhabitants?\b|\bresidents?\b|\bhead ?count\b|\bfolks\b|\bpersons\b"
    r"|\bcall \w+ home\b|\bpopulous\b|\blive[sd]? (?:in|there)\b|\bliving in\b|\bhuman beings\b|\bdwell\w*"
    r"|\bhome to\b|\bnumbered\b|\bcensus\b"
)


@dataclass(frozen=True)
class PropertyWords:
    """A property and the everyday phrases that ask for it."""

    property: str
    pattern: re.Pattern[str]
    kind: str  # the plan's answer kind of a lookup: number, date, entity, text
    fallbacks: tuple[str, ...] = ()  # read when the subject has no statement of ``property``


def _words(prop: str, pattern: str, kind: str, *fallbacks: str) -> PropertyWords:
    return PropertyWords(prop, re.compile(pattern, re.I), kind, fallbacks)


PROPERTY_WORDS: tuple[PropertyWords, ...] = (
    # names and counts whose words would otherwise read as people, birth or a country's population
    _words("P1449", r"\bnick ?names?\b|\bmonikers?\b|\bsobriquets?\b", "text"),
    _words(
        "P1477",
        r"\bbirth name\b|\bname at birth\b|\bborn (?:under|with|as) (?:what|which|the)\b"
        r"[\w ]{0,12}\bname\b|\bfull name\b",
        "text",
    ),
    # a country's economy and its laws, by the words people use for them: before the GDP, the people
    # and the "highest"/"lower" of elevation that the same questions say ("the highest inflation")
    _words(
        "P2299",
        r"\b(?:ppp|purchasing[ -]power)\b[\w\-, ]{0,80}?\bper[ -](?:capita|head|person|inhabitant)\b"
        r"|\bper[ -](?:capita|head|person|inhabitant)\b[\w\-, ]{0,80}?\b(?:ppp|purchasing[ -]power)\b",
        "number",
    ),
    _words(
        "P4010",
        r"(?:\b(?:gdp|gross domestic product|economy)\b[\w ]{0,12}?)?"
        r"\b(?:ppp|purchasing[ -]power(?: parity)?)\b",
        "number",
    ),
    _words(
        "P2219",
        r"\bin real terms\b|\breal gdp\b(?:[\w ]{0,10}?\bgr[eo]w\w*)?|\breal (?:economic )?growth\b"
        r"|\bgdp growth\b"
        r"|\beconom(?:y|ies)\b[\w ]{0,20}?\b(?:grow|grew|growing|grown|expand\w*)\b(?: in real terms\b)?",
        "number",
    ),
    _words(
        "P1279",
        r"\binflation\b|\bconsumer prices?\b|\bcost of living\b"
        r"|\b(?:rise|rises|rising|increase)s? in prices\b"
        r"|\bprices?\b[\w ]{0,20}?\b(?:ris\w*|rose|climb\w*|go(?:ing|ne|es)? up|went up|increas\w*|"
        r"fall\w*|fell|grow\w*|grew|jump\w*|soar\w*)",
        "number",
    ),
    _words("P1198", r"\bunemploy\w*|\bjobless\w*|\bout of work\b|\bwithout (?:a )?jobs?\b", "number"),
    _words(
        "P3000",
        r"\bmarriageable\b"
        r"|\b(?:age|old|older|oldest|young\w*)\b[\w ]{0,30}?\b(?:marry|married|marriage|wed)\b"
        r"|\b(?:marry|marriage|wed)\b[\w ]{0,20}?\bage\b"
        r"|\b(?:marry|married|wed)\b[\w ]{0,20}?\b(?:young\w*|old\w*|earl\w*)\b",
        "number",
    ),
    _words(
        "P2997",
        r"\bage of majority\b"
        r"|\b(?:(?:legal(?:ly)?|become|becomes|became) (?:an? |legal )?)?adult(?:hood|s)?\b"
        r"(?: (?:legally )?(?:begins?|starts?))?"
        r"|\b(?:come|comes|came|coming) of age\b|\blegal age\b",
        "number",
    ),
    # where a gene lies on its sequence: its start and its end (the gene is a hop from its protein)
    _words(
        "P644", r"\bgene\b[\w ]{0,30}?\b(?:begin\w*|start\w*)|\bgenomic start\b|\bstart coordinate\b", "text"
    ),
    _words(
        "P645",
        r"\bgene\b[\w ]{0,30}?\b(?:end|ends|ending|stop\w*)\b|\bgenomic end\b|\bend coordinate\b",
        "text",
    ),
    _words(
        "P2927",
        r"\bunder ?water\b"
        r"|\b(?:percent|per cent|percentage|share|proportion|fraction)\b[\w' ]{0,40}?\bwater\b"
        r"|\bwater (?:area|share|percentage)\b|\b(?:covered|taken up) (?:by|with) water\b",
        "number",
    ),
    # schooling and working lives: the first and last compulsory school years, the retirement age
    _words(
        "P3271",
        r"\b(?:up to|until|till|stay\w*|leave\w*|leaving|longer|last)\b[\w ]{0,40}?"
        r"\b(?:school\w*|education)\b"
        r"|\b(?:school|schooling|education)\b[\w ]{0,30}?\b(?:ends?|stops?|leav\w*|longer)\b",
        "number",
    ),
    _words(
        "P3270",
        r"(?:\b(?:kids|children|pupils)\b[\w ]{0,20}?)?"
        r"\b(?:start\w*|begin\w*|attend\w*|enter\w*|go(?:es)? to|from what age)\b[\w ]{0,40}?\bschool\w*"
        r"|\bcompulsory (?:school|education)\w*|\bschool\w* (?:is )?compulsory\b",
        "number",
    ),
    _words(
        "P3001",
        r"\bretire\w*|\bretirement\b|\bpension(?:able)? age\b|\bstop working\b|\bstops working\b",
        "number",
    ),
    _words("P2855", r"\bvat\b|\bvalue[ -]added tax\b|\bsales tax\b", "number"),
    _words(
        "P1249",
        r"\b(?:oldest|earliest|first)\b[\w ]{0,20}?\b(?:mention\w*|record\w*|written|documented)\b"
        r"|\bon record\b|\bfirst (?:mentioned|recorded|documented)\b",
        "date",
    ),
    _words("P356", r"\bdoi\b|\bdigital object identifier\b", "text"),
    _words("P304", r"\b(?:which|what) pages\b|\bpage range\b|\bpage numbers\b", "text"),
    # a country's codes, courts, peoples and customs: words no property label says
    _words(
        "P2998",
        r"\brun for (?:office|parliament|election)\b|\bstand for (?:office|election|parliament)\b"
        r"|\bcandidacy\b|\bbe elected\b",
        "number",
    ),
    _words("P2258", r"\bmobile (?:country )?code\b|\bmcc\b", "text"),
    _words("P3067", r"\bgs1\b|\bbarcodes?\b", "text"),
    _words(
        "P3238",
        r"(?:\b(?:phon\w*|call\w*|dial\w*)\b[\w ,]{0,60}?)?\btrunk (?:prefix|code)\b(?: comes? first\b)?"
        r"|\b(?:domestic|national) (?:dialling|dialing) prefix\b",
        "text",
    ),
    _words("P2900", r"\bfax\b", "text"),
    # what a caller dials: from abroad, the country's code (P474); inside it, the place's area code (P473)
    _words(
        "P474",
        r"\b(?:dial\w*|call\w*|phon\w*|ring\w*)\b[\w ,]{0,40}?\bfrom (?:abroad|overseas|another country)\b"
        r"|\binternational (?:dialling|dialing|calling|phone|telephone) (?:code|prefix)\b|\bcalling code\b",
        "text",
    ),
    _words("P473", r"\barea codes?\b|\b(?:local )?(?:dialling|dialing) codes?\b", "text"),
    _words("P395", r"\b(?:licen[cs]e |number |registration |car )?plates?(?: code)?\b", "text"),
    _words(
        "P209", r"\bsupreme (?:court|judicial)\w*|\bhighest (?:court|judicial)\w*|\btop courts?\b", "entity"
    ),
    _words("P172", r"\bethnic\w*|\bethnicit\w*", "entity"),
    _words("P5658", r"\btrains?\b[\w\- ]{0,30}?\b(?:left|right)\b|\brail(?:way)? traffic\b", "entity"),
    _words("P1451", r"\bmotto\b|\bslogan\b", "text", "P1546"),
    _words("P2563", r"\bsuper ?powers?\b", "entity"),
    _words("P170", r"\bcreators?\b|\bcreated by\b", "entity"),
    _words("P5167", r"\b(?:motor )?vehicles\b|\bcars per\b|\bmotori[sz]ation\b", "number"),
    # how many a venue seats: before the visitors and the people of a place's population
    _words(
        "P1083",
        r"\b(?:seating )?capacity\b|\bhow many (?:fans|spectators|people|supporters|seats)? ?(?:can )?"
        r"(?:fit|be seated|sit)\b|\b(?:fans|spectators|supporters)\b[\w ]{0,20}?\b(?:fit|squeeze)\b",
        "number",
    ),
    _words("P1174", r"\bvisitors?\b|\bfootfall\b|\bvisits\b", "number"),
    _words("P1104", r"\bpages\b|\bpage count\b", "number"),
    # "GDP per head", "output per person", "produces the least per head of population": per capita, before
    # the economy's GDP (P2131) and the population the words also name
    _words(
        "P2132",
        r"(?:\b(?:gdp|output|income|economy|wealth|produces?)\b[\w ]{0,30}?)?"
        r"\bper[ -](?:capita|head|person|inhabitant|resident)\b(?: of (?:the )?population)?",
        "number",
    ),
    _words(
        "P2573",
        r"(?:\b(?:children|kids)\b[\w\- ]{0,30}?)?(?:\bout[ -]of[ -](?:primary[ -])?school\b"
        r"|\b(?:missing|missed|missing out on|not in|kept out of|absent)(?: from)?(?: the)? (?:primary[ -])?"
        r"(?:school|classroom)s?\b"
        r"|\b(?:primary[ -])?school[ -]age\b[\w\-'\u2019 ]{0,30}?(?:not|n[\u2019']t|\bun)[ -]?enrolled\b)",
        "number",
    ),
    _words("P1081", r"\bhdi\b|human development(?: index)?", "number"),
    _words(
        "P2134", r"\b(?:total )?reserves?\b", "number"
    ),  # "total reserves", "the most money held in reserve"
    _words(
        "P4841",
        r"fertility(?: rates?)?|births per woman|\bchildren (?:did a woman|per woman|on average)\b"
        r"|\bbabies per\b|\bwom[ae]n\b.*\b(?:children|kids|babies)\b"
        r"|(?:\baverage (?:number of )?)?\b(?:children|kids)\b.*\bwom[ae]n\b",
        "number",
    ),
    # a population of one sex: its own properties (a place's whole population does not answer it)
    _words("P1539", r"\b(?:women|females|girls|female population)\b", "number"),
    _words("P1540", r"\b(?:men|males|boys|male population)\b", "number"),
    _words("P1350", r"\bmatches\b|\bappearances\b|\bcaps\b|\bgames played\b", "number"),
    _words("P2131", r"\bgdp\b|gross domestic|\beconomy\b", "number"),
    _words("P3529", r"\bmedian\b(?: \w+)?(?: incomes?| earnings| wages?| salary)?|\bearns?\b", "number"),
    _words("P2124", r"\bhow many members\b|\bmember(?:ship)? count\b|\bnumber of members\b", "number"),
    _words("P433", r"\b(?:which|what) issue\b|\bissue (?:number|no\.?)\b", "text"),
    _words("P478", r"\b(?:which|what) volume\b|\bvolume (?:number|no\.?)\b", "text"),
    _words(
        "P577", r"\bpublished\b|\bappeared\b|\bpublication\b|\bcame out\b|\bcome out\b|\breleased\b", "date"
    ),
    _words("P281", r"\bpost(?:al)? ?codes?\b|\bzip\b|\bpostcodes?\b", "text"),
    # a website's start, before its "online": "did the English Wikipedia go online before 2005"
    _words("P571", r"\b(?:go|goes|went|gone|going|come|came) (?:online|live)\b", "date"),
    _words("P856", r"\bwebsite\b|\bweb site\b|\bhome ?page\b|\bon the web\b|\bonline\b", "text"),
    _words(
        "P1549",
        r"\bdemonym\b|call (?:the )?(?:people|someone|somebody|a person|residents?)\b"
        r"|\b(?:people|folks|someone|somebody|residents?|natives?|inhabitants?|locals)\b (?:from|of|in) "
        r"[\w .'\-]{1,40}? (?:are |is )?(?:called|known as|named)\b",
        "text",
    ),
    # "X is the seat of how many administrative units", "For how many areas is X the administrative
    # centre": the noun before "of how many" (or after the name) is the relation, what follows "how
    # many" only what is counted; before P150's "administrative units" and P36's "capital"
    _words(
        "P1376",
        r"\b(?:administrative )?(?:seat|cent(?:re|er)|capital) of how many\b"
        r"|\bhow many\b[\w ]{1,40}?\b(?:is|was)\b[\w\- .']{1,40}?"
        r"\bthe (?:administrative )?(?:seat|cent(?:re|er)|capital)\b",
        "entity",
    ),
    _words("P190", r"\btwin\w*|\bsister (?:cit|town)", "entity"),
    _words(
        "P530", r"\bdiplomatic\w*|\b(?:official|diplomatic|formal) (?:ties|relations)\b", "entity"
    ),  # "on diplomatic terms", "deals with diplomatically"
    # "bodies of water it lies on or next to": before the neighbours' "next to"
    _words("P206", r"\bbod(?:y|ies) of water\b|\bwaters\b", "entity"),
    _words(
        "P37", r"\bofficial languages?\b|\blanguages? (?:are|is) official\b|\bofficial status\b", "entity"
    ),
    _words("P38", r"\bcurrency\b|\bpay with\b|\bmoney\b", "entity"),
    _words(
        "P47",
        r"\bborder\w*|\bfrontiers?\b|\bboundar(?:y|ies)\b|\bneighbou?r\w*|\badjacent\b|\bnext to\b"
        r"|\btouch\w*|\bsurround\w*|\bringed\b",
        "entity",
    ),
    _words(
        "P150",
        r"\bmake up\b|\bdivided\b|\bsplit into\b|\bconsists? of\b|\bsubdivisions?\b|\bdistricts\b"
        r"|\bcounties\b|\bfederal states\b|\bemirates\b|\bprovinces\b|\bdivisions\b|\badministrative units\b"
        r"|\bboroughs\b|\bwards\b|\bcantons\b|\bdepartments\b|\bcarved (?:up|into)\b",
        "entity",
    ),
    _words("P569", r"\bborn\b|\bbirth\b|\bbirthday\b|\bcame into the world\b", "date"),
    _words(
        "P509",
        r"\bdie[ds]? (?:of|from)\b|\bcause of (?:his |her |their |its )?death\b|\bwhat killed\b"
        r"|\bdied because of\b",
        "entity",
    ),
    _words("P570", r"\bdie[ds]?\b|\bdeath\b|\bpass(?:ed|es)? away\b", "date"),
    # "How many people speak Maltese?": a language's speakers, not the population "people" names
    _words(
        "P1098", r"\bspeakers\b|\b(?:people|persons|folks|humans) (?:who )?speak\b|\bspoken by\b", "number"
    ),
    _words("P1082", _POPULATION, "number"),
    _words(
        "P2044",
        r"sea level|\babove (?:the )?sea\b|\baltitude\b|\belevation\b|\bhigh(?:er|est)?(?:-lying)?\b"
        r"|\blow(?:er|est)\b|\btall\w*"
        r"|\bmet(?:re|er)s (?:up|above)\b"
        r"|\bsits? (?:higher|lower)\b|\blies lower\b",
        "number",
        "P2048",  # a person's or a building's height: "how tall is the coach"
    ),
    _words(
        "P2046",
        r"\barea\b|\bsquare\b|\bkm2\b|\bkm²|\bsize\b|\bbig\w*|\blarge\w*|\bsmall\w*|\bland\b|\bground\b|\bspace\b|\bvast\w*"
        r"|\bterritory\b|\bcover\w*",
        "number",
    ),
    _words(
        "P571",
        r"\bfounded\b|\bfounding\b|\bgo(?:es)? back\b|\bdates? back\b|\bbeen around\b"
        r"|\bc[oa]me into (?:being|existence)\b|\bset up\b|\bexist\w*|\bestablished\b"
        r"|\bolde(?:r|st)\b|\belde(?:r|st)\b|\bearlie(?:r|st)\b|\byoung(?:er|est)\b|\bnew(?:er|est)\b"
        r"|\bmost recent(?:ly)?\b|\binception\b|\bcreated\b|\bindependen(?:t|ce)\b"
        r"|\bbec[oa]me (?:an? (?:[\w.]+ )?(?:state|country|nation)|independent)\b",
        "date",
        "P569",
    ),
    _words("P1619", r"\bopen(?:ed|ing)\b", "date", "P571"),  # "which opened first"
    _words("P36", r"\bcapital\b", "entity"),
    _words("P50", r"\bwr(?:ote|itten)\b|\bauthor(?:ed|s)?\b", "entity", "P2093"),
    _words("P27", r"\bcitizen\w*|\bnationality\b", "entity", "P17"),
    # "belongs to how many international organisations", "a NATO member": before the country's "belongs to"
    _words(
        "P463",
        r"\borgani[sz]ations\b|\bmembers? of\b|\bmember(?:ship)?\b|\balliances\b"
        r"|\binternational bod(?:y|ies)\b"
        r"|\b(?:belongs? to|part of) (?:the )?[\w ]{0,30}?\b(?:league|union|organi[sz]ation|alliance|bloc"
        r"|community|association|council|commonwealth)\b",
        "entity",
    ),
    _words(
        "P17",
        r"\bcountry\b(?! (?:calling )?codes?\b)|\bnation\b|\bsovereign state\b|\bwhich land\b"
        r"|\bwhat land\b|\bpart of\b|\bbelongs? to\b",
        "entity",
        "P131",
    ),
)
"""Everyday phrases, narrowest first; a count noun ("how many countries border") is not a property
phrase for P17 because count questions are read by ``COUNT_PROPERTIES`` first."""

PEOPLE_PLURAL = re.compile(r"(?:[A-Z][\w\-]* )*[A-Z][\w\-]*(?:ians|eans|ans|ese|is|iks|eks|aks|hs)")
"""How a people's name is written in the plural ("Malians", "Sierra Leoneans", "Chinese", "Israelis",
"Thais"): only a guess of the form; the country comes from a demonym statement (P1549) or nowhere."""

CHANGE_RATES = frozenset({"P1279", "P2219"})
"""Properties that are a rate of change (inflation, real growth): "were prices falling" asks below 0."""
FALLING = re.compile(r"\b(?:fall\w*|fell|drop\w*|declin\w*|shr[iu]nk\w*|contract\w*|deflation)\b", re.I)
RISING = re.compile(r"\b(?:ris\w*|rose|grow\w*|grew|climb\w*|increas\w*|expand\w*)\b", re.I)

WORSE_WHEN_HIGHER = frozenset({"P1198", "P1279", "P2573"})
"""Properties whose higher value is the worse one (unemployment, inflation, children out of school):
"the worst unemployment" is the highest."""
BETTER_WORSE = re.compile(r"\b(?:best|better|worst|worse)\b", re.I)

DATE_PROPERTIES = frozenset({"P571", "P569", "P570", "P576", "P1619", "P577", "P1249"})
PLACE_PROPERTIES = frozenset(
    {"P17", "P131", "P30", "P36", "P47", "P150", "P1376", "P276", "P19", "P20", "P27"}
)
"""Properties whose values are places: a yes/no question's word may be read as a place only for these."""

MAX_CUES = re.compile(
    r"\b(?:more|most|larger|largest|bigger|biggest|higher|highest|greater|greatest|taller|tallest|better|vaster|"
    r"heavier|longer|longest|populous|populated|higher up|wider|richer|richest|wealthier|wealthiest|"
    r"faster|fastest|quicker|quickest|steeper|steepest|more quickly|more rapidly|"
    r"tops? the (?:list|table|ranking)|comes? (?:out )?on top|best|"
    r"(?:does|do|did|scores?|ranks?|fares?|has|have|had) (?:the )?best)\b",
    re.I,
)
MIN_CUES = re.compile(
    r"\b(?:fewer|fewest|smaller|smallest|lower|lowest|less|least|shorter|shortest|"
    r"(?:clos|near)(?:er|est) to sea level|lies lower|"
    r"(?:does|do|did|scores?|ranks?|fares?|has|have|had) (?:the )?worst|worst|"
    r"poorer|poorest|weaker|weakest|worse|slower|slowest|more slowly|"
    r"lags?(?: furthest| farthest| most)? behind)\b",
    re.I,
)
_BACK_FURTHEST = r"(?:go(?:es)?|dates?|reach(?:es)?) back (?:the )?(?:furthest|farthest|longest)"
EARLY_CUES = re.compile(
    r"\b(?:older|oldest|elder|eldest|earlier|earliest|first|before|(?:been )?around (?:for )?longer|"
    rf"{_BACK_FURTHEST})\b",
    re.I,
)
LATE_CUES = re.compile(
    r"\b(?:younger|youngest|newer|newest|later|latest|last|after|most recent(?:ly)?)\b", re.I
)
SUPERLATIVE_CUES = re.compile(
    r"\b(?:most|largest|biggest|highest|greatest|tallest|smallest|fewest|lowest|least|oldest|eldest|youngest|"
    r"earliest|newest|most recent(?:ly)?|closest to sea level|highest-lying|first|best|worst|richest|"
    r"wealthiest|poorest|fastest|quickest|steepest|slowest|" + _BACK_FURTHEST + r"|"
    r"weakest|tops? the (?:list|table|ranking)|comes? (?:out )?on top|"
    r"lags? (?:furthest|farthest|most) behind)\b",
    re.I,
)

COUNT_START = re.compile(
    r"\bhow many\b|\bcount the\b|^\s*count\b|"
    r"(?<!average )(?<!fax )(?<!phone )(?<!telephone )(?<!serial )(?<!issue )(?<!page )(?<!volume )"
    r"\bnumber of (?!people|inhabitants|residents|births|children)",
    re.I,
)
"""A count, unless what follows "how many" is the population's noun ("how many people")."""
COUNTED = re.compile(
    r"\b(?:how many|(?<!average )(?<!fax )(?<!phone )number of|^\s*count) ([\w\-']+(?: [\w\-]+)?)", re.I
)
"""What a count question counts: the words after "how many" or "the number of" ("municipalities that")."""
NOT_COUNTED = re.compile(
    r"\bhow many (?:(?-i:[A-Z][a-z]+) )?(?:people|inhabitants|residents|folks|persons|human beings|children"
    r"|kids|square|metres|meters|km"
    r"|feet|lived|live|living|dwell\w*|resided|reside)\b"
    r"(?! (?:are|were|have been|is|was) (?:credited|listed|named|known|shown|involved|behind)\b)",
    re.I,
)

YES_NO_START = re.compile(
    r"^\s*(?:(?:in|by|as of|around|back in|at the end of|going by|according to|judging by|based on)"
    r"\s+[^,?]{1,40},\s*)?"
    r"(?:is|are|was|were|does|do|did|has|have|had|can)(?:n[\u2019']t)?\b",
    re.I,
)
"""A yes/no question opens with an auxiliary, maybe after a short time clause ("In 1970, did …")."""

_NUMBER_WORD = "|".join((*NUMBER_WORDS[1:], *TENS_WORDS))
_SPOKEN_AMOUNT = rf"(?:{_NUMBER_WORD})(?:(?:[ -]and)?[ -](?:{_NUMBER_WORD}|hundred)\b)*"
"""A number said in words, up to the hundreds ("two hundred and fifty"); a scale word follows apart."""
THRESHOLD = re.compile(
    r"\b(?P<cmp>more than|over|above|greater than|larger than|bigger than|higher than|taller than|"
    r"longer than|tops?|exceeds?|reach(?:es|ed)?|"
    r"at least|fewer than|less than|under|below|smaller than|lower than|shorter than|before|after|"
    r"earlier than|"
    r"later than)\s+(?:the year\s+|the\s+)?"
    r"(?P<num>half a|an?(?= (?:million|thousand|billion|trillion))|\d[\d,]*(?:\.\d+)?|"
    + _SPOKEN_AMOUNT
    + r")\s*"
    r"(?P<scale>million|thousand|billion|trillion)?[\s-]*"
    r"(?P<unit>square kilomet(?:re|er)s?|square met(?:re|er)s?|"
    r"km2|km²|sq km|kilomet(?:re|er)s?|km|met(?:re|er)s?|m|feet|ft)?\b",
    re.I,
)
SEA_LEVEL = re.compile(r"\b(below|under|above|over) sea level\b", re.I)
"""A yes/no question about lying below (or above) sea level: an elevation against 0."""
SCALES = {"thousand": 1e3, "million": 1e6, "billion": 1e9, "trillion": 1e12}
AT_LEAST = frozenset({"at least", "reach", "reaches", "reached"})
"""Comparators that hold at the threshold itself (">=")."""
OR_MORE = re.compile(
    r"(?P<num>\d[\d,]*(?:\.\d+)?|" + _SPOKEN_AMOUNT + r")\s*(?P<scale>million|thousand|billion|trillion)?"
    r"\s*(?:percent|per cent|%|"
    r"(?P<unit>square kilomet(?:re|er)s?|km2|km²|kilomet(?:re|er)s?|km|met(?:re|er)s?|m))?"
    r"\s+or (?P<dir>more|higher|above|greater|over|less|lower|fewer|below|under)\b",
    re.I,
)
"""A threshold said after its number ("twenty percent or more"): it holds at the number itself."""
ORGANISATION_WORDS = re.compile(
    r"\b(?:League|Union|Commonwealth|Organi[sz]ation|Alliance|Council|Community|Association|Bloc|Nations|"
    r"Treaty|Bank|Fund|Forum|Cooperation|Group)\b"
)
"""Words of an organisation's name: a country that belongs to one is its member (P463), not its part."""

ABOVE = frozenset({"more than", "over", "above", "greater than", "larger than", "bigger than", "higher than",
                   "longer than", "taller than", "at least", "after", "later than", "top", "tops", "exceed",
                   "exceeds", "reach", "reaches", "reached"})  # fmt: skip

NATIONALITY = re.compile(r"(?-i:[A-Z][a-z]+(?:an|ese|ish|i|ch))")
"""How a country's adjective is written ("Israeli", "Thai", "German", "Norwegian", "Chinese", "French"):
only a guess of the form."""

CHAIN_HOPS: tuple[tuple[re.Pattern[str], str], ...] = tuple(
    (re.compile(p, re.I), hop)
    for p, hop in (
        # "One scholarly article has Germany as its main subject": the one item about X, backwards
        (r"\b(?:has|have|had|with) (?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)) as (?:its|their) "
         r"(?:main )?(?:subject|topic|theme)\b", "^subject"),
        # "A video game made in Germany": the one work whose country of origin is X, backwards
        (r"\b(?:an?|one|the only) (?:[a-z\-]+ ){1,3}(?:made|produced|developed|created) in "
         r"(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))", "^origin"),
        (r"\b(?:with|has|having) (?P<e>.+?) (?:as|for) (?:its|their) capital\b", "^capital"),
        (r"^(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)) is (?:a|the) (?:national )?capital(?: city)?\.",
         "^capital"),
        # "The city Saarland is governed from": the capital, forwards
        (r"\bthe (?:city|town|place|seat) (?:that |which )?(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)) is "
         r"(?:governed|run|administered|ruled) from\b", "capital"),
        (r"\bthe (?:state|region|province|country|nation|land|territory|republic) (?:that is )?"
         r"(?:governed|run|administered|ruled) from (?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))", "^capital"),
        (r"\bwhose capital is (?P<e>.+?)(?=[?,.]|$| in \d)", "^capital"),
        (r"^(?P<e>.+?) is the capital of (?:which|what)\b", "^capital"),
        (r"\bthe capital(?: city)? of (?P<e>.+?)(?=[?,.]|$| in \d| founded| in square| by )", "capital"),
        (r"(?-i:(?P<e>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))(?:'s|\u2019s) capital\b", "capital"),
        # "the Chilean capital": a demonym's country's capital
        (r"\bthe (?-i:(?P<e>[A-Z][\w\-]*(?:an|ese|ish|i|ch))) capital\b", "capital"),
        (r"\bthe (?:home )?(?:country|nation|state)(?: that| which| where)? (?:(?-i:the [a-z]+) )?(?P<e>.+?) "
         r"(?:is in|is located in|lies in|belongs to|stands|stands in|is part of|comes from|is from|"
         r"is a citizen of|was a citizen of|was born in|rises|rises in|sits in|is situated in|"
         r"studies|is about|deals with|examines|concerns|covers|"
         r"holds citizenship of|has citizenship of|was made in|was produced in|was developed in|"
         r"is an? (?:town|city|village|municipality|commune|place|region|state|part) (?:of|in))\b",
         "country"),
        # "Jelle Cant is a citizen of a country - what's that country's …": the hop, then "that country"
        # "Paul Richter, the painter, was …", "Conchalí is a commune in some country", "X lies within a
        # country's borders", "The paper "…" is about (studies) a country",
        # "The Settlers (2019 video game) was made in a country"
        (r"(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*|\"[^\"]+\"))(?: \([^)]*\))?"
         r"(?:, (?:the|a|an) [\w\- ]{1,40},)? "
         r"(?:(?:is|was|holds?|held|has|had|lies|lay) (?:a )?"
         r"(?:citizen(?:ship)? of|lies in|belongs to|is in|located in|within|in|about|[a-z]+ (?:in|of))"
         r"|studies|concerns|covers|discusses|examines|deals with) "
         r"(?:a|some|one) (?:country|nation)\b(?:'s borders)?",
         "country"),
        # "X is in an administrative area whose …": the region it lies in
        (r"(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)) (?:is|lies|sits) (?:located )?in an? "
         r"(?:administrative (?:area|region|unit|division|entity)|region|province) "
         r"(?=whose|that|which|where)",
         "region"),
        # "Robur Siena's home city", "the city that was home to Robur Siena": where an organisation sits
        (r"(?-i:(?P<e>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))(?:'s|\u2019s) "
         r"(?:home (?:city|town)|headquarters)\b",
         "seat"),
        (r"\bthe (?:city|town) (?:that |which )?(?:was |is )?(?:home to|the home of|the seat of) "
         r"(?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))", "seat"),
        (r"(?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*)) was born in an? (?:town|city|village|place)\b",
         "birthplace"),
        (r"\bwhere (?P<e>.+?) (?:was|were|is|are) (?:made|produced|developed|manufactured|built)\b",
         "country"),
        (r"\bthe (?:home )?(?:country|nation) (?:where|in which) (?P<e>(?-i:[A-Z][\w\-]*(?: [A-Z][\w\-]*)*)) "
         r"(?:rises|lies|stands|sits|is|was|is located|is situated)\b", "country"),
        (r"(?-i:(?P<e>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))(?:'s|\u2019s) (?:home )?(?:country|nation|homeland)\b",
         "country"),
        (r"\bthe (?:home )?(?:country|nation) of (?:the [a-z]+ )?(?P<e>.+?)(?=[?,.]|$| have| has| in \d)",
         "country"),
        (r"\bthe (?:city|town|village|place|municipality) (?:where |in which )?"
         r"(?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*)) was born\b", "birthplace"),
        (r"\bthe (?:city|town|village|place|municipality) (?:that |which )?"
         r"(?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*)) was born in\b", "birthplace"),
        (r"\bthe (?:birthplace|place of birth|home ?town) of (?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*))",
         "birthplace"),
        (r"\bthe (?:city|town|village|place|municipality) (?:where |in which )?"
         r"(?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*)) died\b", "deathplace"),
        (r"\bthe (?:place of death|deathplace) of (?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*))",
         "deathplace"),
        (r"(?P<e>(?-i:[A-Z][\w\-.]*(?: [A-Z][\w\-.]*)*)) died in an? (?:town|city|village|place)\b",
         "deathplace"),
        (r"(?-i:(?P<e>[A-Z][\w\-]*(?: [A-Z][\w\-]*)*))(?:'s|\u2019s) (?:birthplace|home ?town)\b",
         "birthplace"),
    )
)  # fmt: skip
"""A chain's first hop, the entity it starts from (``e``) and the relation it follows; ``^`` follows
it backwards (the state whose capital is X)."""
HOP_PROPERTIES = {
    "capital": ("P36",),
    "^capital": ("^P36", "P1376"),
    # P495: the country a work was made in; P921: the country a paper is about
    "country": ("P17", "P27", "P131", "P495", "P921"),
    "birthplace": ("P19",),
    "deathplace": ("P20",),
    "region": ("P131",),
    "seat": ("P159", "P131"),
    "^subject": ("^P921",),
    "^origin": ("^P495",),
}

CLASS_SYNONYMS: dict[str, tuple[str, ...]] = {
    "city": ("city", "big city", "metropolis", "city with millions of inhabitants", "urban municipality"),
    "town": ("town", "city", "municipality", "commune", "comune"),
    "municipality": ("municipality", "comune", "commune"),
    "comune": ("comune",),
    "commune": ("commune",),
    # not "state" alone: "state of India", "federated state of Germany" are a country's parts
    "country": ("country", "sovereign state", "republic", "kingdom", "monarchy"),
    "economy": ("country", "sovereign state", "republic", "kingdom", "monarchy"),
    "nation": ("country", "sovereign state", "republic", "kingdom", "monarchy"),
    "state": ("state", "federated state", "constituent state"),
    "peak": ("mountain", "peak", "summit"),
    "mountain": ("mountain", "peak", "volcano"),
    "oblast": ("oblast",),
    "region": ("region", "administrative region"),
    "province": ("province",),
    "lake": ("lake",),
}
"""A class noun of a question → words of the class labels it covers (English: "town" is what people
call a commune or a comune)."""

CONTINENTS = {
    "european": "Europe", "europe": "Europe", "african": "Africa", "africa": "Africa", "asian": "Asia",
    "asia": "Asia", "south american": "South America", "south america": "South America",
    "north american": "North America", "north america": "North America", "oceanian": "Oceania",
    "oceania": "Oceania",
}  # fmt: skip
"""Continent adjectives → the continent's English name."""

PLACE_NAMES = {
    "french": "France", "dutch": "Netherlands", "swiss": "Switzerland", "british": "United Kingdom",
    "american": "United States", "us": "United States", "u.s": "United States", "usa": "United States",
    "english": "England", "spanish": "Spain", "greek": "Greece", "danish": "Denmark", "swedish": "Sweden",
    "finnish": "Finland", "polish": "Poland", "turkish": "Turkey", "irish": "Ireland",
}  # fmt: skip
"""Country adjectives that do not share their country's stem (English, not data)."""

GENERIC = word_set(
    "what which who whom whose when where how is are was were do does did has have had the a an of in on "
    "at to by for from with as and or than that this there their its it be been much many one"
)
