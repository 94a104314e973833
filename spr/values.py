"""What a sentence states: a value of the kind a question asks for (a date, a duration, an amount
of money, a share, a count), told apart from the numbers that state nothing — references to
articles and acts, Official Journal citations, an act's dated footnotes, page numbers, list
numbering. Pure functions over strings; :mod:`spr.answerable` asks them.
"""

from __future__ import annotations

import re
from typing import Literal

from spr.references import MONTH, without_references
from spr.verify import numbers

ValueKind = Literal["duration", "money", "percent", "time", "number"]
QUANTITIES: frozenset[ValueKind] = frozenset({"money", "percent", "number"})  # amounts of something

_NUMBER_WORD = (
    r"(?:one|two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|"
    r"sixty|seventy|eighty|ninety|hundred|thousand|million|billion|half|third|quarter|dozen|a|an|single|several)"
)
_QUANTITY = rf"(?:\d+(?:[ \u00a0\u202f.,]\d+)*|{_NUMBER_WORD}(?:[ -]{_NUMBER_WORD})*)"
_YEAR = re.compile(r"\b(?:1[89]|20)\d\d(?:s)?\b")
# A length of time, or a word that states one: lower-case text (spr.durations reads its kind).
DURATION = re.compile(
    rf"\b{_QUANTITY}[ -]?(?:calendar |working |business )?(?:hours?|days?|weeks?|months?|years?|minutes?|decades?)\b"
    r"|\b(?:without undue delay|immediately|annually|yearly|monthly|weekly|daily|hourly|biennially|once a)\b"
)
_SHARE_TEXT = r"\d\s?(?:%|per ?cent\b|percent\b)"  # "4 %", "10 per cent"
_STATES: dict[ValueKind, re.Pattern[str]] = {
    "duration": DURATION,
    "money": re.compile(
        rf"(?:€|\$|£)\s?\d|\b\d[\d ,.\u00a0\u202f]*\s?(?:€|eur|euros?|usd|gbp|chf|sek|dkk|pln|czk|huf|ron|bgn|cents?|ct)\b"
        rf"|\b(?:eur|euros?|usd|gbp|chf|sek|dkk|pln|czk|huf|ron|bgn)\s?{_QUANTITY}\b"
        rf"|{_SHARE_TEXT}"
    ),
    "percent": re.compile(
        r"\d\s?(?:%|per ?cent\b|percent\b|percentage points?\b)|\b(?:half|one[ -]third|two[ -]thirds|"
        r"(?:one|three)[ -]quarters?|a (?:third|quarter|fifth|tenth))\b"
    ),
    "time": re.compile(
        rf"\b(?:1\d|20)\d\d(?:s)?\b|\b\d{{3}}0s\b|\b\d{{1,2}}(?:st|nd|rd|th)? {MONTH}\b|\b{MONTH} \d{{1,2}}\b"
        rf"|\b\d{{1,2}}(?:st|th|nd|rd) century\b"  # also historical years: "1066", "the 1050s"
        rf"|\b{_QUANTITY}[ -](?:hours?|days?|weeks?|months?|years?)\b"
    ),
}
_DIGITS = re.compile(r"\d")
_FURNITURE = re.compile(r"\|\s*\d{1,4}\s*$")  # "… plan for the period 2021-2030 | 45"
_WORDS = re.compile(r"[^\W\d_]{2,}")
MIN_WORDS = 4  # fewer words than this ("2.2.", "Article 5") is a heading or a fragment
_ORDINAL = re.compile(r"\b\d+(?:st|nd|rd|th)\b")
_UNIT = r"(?:[kMGTP]?W[hp]?(?:e|el|th)?|[kMG]?toe|[kMG]?t(?:CO2\w*)?|Mt\w*|kt\w*|[PTG]J|bcm|m3|m²|km|ha|EUR|€)"
_AMOUNT = r"(\d+(?:[ \u00a0\u202f.,]\d{3})*(?:[.,]\d+)?)\s?(?:(?:million|thousand|billion|mio\.?|bn)\s)?"
# A count is a number with the noun it counts ("20 stations"): not a number of money ("EUR 300
# million from …", "300 euros") or one followed by a function word ("2025 and 2029").
# Nor a share: "how many jobs" is not answered by "falls by 12 percentage points".
_NOT_COUNTED = r"(?:from|to|in|of|by|and|or|for|per|between|the|a|an|at|on|with|than|is|are|was|were|euros?|eur|cents?|percent\w*)\b"
_ASKS_SHARE = re.compile(r"percent|per cent|%")
_PER_UNIT = re.compile(r"\bper (?!cent\b)[a-z]")  # "how much … per kilogram" asks a price per unit
_SHARE = re.compile(_SHARE_TEXT)
_COUNTED = re.compile(rf"(?<![\w.,€$£])(?<!EUR )(?<!€ ){_AMOUNT}(?!{_NOT_COUNTED})[a-z][a-z-]+\b")
_COUNTED_UNITS = re.compile(rf"(?<![\w.,€$£])(?<!EUR )(?<!€ ){_AMOUNT}(?!{_NOT_COUNTED})(?:[a-z][a-z-]+|{_UNIT})\b")
# "How many gigawatts …" counts in a unit; "how many plants" is not answered by "2 GW".
_ASKS_UNIT = re.compile(r"watt|tonnes?\b|\btons?\b|joule|metres?\b|meters?\b|hectares?|litres?|barrels?|cubic|\btoe\b")
_MEASURED = re.compile(  # an amount of something: "5 GW", "70 %", "600 000 points"; not "77 to establish" (a note's number)
    rf"(?<![\w.,]){_AMOUNT}(?:(?:(?!{_NOT_COUNTED})[a-z][a-z-]+|{_UNIT})\b|%|per ?cent\b|percent\w*)"
    rf"|\b(?:than|at least|at most|up to|exceeding|above|below)\s+{_AMOUNT}"  # "greater than 10^25"
)
# Counts in words; not "one" or "third", which legal text uses for other things ("one or more",
# "third countries"), nor "million", which scales a figure (counted above when it counts).
_COUNT_WORD = re.compile(
    r"\b(?:two|three|four|five|six|seven|eight|nine|ten|eleven|twelve|fifteen|twenty|thirty|forty|fifty|dozen)\b"
)


