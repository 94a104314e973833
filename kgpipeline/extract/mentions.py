"""Typed candidate spans of a text: the pattern half of the lexicon extractor.

:func:`find_spans` finds capitalized names typed by their head noun, places, dates, amounts and
quantities, generic nouns of the category's classes, self-references ("this Plan") and acronyms
the document defined; :mod:`kgpipeline.extract.lexicon_extractor` turns them into canonical mentions and
relations. :class:`DocContext` is what the document says about itself, shared by both.
"""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import date

from core.text import sentence_spans, singular
from kgpipeline.extract.lexicon import EU_MEMBER_STATES, CategoryLexicon, normalize_name, trie_pattern


@dataclass(frozen=True)
class DocContext:
    """What the document says about itself: its jurisdiction, and its own name and class for
    self-references ("this Plan")."""

    doc_id: str
    jurisdiction: str
    self_canonical: str
    self_class: str | None
    self_head: str  # singular head noun of the title's name ("plan")
    aliases: Mapping[str, tuple[str, str, str]] = field(default_factory=dict)  # "JTF" → (class, canonical, scope)
    alias_re: re.Pattern[str] | None = None


# --- spans ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class Candidate:
    """A typed span before canonicalization. ``priority`` breaks ties between equal spans
    (lower wins); ``value`` is the canonical form of dates, amounts and quantities."""

    start: int
    end: int
    class_iri: str
    priority: int
    head: str = ""  # singular head noun
    generic: bool = False  # a lowercase common noun, or a bare head ("the Fund")
    self_ref: bool = False
    value: str = ""
    alias: str = ""  # an acronym the document defined (see DocContext.aliases)


_CAP = r"[A-Z][\w'\u2019\-]*\+?"
_CODE = r"(?:\([A-Z][A-Za-z]*\)[ \t]*)?(?:No\.?[ \t]*)?\d+(?:[/:.\-\u2013]\d+)*(?!\w)"
_ACRONYM = r"\([A-Z][A-Z0-9+\-]*\)"
_NP = re.compile(rf"{_CAP}(?:[ \t]+(?:(?:of|for|on|in|and|to|de)[ \t]+(?:the[ \t]+)?)?{_CAP}|[ \t]+{_CODE}"
                 rf"|[ \t]+of[ \t]+(?:19|20)\d\d(?![\w/\-])|[ \t]*{_ACRONYM})*")  # fmt: skip
ACRONYM_DEF = re.compile(r"[ \t]\(([A-Z][A-Z0-9+\-]{1,9})\)(?!\s*(?:No\.?\s*)?\d)")  # not "(EU) 2021/1119"
TRAILING_ACRONYM = re.compile(r"\s*\([A-Z][A-Z0-9+\-]*\)$")
_DET_JUST_BEFORE = re.compile(r"\b(?i:the|this|these|that|its|their)\s+$")
_TOKEN = re.compile(r"\([^)\s]*\)|[^\s]+")
_ROMAN = re.compile(r"[IVXLC]+\.?")
_PREPS = frozenset({"of", "for", "on", "in", "to", "de"})
_LEAD = frozenset({"The", "This", "These", "That", "Those", "A", "An", "Each", "Every", "Any", "All", "Such", "Its",
                   "Their", "Our", "In", "On", "By", "For", "With", "Under", "Where", "When", "If", "Upon", "As", "At",
                   "From", "To", "And", "Or", "But", "Whereas", "Having", "Article", "Chapter", "Section", "Annex",
                   "Part", "Title", "Point", "Paragraph", "Recital", "Table", "Figure"})  # fmt: skip
_DETERMINERS = frozenset({"the", "this", "these", "that", "those", "its", "their"})
_MONTHS = ("january", "february", "march", "april", "may", "june", "july", "august", "september", "october",
           "november", "december")  # fmt: skip
