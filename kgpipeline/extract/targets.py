"""Quantified targets by deterministic patterns: value, unit, target year, base year, scope.

Plans and laws state targets in a few fixed forms: "reduce greenhouse gas emissions by at least
40 % by 2030 as compared to 1990", "a target of 40% renewable electricity by 2030", "a 65% share
of renewable energies in electricity consumption in 2030". A sentence yields a target when it has

* a **value** with a unit (``%``, percentage points, GW/MW, TWh/GWh/PJ, Mtoe/ktoe, Mt CO2(e));
* a **target year** (2020 or later) after "by", "in", "until", "for" near the value, or written
  as "the 2030 target";
* a **target cue** (target, goal, objective, aim, commitment, binding, contribution, reduce,
  reduction, at least, shall, must, "to achieve"/"to reach"): without one, "biogas will account
  for 7% by 2030" is a projection, not a target.

Each target is a ``pkb:QuantifiedTarget`` node in the chunk that states it, with
``pkb:targetAmount`` (the value as written, with its unit and qualifier: "at least 40 %"),
``pkb:targetQuantity`` (``xsd:decimal``), ``pkb:targetUnit``, ``pkb:targetYear`` and, where the
text compares with a year ("compared to 1990", "relative to 2005 levels"), ``pkb:baseYear``
(``xsd:integer``), and ``pkb:targetScope`` — what the value measures ("greenhouse gas
emissions", "share of renewable energy in gross final energy consumption") — when the wording
shows it. The label is the sentence and the document it comes from, which is what questions
describe ("What is Austria's 2030 target for renewables in transport?"). A value inside a
parenthesis of past figures ("compared with 13.1% in 2015") and the starting point of "from the
current 65% to 75% by 2020" are not targets.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from core.text import sentence_spans
from kgpipeline.extract.base import Attribute, Mention
from kgpipeline.records import Chunk, SourceDocument
from store.vocab import PKB, XSD

QUANTIFIED_TARGET = PKB + "QuantifiedTarget"
TARGET_QUANTITY, TARGET_UNIT, TARGET_YEAR = PKB + "targetQuantity", PKB + "targetUnit", PKB + "targetYear"
TARGET_AMOUNT = PKB + "targetAmount"
BASE_YEAR, TARGET_SCOPE = PKB + "baseYear", PKB + "targetScope"
PROPERTIES = frozenset({TARGET_QUANTITY, TARGET_UNIT, TARGET_YEAR, BASE_YEAR, TARGET_SCOPE, TARGET_AMOUNT})

_UNITS = (
    ("percentage points", r"percentage\s+points?|pp\b"), ("%", r"%|per\s?cent\b|percent\b"),
    ("GW", r"GW\b"), ("MW", r"MW\b"), ("TWh", r"TWh\b"), ("GWh", r"GWh\b"), ("PJ", r"PJ\b"),
    ("Mtoe", r"Mtoe\b"), ("ktoe", r"ktoe\b"), ("Mt CO2e", r"Mt\s?CO2\s?(?:e|eq|equivalent)?\b|million\s+tonnes\s+of\s+CO2(?:\s?(?:e|eq|equivalent))?\b"),
)  # fmt: skip
_VALUE = re.compile(
    r"(?<![\w.,/])(?P<n>\d{1,3}(?:[ \u00a0,]\d{3})*(?:[.,]\d+)?|\d+(?:[.,]\d+)?)\s?(?P<unit>"
    + "|".join(f"(?P<u{i}>{p})" for i, (_, p) in enumerate(_UNITS)) + ")",
    re.I,
)
_DAY = r"(?:\d{1,2}\s+(?:January|February|March|April|May|June|July|August|September|October|November|December)\s+)?"
_YEAR_AFTER = re.compile(r"^[^.;]{0,80}?\b(?:by|in|until|till|for|before)\s+(?:the\s+(?:end\s+of\s+|year\s+)?)?" + _DAY + r"(?P<y>20[2-9]\d)\b")
_YEAR_NAMED = re.compile(r"\b(?:the\s+)?(?P<y>20[2-9]\d)\s+(?:(?:\w+\s+){0,2}target|objective|goal|framework)s?\b", re.I)
_YEAR_BEFORE = re.compile(r"\b(?:by|in|until|for)\s+(?:the\s+year\s+)?(?P<y>20[2-9]\d)\b[^.;]{0,80}$")
_YEAR_HEADING = re.compile(r"\b(?:by|in|until|for)\s+(?:the\s+year\s+)?(?P<y>20[2-9]\d)\s*:")  # "targets … by 2030: in the ETS sector: at least 43%"
_BASE = re.compile(r"\b(?:(?:as\s+)?compared\s+(?:to|with)|relative\s+to|below|with\s+respect\s+to|versus|vs\.?|than\s+(?:they\s+were\s+)?in)"
                   r"\s+(?:the\s+)?(?:year\s+|levels?\s+(?:of|in)\s+)?(?P<y>19[5-9]\d|20[0-2]\d)\b", re.I)  # fmt: skip
_CUE = re.compile(r"\b(?:targets?|goals?|objectives?|aim(?:s|ing)?|ambition|commit(?:ment|ted|s)?|binding|contribution|shall|must)\b", re.I)
_WEAK_CUE = re.compile(r"\b(?:reduc(?:e|es|ed|ing|tion)|cut|at\s+least|to\s+(?:achieve|reach|increase|raise))\b", re.I)
# Forecasts state values by a year too; without a strong cue they are not targets.
_PROJECTION = re.compile(r"\b(?:estimated|projected|expected|forecasts?|scenarios?|would|projections?|assum(?:ed|ing|ptions?))\b", re.I)
_SCOPE_AFTER = re.compile(r"^\s*(?:for\s+(?:the\s+)?(?=share\b))?(?:share\s+)?(?:of|in)\s+(?!relation\b|comparison\b|line\b|total\b$)(?:the\s+)?(?P<s>[A-Za-z][\w\-]*(?:\s+(?!by\b|in\s+20|until\b|compared\b|relative\b|as\b|below\b)"
                          r"[\w\-()]+){0,9})")  # fmt: skip
_SCOPE_BEFORE = re.compile(r"\b(?:reduc(?:e|ing|tion\s+(?:of|in))|cut(?:ting)?|increas(?:e|ing)|rais(?:e|ing)|lower(?:ing)?)\s+(?:the\s+|its\s+|their\s+)?"
                           r"(?P<s>[A-Za-z][\w\-]*(?:\s+[\w\-]+){0,11}?)\s+(?:by|of|to)\s+(?:at\s+least\s+|approximately\s+|around\s+|about\s+)?$", re.I)  # fmt: skip
# "an energy efficiency target of 49,292 GWh", "the electricity interconnection target for 2030 of at least 15%"
_SCOPE_NAMED = re.compile(r"\b(?:the|an?|its|their|national|binding|indicative|EU|overall)\s+(?P<s>[A-Za-z][\w\-]*(?:\s+[\w\-]+){0,4}?)\s+"
                          r"(?:reduction\s+)?(?:target|objective|goal)\b[^.;%:]{0,40}$", re.I)  # fmt: skip
_SCOPE_END = re.compile(r"\s+(?:by|in|until|for|compared|relative|as|below|and|or|of|is|are|will|shall|must|from|with|which|that|up|to|"
                        r"sets?|has|have|a|an|the)$", re.I)  # fmt: skip
_VERB = re.compile(r"\b(?:sets?|has|have|is|are|was|were|will|would|shall|must|may|can|agreed|adopted|confirms?|includes?)\b", re.I)
_QUALIFIER = re.compile(r"\b(?:at\s+least|at\s+most|up\s+to|around|about|approximately|a\s+minimum\s+of|a\s+maximum\s+of|over|more\s+than|"
                        r"less\s+than|below|above)\s+$|-\s*$", re.I)  # fmt: skip
_QUALIFIERS = re.compile(r"^(?:(?:interim|indicative|national|binding|overall|minimum|ambitious|new|EU|Union)\s*)+", re.I)
_LABEL_CHARS = 300


@dataclass(frozen=True)
class Target:
    """One target statement: offsets of its value in the chunk, and its parts."""

    start: int
    end: int
    quantity: str  # xsd:decimal lexical form
    unit: str
    year: int
    base_year: int | None
    scope: str
    written: str = ""  # the value as the text writes it, with its qualifier: "at least 40 %"


def find_targets(text: str) -> Iterator[tuple[tuple[int, int], Target]]:
    """(sentence span, target) for every target of ``text`` (see the module docstring). Pure.

    >>> s = "The EU has committed to reduce greenhouse gas emissions by at least 40 % by 2030 as compared to 1990."
    >>> [(t.quantity, t.unit, t.year, t.base_year, t.scope) for _, t in find_targets(s)]
    [('40', '%', 2030, 1990, 'greenhouse gas emissions')]
    >>> [t.quantity for _, t in find_targets("Biogas will account for 7% of gas consumption by 2030.")]
    []
    """
    for s0, s1 in sentence_spans(text, require_capital=False):
        sentence = text[s0:s1]
        if not (_CUE.search(sentence) or (_WEAK_CUE.search(sentence) and not _PROJECTION.search(sentence))):
            continue
        if _table_like(sentence):
            continue
        for m in _VALUE.finditer(sentence):
            if (_in_past_parenthesis(sentence, m.start()) or _past_figure(sentence, m.end()) or _starting_point(sentence, m.start(), m.end())
                    or not _cued(sentence, m.start(), m.end())):  # fmt: skip
                continue
            year = _target_year(sentence, m.start(), m.end())
            if year is None:
                continue
            base = _BASE.search(sentence, m.end(), min(len(sentence), m.end() + 120))
            unit = next(name for i, (name, _) in enumerate(_UNITS) if m.group(f"u{i}"))
            quantity = _decimal(m.group("n"))
            if quantity is None:
                continue
            qualifier = _QUALIFIER.search(sentence[max(0, m.start() - 30) : m.start()])
            written = (qualifier.group().strip() + " " if qualifier else "") + " ".join(m.group().split())
            yield (s0, s1), Target(s0 + m.start(), s0 + m.end(), quantity, unit, year,
                                   int(base.group("y")) if base else None, _scope(sentence, m.start(), m.end()), written)  # fmt: skip


def _cued(sentence: str, v0: int, v1: int) -> bool:
    """A target cue close to the value: a strong one within 80 characters before it or 40 after,
    or a weak one just before it with no forecast wording in between; "69% of which …" is a share."""
    if re.match(r"\s+of\s+which\b", sentence[v1:]):
        return False
    before, after = sentence[max(0, v0 - 80) : v0], sentence[v1 : v1 + 40]
    if _CUE.search(before) or _CUE.search(after):
        return True
    near = sentence[max(0, v0 - 50) : v0]
    return bool(_WEAK_CUE.search(near)) and not _PROJECTION.search(before)


def _starting_point(sentence: str, v0: int, v1: int) -> bool:
    """"from the current 65% to 75% by 2020", "from 31% … to at least 35%": the first value is
    where the target starts, not the target."""
    return bool(re.search(r"\bfrom\s+(?:the\s+)?(?:current\s+|present\s+|today's\s+)?$", sentence[max(0, v0 - 30) : v0])) and bool(
        re.match(r"^[^.;]{0,80}?\bto\s+(?:(?:at\s+least|about|around|approximately|a\s+minimum\s+of)\s+)?\d", sentence[v1:])
    )


def _table_like(sentence: str) -> bool:
    """Rows of a table run together ("2021 2022 … 0.8% 0.8% …"): many numbers, few words."""
    words = sentence.split()
    numbers = sum(bool(re.fullmatch(r"[-+]?\d[\d.,]*%?", w)) for w in words)
    return numbers >= 6 and numbers > 0.4 * len(words)


def _past_figure(sentence: str, v1: int) -> bool:
    """"83.6% in 2017": the first year after the value is a past one."""
    m = re.match(r"^[^.;]{0,30}?\b(?:by|in|until|for|of)\s+(?P<y>(?:19|20)\d\d)\b", sentence[v1:])
    return m is not None and int(m.group("y")) < 2020


def _target_year(sentence: str, v0: int, v1: int) -> int | None:
    after = _YEAR_AFTER.search(sentence[v1:])
    if after:
        return int(after.group("y"))
    before = _YEAR_BEFORE.search(sentence[max(0, v0 - 100) : v0])
    if before:
        return int(before.group("y"))
    named = [m for m in _YEAR_NAMED.finditer(sentence) if abs(m.start() - v0) < 120]
    if named:
        return int(named[0].group("y"))
    heading = list(_YEAR_HEADING.finditer(sentence, 0, v0))
    return int(heading[-1].group("y")) if heading else None


def _in_past_parenthesis(sentence: str, at: int) -> bool:
    """A value inside "( … )" that names a year before 2021: a past figure beside the target."""
    opened = sentence.rfind("(", 0, at)
    if opened < 0 or sentence.rfind(")", opened, at) >= 0:
        return False
    close = sentence.find(")", at)
    inside = sentence[opened : close if close >= 0 else len(sentence)]
    return any(int(y) < 2021 for y in re.findall(r"\b((?:19|20)\d\d)\b", inside))


def _decimal(number: str) -> str | None:
    n = number.replace("\u00a0", " ")
    if re.fullmatch(r"\d{1,3}(?:[ ,]\d{3})+", n):  # thousands separators: "1 200", "1,200"
        n = re.sub(r"[ ,]", "", n)
    n = n.replace(" ", "").replace(",", ".")
    return n if re.fullmatch(r"\d+(?:\.\d+)?", n) else None


def _scope(sentence: str, v0: int, v1: int) -> str:
    """What the value measures, from the wording after it ("40% of final energy consumption")
    or before it ("reduce greenhouse gas emissions by 40%"); "" when neither shows it."""
    after = _SCOPE_AFTER.match(sentence[v1:])
    phrase = after.group("s") if after else ""
    if re.fullmatch(r"(?:the\s+)?(?:GDP|gross domestic product)\b.*", phrase, re.I):
        before = _SCOPE_BEFORE.search(sentence[max(0, v0 - 120) : v0])
        phrase = f"{before.group('s')} (share of GDP)" if before else ""
    if not phrase:
        before = _SCOPE_BEFORE.search(sentence[max(0, v0 - 120) : v0])
        phrase = before.group("s") if before else ""
    if not phrase:
        named = _SCOPE_NAMED.search(sentence[max(0, v0 - 120) : v0])
        phrase = named.group("s") if named and not _VERB.search(named.group("s")) else ""
    phrase = re.split(r"[,;:()]", phrase)[0].strip()
    while (cut := _SCOPE_END.search(phrase)) is not None:
        phrase = phrase[: cut.start()]
    phrase = _QUALIFIERS.sub("", phrase)
    if len(phrase.split()) < 1 or re.fullmatch(r"(?:the|a|an|it|them|this|that)", phrase, re.I):
        return ""
    return phrase


def target_facts(chunk: Chunk, document: SourceDocument) -> tuple[list[Mention], list[Attribute]]:
    """The ``pkb:QuantifiedTarget`` nodes of ``chunk`` with their attributes."""
    text = chunk.text
    title = " ".join((document.title or "").split())
    mentions: list[Mention] = []
    attributes: list[Attribute] = []
    for (s0, s1), t in find_targets(text):
        clause = " ".join(text[s0:s1].split()).rstrip(" .;:")  # a label, not a sentence: facts verbalize it mid-sentence
        if len(clause) > _LABEL_CHARS:
            clause = clause[:_LABEL_CHARS].rsplit(" ", 1)[0] + " …"
        node = Mention(text[t.start : t.end], QUANTIFIED_TARGET, t.start, t.end, f"{chunk.chunk_id}:target:{t.start}", "",
                       f"{clause} ({title})" if title else clause)  # fmt: skip
        evidence = (s0, s1)
        mentions.append(node)
        attributes += [
            Attribute(node, TARGET_QUANTITY, t.quantity, XSD + "decimal", evidence),
            Attribute(node, TARGET_UNIT, t.unit, XSD + "string", evidence),
            Attribute(node, TARGET_AMOUNT, t.written, XSD + "string", evidence),
            Attribute(node, TARGET_YEAR, str(t.year), XSD + "integer", evidence),
        ]
        if t.base_year is not None:
            attributes.append(Attribute(node, BASE_YEAR, str(t.base_year), XSD + "integer", evidence))
        if t.scope:
            attributes.append(Attribute(node, TARGET_SCOPE, t.scope, XSD + "string", evidence))
    return mentions, attributes