def states_value(kind: ValueKind, sentence: str, question: str = "") -> bool:
    """Whether ``sentence`` states a value of ``kind`` that ``question`` does not already state
    (a "2030" in "… by 2030?" answers nothing). References (articles, act numbers) never count.

    >>> states_value("duration", "It shall notify without undue delay and within 72 hours.")
    True
    >>> states_value("money", "Fines of up to EUR 20 000 000 or 4 % of turnover apply.")
    True
    >>> states_value("number", "Article 68 sets out the scientific panel (Regulation (EU) 2019/1020).")
    False
    >>> states_value("time", "Member States shall apply the measures from 2030.", "What applies in 2030?")
    False
    >>> falls = "The import dependency falls by 12 percentage points by 2030."  # a share counts no jobs
    >>> states_value("number", falls, "How many jobs will the plan create?"), states_value("number", falls, "By how many percentage points?")
    (False, True)
    >>> states_value("number", "All citizens of Croatia, 77 to establish a monitoring system.", "How much hydrogen?")  # a note's number
    False
    >>> states_value("money", "Recycling targets: plastic 50% 55%.", "How much is paid per kilogram?"), states_value("money", "Fines of 4 % of turnover.")
    (False, True)
    """
    if _FURNITURE.search(sentence) or len(_WORDS.findall(sentence)) < MIN_WORDS:
        return False  # a running header, a page number, a heading: no statement
    plain = without_references(sentence).lower()
    if kind == "duration" and re.search(r"\bhow many years\b", question.lower()) and states_value("time", sentence, question):
        return True  # "by how many years?" is answered by the years of two events as well
    if kind == "number":
        # An amount is a number of something: "10 stations", "5 GW", "600 000 charging points"
        # ("how much" also "70 %"); a bare number in extracted text is mostly a page or a note.
        cased = _ORDINAL.sub(" ", without_references(sentence))
        asked = question.lower()
        counts = re.search(r"\bhow many\b", asked) and not _ASKS_SHARE.search(asked)  # "by how many percentage points" asks a share
        counted = (_COUNTED_UNITS if _ASKS_UNIT.search(asked) else _COUNTED) if counts else _MEASURED
        values = {v for m in counted.finditer(cased) for v in numbers(m.group(1) or m.group(2) or "")} - numbers(question)
        if {v for v in values if not _YEAR.fullmatch(v)}:  # a year answers "when", not "how many"
            return True
        return _COUNT_WORD.search(plain) is not None
    pattern = _STATES[kind]
    known_numbers = numbers(question)
    per_unit = kind == "money" and _PER_UNIT.search(question.lower()) is not None
    for match in pattern.finditer(plain):
        found = match.group(0)
        if _DIGITS.search(found) and numbers(found) and numbers(found) <= known_numbers:
            continue  # restates the question's own figure
        if per_unit and _SHARE.fullmatch(found):
            continue  # a price per kilogram is no share
        return True
    return False