# Dates are found from their month name (a cheap literal scan), then the day and year around it.
_MONTH = re.compile(r"(?:" + trie_pattern([m.capitalize() for m in _MONTHS]) + r")\b")
_DAY_BEFORE = re.compile(r"(?<!\d)(\d{1,2})(?:st|nd|rd|th)?\s+$")
_AFTER_MONTH = re.compile(r"\s+(?:(\d{1,2}),\s+)?((?:19|20)\d\d)\b")
_ISO_DATE = re.compile(r"(?:19|20)\d\d-[01]\d-[0-3]\d\b")
_YEAR = re.compile(r"(?:19|20)\d\d\b(?![\-/\u2013]\d)")
_YEAR_CUE = re.compile(r"\b(?:[Bb]y|in|from|until|till|since|before|after|to|and|end of)\s+$")  # "by 2030", not "No 2030"
_NUMBER = r"(?:\d{1,3}(?:[ \u00a0,.]\d{3})+(?:[.,]\d+)?|\d+(?:[.,]\d+)?)"  # "7 500 000 000", "50,000", "1.5"
_MONEY = re.compile(r"(?:EUR|USD|GBP|CHF|SEK|DKK|PLN|[€$£])\s?" + _NUMBER + r"(?:\s?(?:million|billion|thousand)\b)?")
_MONEY_AFTER = re.compile(_NUMBER + r"(?:\s(?:million|billion|thousand))?\s(?:euros?|dollars)\b")  # "5 million euro"
_QUANTITY = re.compile(r"\d+(?:[.,]\d+)?\s?(?:%|per ?cent\b|(?:GW|MW|kW|TW|GWh|MWh|kWh|TWh|Mt|kt|tonnes?"
                       r"|km|ha|hectares|square metres|m2|metres|ms|degrees Celsius|MtCO2e|CO2e)\b|dB\(A\))")  # fmt: skip
_GAZETTEER = re.compile(r"(?:" + trie_pattern(["European Union", "Member State", "Member States", "EU", "Union",
                                                *EU_MEMBER_STATES]) + r")\b")  # fmt: skip
# A determiner and up to two modifiers before a generic cue noun ("the", "an administrative").
_DET_BEFORE = re.compile(r"\b(?i:a|an|the|this|these|such|its|their|any|each|every|no)\s+(?:(?!(?:shall|must|may|will|be|is|are"
                         r"|of|and|or|to|in|on|for|by|with|that|which|not)\b)[a-z][a-z\-]+\s+){0,2}$")  # fmt: skip
_CAPWORD = re.compile(r"[A-Z][\w\-]*")
_NAME_BEFORE = re.compile(r"(?:[A-Z][\w\-]*[ \t]+)+$")
_OF_AMOUNT = re.compile(r"\s+of\s+(?:up to\s+|at least\s+|at most\s+|about\s+)?")


def sentences(text: str) -> list[tuple[int, int]]:
    """Clause spans that tile ``text`` (:func:`core.text.sentence_spans`): a ";" or a full stop
    before a lower-case word ends one too, since relations are read within a clause."""
    return sentence_spans(text, require_capital=False, trim=False)


def find_spans(text: str, lex: CategoryLexicon, ctx: DocContext | None = None) -> list[Candidate]:
    """Typed, non-overlapping spans of ``text``, sorted by position."""
    self_head = ctx.self_head if ctx is not None else ""
    cands: list[Candidate] = []
    if ctx is not None and ctx.alias_re is not None:
        for m in ctx.alias_re.finditer(text):
            cands.append(Candidate(m.start(), m.end(), ctx.aliases[m.group()][0], 2, m.group(), alias=m.group()))
    cands += named_spans(text, lex)
    cands += place_spans(text, lex)
    cands += _values(text, lex)
    cands += _generic(text, lex)
    if lex.deictic_re is not None:
        for m in lex.deictic_re.finditer(text):
            if not word_start(text, m.start()):
                continue
            head = singular(m.group(2))
            det = m.group(1).lower()
            cls = lex.head_cues.get((head,))
            if cls and (det in ("this", "these") or (det == "the" and head == self_head)):
                cands.append(Candidate(m.start(2), m.end(), cls, 0, head, self_ref=True))
    cands.sort(key=lambda c: (c.start, -c.end, c.priority, c.class_iri))
    kept: list[Candidate] = []
    for c in cands:
        if not kept or c.start >= kept[-1].end:
            kept.append(c)
    return kept


