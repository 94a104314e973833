"""German read by the English answerability patterns: a word-level gloss, not a translation.

:mod:`spr.answerable` asks two things of a question and its evidence — which kind of value the
question wants ("how long", "how much … fee") and whether a sentence states one ("within three
months", "EUR 20.50") — with English patterns. A German question over German law wants the same
kinds of values, written with a handful of words: question words ("wie lange", "bis wann"), units
("Jahren", "Prozent", "Euro"), number words ("zehn") and number formats ("100.000", "20,50").
:func:`gloss` replaces exactly those with the English words the patterns read and leaves every
other word as it is, so the checks run unchanged; the answer still quotes the German sentence.

    >>> gloss("Wie lange ist ein Energieausweis gültig?")
    'how long ist ein energieausweis gültig?'
    >>> gloss("Die Steuer beträgt 20,50 Euro für eine Megawattstunde.")
    'die steuer tax beträgt 20.50 euros für eine megawattstunde.'
    >>> gloss("binnen drei Monaten nach dem 1. Januar 2026, mehr als 100.000 Einwohner")
    'binnen three months nach dem 1 january 2026, mehr als 100 000 einwohner'
"""

from __future__ import annotations

import re

from spr.values import is_unit_symbol

__all__ = ["acronyms", "gloss"]

# Question phrases, longest first (applied to lower-cased text, on word boundaries).
_PHRASES = (
    ("in welchem jahr", "in which year"), ("in welchen jahren", "in which year"), ("welches jahr", "which year"),
    ("ab welchem jahr", "from which year"), ("bis zu welchem jahr", "by which year"), ("bis zu welchem datum", "by which date"),
    ("ab welchem datum", "from which date"), ("ab welchem tag", "from which day"), ("bis wann", "by when"),
    ("ab wann", "from when"), ("seit wann", "since when"), ("innerhalb welcher frist", "how long"),
    ("wie lange", "how long"), ("wie schnell", "how quickly"), ("wie oft", "how often"), ("wie viele", "how many"),
    ("um wie viel", "by how much"), ("wie viel", "how much"), ("wie hoch", "how high"), ("wie groß", "how large"),
    ("welcher anteil", "what share"), ("welchen anteil", "what share"), ("welchen mindestanteil", "what share"),
    ("welcher prozentsatz", "what percentage"),
)  # fmt: skip
# Single words: question words, units, number words, months ("1. Januar" → "1 january").
_WORDS = {
    "wann": "when", "welcher": "which", "welche": "which", "welches": "which", "welchen": "which", "welchem": "which",
    "was": "what", "wer": "who", "jahr": "year", "jahre": "years", "jahren": "years", "jahres": "year",
    "monat": "month", "monate": "months", "monaten": "months", "woche": "week", "wochen": "weeks", "tag": "day",
    "tage": "days", "tagen": "days", "stunde": "hour", "stunden": "hours", "minute": "minute", "minuten": "minutes",
    "jahrzehnt": "decade", "jahrzehnte": "decades", "jahrzehnten": "decades", "kalenderjahr": "year",
    "kalenderjahre": "years", "kalenderjahren": "years", "kalendertage": "calendar days", "kalendertagen": "calendar days",
    "werktage": "working days", "werktagen": "working days", "datum": "date", "zeitpunkt": "date",
    "prozent": "percent", "prozentpunkte": "percentage points", "prozentpunkten": "percentage points",
    "prozentsatz": "percentage", "anteil": "share", "anteils": "share", "hälfte": "half", "drittel": "third",
    "viertel": "quarter", "euro": "euros", "cent": "cents", "unverzüglich": "without undue delay",
    "jährlich": "annually", "monatlich": "monthly", "wöchentlich": "weekly", "täglich": "daily",
    "zwei": "two", "drei": "three", "vier": "four", "fünf": "five", "sechs": "six", "sieben": "seven",
    "acht": "eight", "neun": "nine", "zehn": "ten", "elf": "eleven", "zwölf": "twelve", "fünfzehn": "fifteen",
    "zwanzig": "twenty", "dreißig": "thirty", "vierzig": "forty", "fünfzig": "fifty", "hundert": "hundred",
    "tausend": "thousand", "million": "million", "millionen": "million", "milliarde": "billion", "milliarden": "billion",
    "januar": "january", "februar": "february", "märz": "march", "april": "april", "mai": "may", "juni": "june",
    "juli": "july", "august": "august", "september": "september", "oktober": "october", "november": "november",
    "dezember": "december",
}  # fmt: skip
# Money words inside compounds ("Stromsteuersatz", "Bußgeldern"): the word stays and the English
# noun is added after it, so "how high … stromsteuersatz tax" asks for money.
_MONEY_STEMS = (
    ("bußgeld", "fine"), ("geldbuße", "fine"), ("strafe", "penalty"), ("gebühr", "fee"), ("entgelt", "charge"),
    ("preis", "price"), ("kosten", "costs"), ("steuer", "tax"), ("umlage", "levy"), ("abgabe", "levy"),
    ("zuschuss", "subsidy"), ("förder", "funding"), ("vergütung", "payment"), ("zahlung", "payment"),
)  # fmt: skip
_WORD = re.compile(r"[^\W\d_]+")
_THOUSANDS = re.compile(r"(?<![\d.,])(\d{1,3})((?:\.\d{3})+)(?![\d,]|\.\d)")  # "100.000" → "100 000"
_DECIMAL = re.compile(r"(?<=\d),(?=\d)")  # "20,50" → "20.50"
_DAY = re.compile(r"\b(\d{1,2})\.(?=\s+[^\W\d_])")  # "1. Januar" → "1 Januar"
_ACRONYM = re.compile(r"(?<![\w-])[A-Za-zÄÖÜäöü]*[A-ZÄÖÜ][A-Za-zÄÖÜäöü]*[A-ZÄÖÜ][A-Za-zÄÖÜäöü]*(?![\w])")


def _word(match: re.Match[str]) -> str:
    word = match.group(0)
    if word in _WORDS:
        return _WORDS[word]
    for stem, english in _MONEY_STEMS:
        if stem in word:
            return f"{word} {english}"
    return word


def gloss(text: str) -> str:
    """``text`` lower-cased, its German question words, units, number words and months in
    English, numbers in English form; every other word kept (see the module docstring)."""
    out = _THOUSANDS.sub(lambda m: m.group(1) + m.group(2).replace(".", " "), text)
    out = _DAY.sub(r"\1", _DECIMAL.sub(".", out)).lower()
    for german, english in _PHRASES:
        out = re.sub(rf"(?<!\w){german}(?!\w)", english, out)
    return _WORD.sub(_word, out)


def acronyms(question: str) -> list[str]:
    """The names a German question states that the evidence must mention: words with two or more
    capitals and no digit ("EEG", "LNG", "EnWG"), lower-cased. German capitalizes every noun, so
    capitals alone do not mark a name there.

    >>> acronyms("Wie hoch ist die EEG-Umlage 2022, und was regelt das EnWG für LNG-Terminals?")
    ['eeg', 'enwg', 'lng']
    >>> acronyms("Wie hoch ist die Steuer pro MWh?")  # a unit's symbol names no subject
    []
    """
    out: list[str] = []
    for match in _ACRONYM.finditer(question):
        word = match.group(0).lower()
        if len(word) >= 3 and word not in out and not is_unit_symbol(match.group(0)):
            out.append(word)
    return out