# --- units a question asks in ----------------------------------------------------------------------
# "How many gigawatts of offshore wind …?" is answered in gigawatts or megawatts, not by a share
# or a count of turbines; "How much … capacity …?" by an amount of power (or of energy, for
# storage). A unit is one of its dimension: its symbol or its name, any SI prefix.
_SCALE = r"(?:\s?(?:million|thousand|billion|mio\.?|bn))?"
_DIMENSION_UNITS: dict[str, str] = {  # symbols as written (MW is not mW), names in any case, also German
    "power": r"(?:[kMGT]W(?:e|el|p|th)?|(?i:(?:kilo|mega|giga|tera)?watts?)(?!\s?-?\s?(?i:hours?|stunden?)))\b",
    "energy": r"(?:[kMGT]Wh(?:e|el|th)?|[kMG]?toe|[PTGM]J|(?i:(?:kilo|mega|giga|tera)?watt\s?-?\s?(?:hours?|stunden?)|(?:peta|tera|giga|mega)?joules?))\b",
    "mass": r"(?:(?:k|M|G)?t(?:CO2\w*)?|(?i:(?:kilo|mega)?tonnes?|tons?|tonnen))\b",
    "area": r"(?:ha|(?i:hectares?|hektar|km2|km²|square kilomet(?:re|er)s?|quadratkilometer))\b",
}
_NUMBER_BEFORE = rf"\d(?:[\d \u00a0\u202f.,]*\d)?{_SCALE}\s?"
_STATES_UNIT = {name: re.compile(_NUMBER_BEFORE + unit) for name, unit in _DIMENSION_UNITS.items()}


_UNIT_SYMBOL = re.compile(r"[kMGT]Wh?(?:e|el|p|th)?|[kMG]?toe|[PTGM]J|[kMG]?tCO2\w*")


def is_unit_symbol(word: str) -> bool:
    """Whether ``word`` is the symbol of a unit of power, energy or mass ("MWh", "GW", "ktoe"), as
    written: a question's "per MWh" names no subject, and documents may write the unit's name
    ("je Megawattstunde").

    >>> [w for w in ("MWh", "GWe", "ktoe", "MiCA", "GDPR", "EEG") if is_unit_symbol(w)]
    ['MWh', 'GWe', 'ktoe']
    """
    return _UNIT_SYMBOL.fullmatch(word) is not None


def states_dimension(dimensions: frozenset[str], sentence: str) -> bool:
    """Whether ``sentence`` states a number in a unit of one of ``dimensions``.

    >>> states_dimension(frozenset({"power"}), "Offshore wind will reach 3.5 GW by 2030.")
    True
    >>> states_dimension(frozenset({"power"}), "Renewables will cover 21 % of consumption; 1.2 TWh come from wind.")
    False
    >>> states_dimension(frozenset({"mass"}), "Emissions fall to 25 million tonnes of CO2 equivalent.")
    True
    >>> states_dimension(frozenset({"power"}), "bis 2030 auf 8 Gigawatt Steinkohle"), states_dimension(frozenset({"power"}), "20,50 Euro je Megawattstunde")
    (True, False)
    """
    text = without_references(sentence)
    return any(_STATES_UNIT[d].search(text) for d in dimensions)