def named_spans(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    for m in _NP.finditer(text):
        word = m.group()
        if " " not in word and "\t" not in word:
            # Fast path for the commonest match, one capitalized word: only a cue word after a
            # determiner ("the Commission") is a mention.
            cls = lex.head_cues.get((singular(word),)) if word not in _LEAD and not word.isupper() else None
            if cls is not None and _DET_JUST_BEFORE.search(text, max(0, m.start() - 7), m.start()):
                yield Candidate(m.start(), m.end(), cls, 2, singular(word), generic=True)
            continue
        toks = [(t.start() + m.start(), t.end() + m.start(), t.group()) for t in _TOKEN.finditer(m.group())]
        det = bool(_DET_JUST_BEFORE.search(text, max(0, m.start() - 7), m.start()))
        part: list[tuple[int, int, str]] = []
        seen_prep = False
        for tok in [*toks, None]:
            if tok is not None and not part and (tok[2] in _LEAD or tok[2] in _DETERMINERS or tok[2][:1].isdigit()
                                                 or _ROMAN.fullmatch(tok[2])):  # fmt: skip
                det = det or tok[2].lower() in _DETERMINERS
                continue
            if tok is None or (tok[2] == "and" and not seen_prep):
                if part:
                    cand = _type_name(part, det, lex)
                    if cand is not None:
                        yield cand
                part, seen_prep, det = [], False, False
                continue
            seen_prep = seen_prep or tok[2] in _PREPS
            part.append(tok)


def _type_name(toks: list[tuple[int, int, str]], det: bool, lex: CategoryLexicon) -> Candidate | None:
    words = [t[2] for t in toks]
    p = next((i for i, w in enumerate(words) if w in _PREPS), len(words))
    h = p - 1
    while h >= 0 and _is_code(words[h]):
        h -= 1
    if h < 0:
        return None
    cls, n = None, 0
    for n in range(min(lex.max_cue_len, h + 1), 0, -1):
        if cls := lex.head_cues.get(tuple(singular(w) for w in words[h - n + 1 : h + 1])):
            break
    if cls is None or words[h].isupper() and len(words[h]) > 1:
        return None
    end = p - 1
    if p < len(words) and end == h and cls != lex.role("geo"):
        # "X of Y" runs on for every name; "on/for/in" only for document-like names (titles).
        end = len(words) - 1
        if cls not in lex.titled_classes:
            end = next((i - 1 for i in range(p + 1, len(words)) if words[i] in _PREPS - {"of"}), end)
    while words[end] in _PREPS or words[end] == "the":
        end -= 1
    bare = h - n + 1 == 0 and end == h
    if bare and not det:
        return None  # a lone cue word without a determiner is a heading or a common noun
    return Candidate(toks[0][0], toks[end][1], cls, 2, singular(words[h]), generic=bare)


def _is_code(word: str) -> bool:
    return word[:1].isdigit() or word.startswith("(") or word in ("No", "No.") or (word.isupper() and len(word) > 1)


def place_spans(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    geo = lex.role("geo")
    if geo is None:
        return
    for m in lex.geo_of_re.finditer(text):
        if word_start(text, m.start()):
            yield Candidate(m.start(), m.end(), geo, 1, "place")
    for m in _GAZETTEER.finditer(text):
        # a bare "Union" is the EU only as "the Union"
        if word_start(text, m.start()) and (m.group() != "Union" or text[max(0, m.start() - 4) : m.start()] == "the "):
            yield Candidate(m.start(), m.end(), geo, 1, "place")
    for m in lex.geo_name_re.finditer(text):
        # "Westmark Province": read the capitalized name backwards from the unit noun.
        name = _NAME_BEFORE.search(text, max(0, m.start() - 80), m.start()) if word_start(text, m.start()) else None
        if name is not None:
            first = next((w for w in _CAPWORD.finditer(text, name.start(), name.end()) if w.group() not in _LEAD), None)
            if first is not None:  # "The Westmark Province" → "Westmark Province"
                yield Candidate(first.start(), m.end(), geo, 1, "place")


def word_start(text: str, i: int) -> bool:
    """No letter, digit or underscore right before ``i`` (the patterns leave out a leading
    ``\\b``, which would disable the regex engine's first-character scan)."""
    return i == 0 or not (text[i - 1].isalnum() or text[i - 1] == "_")


def _values(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    if lex.role("date") is not None:
        for start, end, value in _dates(text):
            yield Candidate(start, end, _date_class(text, start, lex), 1, "date", value=value)
        for m in _YEAR.finditer(text):
            if m.start() and text[m.start() - 1].isspace() and _YEAR_CUE.search(text, max(0, m.start() - 8), m.start()):
                yield Candidate(m.start(), m.end(), _date_class(text, m.start(), lex), 1, "year", value=m.group())
    if funds := lex.role("funds"):
        for pattern in (_MONEY, _MONEY_AFTER):
            for m in pattern.finditer(text):
                if word_start(text, m.start()):
                    yield Candidate(m.start(), m.end(), funds, 1, "amount", value=normalize_name(m.group()))
    target, indicator = lex.role("target"), lex.role("indicator")
    if target or indicator:
        for m in _QUANTITY.finditer(text):
            if m.start() and text[m.start() - 1] in ".,/" or not word_start(text, m.start()):
                continue
            start = text.rfind("\n", 0, m.start()) + 1
            cue = lex.target_re is not None and lex.target_re.search(text, max(start, m.start() - 120), m.start())
            cls = target if cue and target else indicator or target
            yield Candidate(m.start(), m.end(), cls, 1, "quantity", value=normalize_name(m.group()))


def _date_class(text: str, start: int, lex: CategoryLexicon) -> str:
    deadline = lex.role("deadline")
    if deadline and lex.deadline_re.search(text[max(0, start - 30) : start]):
        return deadline
    return lex.role("date") or ""


def _dates(text: str) -> Iterator[tuple[int, int, str]]:
    """(start, end, value) of dates: "1 June 2025", "June 1, 2025", "June 2025", "15 January",
    "2025-06-01". The value is YYYY-MM-DD when day, month and year are known (and valid), else
    the normalized text."""
    for m in _ISO_DATE.finditer(text):
        if word_start(text, m.start()):
            yield m.start(), m.end(), _iso(m.group()[:4], int(m.group()[5:7]), m.group()[8:10], m.group())
    for m in _MONTH.finditer(text):
        if not word_start(text, m.start()):
            continue
        month = _MONTHS.index(m.group().lower()) + 1
        day = _DAY_BEFORE.search(text, max(0, m.start() - 6), m.start())
        after = _AFTER_MONTH.match(text, m.end())
        if day is not None:
            year = after.group(2) if after is not None and after.group(1) is None else ""
            end = after.end() if year else m.end()
            yield day.start(1), end, _iso(year, month, day.group(1), text[day.start(1) : end])
        elif after is not None:
            yield m.start(), after.end(), _iso(after.group(2), month, after.group(1) or "", text[m.start() : after.end()])


def _iso(year: str, month: int, day: str, surface: str) -> str:
    try:
        return date(int(year), month, int(day)).isoformat()
    except ValueError:  # a part is missing or out of range: keep the text
        return normalize_name(surface)


def _generic(text: str, lex: CategoryLexicon) -> Iterator[Candidate]:
    if lex.generic_re is None:
        return
    for m in lex.generic_re.finditer(text):
        if not word_start(text, m.start()):
            continue
        det = _DET_BEFORE.search(text, max(0, m.start() - 48), m.start())
        if det is None and " " not in m.group():
            continue  # a one-word cue needs a determiner; "technical requirements" does not
        # The determiner stays out of the mention; its modifiers ("administrative fine") stay in.
        mods = text[det.start() : det.end()].split(None, 1) if det is not None and " " not in m.group() else []
        start = det.end() - len(mods[1]) if len(mods) > 1 else m.start()
        words = text[start : m.end()].split()
        cls = None
        for n in range(min(lex.max_cue_len, len(words)), 0, -1):
            if cls := lex.head_cues.get(tuple(singular(w) for w in words[-n:])):
                break
        if cls is None:
            continue
        end = m.end()
        # "a fine of up to EUR 50,000", "a target of 12 GW": the amount belongs to the noun.
        if (of := _OF_AMOUNT.match(text, end)) and (num := _MONEY.match(text, of.end()) or _QUANTITY.match(text, of.end())):
            end = num.end()
        yield Candidate(start, end, cls, 3, singular(words[-1]), generic=True)
