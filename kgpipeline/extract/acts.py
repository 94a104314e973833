"""Legal acts by their identifiers: "Regulation (EU) 2016/679", "Directive 95/46/EC", "Council
Directive 84/253/EEC", lists such as "Regulations (EC) No 1060/2009, (EU) No 648/2012 and (EU)
2016/1011", CELEX numbers ("32016R0679"), and the act a document itself is.

An act is identified by its series, year and number (``key``: "regulation 2016/679"), so every
spelling of one act is one entity; its label is built from that identity in the Official
Journal's style of its period, so it is the same wherever the act is named (one skos:prefLabel).
Used by :mod:`kgpipeline.extract.policy_facts`.
"""

from __future__ import annotations

import re
from collections.abc import Iterator
from dataclasses import dataclass

from kgpipeline.records import SourceDocument

__all__ = ["ActRef", "act_from_celex", "act_references", "own_act"]


_TYPE = re.compile(r"\b(?:(?P<org>Council|Commission)\s+)?(?:(?:Implementing|Delegated)\s+)?(?P<type>Framework\s+Decision|"
                   r"Regulation|Directive|Decision)(?P<plural>s)?\s+(?=\(|No\b|\d)")  # fmt: skip
_ITEM = re.compile(r"(?:\((?P<org>EU|EC|EEC|Euratom)\)\s*)?(?P<no>No\.?\s*)?(?P<a>\d{1,4})/(?P<b>\d{1,4})"
                   r"(?:/(?P<suffix>EU|EC|EEC|JHA|CFSP|Euratom))?(?![\w/])")  # fmt: skip
_LIST_SEP = re.compile(r",\s*(?:and\s+)?|\s+and\s+")
_CELEX = re.compile(r"^3(\d{4})([RLD])(\d{4})")
_TYPE_OF_CELEX = {"R": "Regulation", "L": "Directive", "D": "Decision"}


@dataclass(frozen=True)
class ActRef:
    """One act named in the text: ``key`` identifies it ("regulation 2016/679"), ``label`` is how
    it reads ("Regulation (EU) 2016/679"); ``start``/``end`` are the offsets of its number."""

    key: str
    label: str
    start: int
    end: int


def _era(year: int) -> str:
    """The Community/Union of the act's year, as its number writes it (EEC to 1993, EC to 2009)."""
    return "EEC" if year <= 1993 else "EC" if year < 2010 else "EU"


def _label(kind: str, year: int, number: int, numbered: bool) -> str:
    """The act's name in the Official Journal's style for its type and period. A function of the
    act's identity only, so every spelling of one act gets the same label (one skos:prefLabel)."""
    if kind == "Decision" and numbered:
        return f"Decision No {number}/{year}/{_era(year)}"
    if kind == "Regulation" and (numbered or year < 2015):
        return f"Regulation ({_era(year)}) No {number}/{year}"
    if year >= 2015:
        return f"{kind} (EU) {year}/{number}"
    short = str(year)[2:] if year < 1999 else str(year)
    return f"{kind} {short}/{number}/{_era(year)}"


def _act(kind: str, a: str, b: str, numbered: bool) -> tuple[str, str] | None:
    kind = "Decision" if kind.endswith("Decision") else kind
    first, second = int(a), int(b)
    number, year = (first, second) if numbered else (second, first)
    if year < 100:
        year += 1900 if year >= 50 else 2000
    if not 1950 <= year <= 2100 or number == 0:
        return None
    numbered = numbered and kind != "Directive"  # "Directive No" does not occur; regulations' "No" is their era's style
    series = "decision no" if kind == "Decision" and numbered else kind.lower()
    return f"{series} {year}/{number}", _label(kind, year, number, numbered)


def act_from_celex(celex: str) -> tuple[str, str] | None:
    """(key, label) of the act a CELEX number of sector 3 names; None for anything else.

    >>> act_from_celex("32016R0679")
    ('regulation 2016/679', 'Regulation (EU) 2016/679')
    >>> act_from_celex("32013L0034")
    ('directive 2013/34', 'Directive 2013/34/EU')
    """
    m = _CELEX.match(celex.strip())
    if not m:
        return None
    year, kind, number = int(m.group(1)), _TYPE_OF_CELEX[m.group(2)], int(m.group(3))
    old_style = kind == "Regulation" and year < 2015
    return _act(kind, str(number) if old_style else str(year), str(year) if old_style else str(number), numbered=old_style)


def act_references(text: str) -> Iterator[ActRef]:
    """Every act named in ``text``, list items included, in order."""
    for m in _TYPE.finditer(text):
        kind, plural, pos = " ".join(m.group("type").split()), bool(m.group("plural")), m.end()
        while True:
            item = _ITEM.match(text, pos)
            if item is None or (item.group("org") is None and item.group("no") is None and not item.group("suffix")
                                and int(item.group("a")) < 1950):  # fmt: skip
                break  # "Decision 3/2020" without (EU)/No/suffix is ambiguous, as is a bare page number
            act = _act(kind, item.group("a"), item.group("b"), bool(item.group("no")))
            if act is not None:
                yield ActRef(act[0], act[1], m.start() if pos == m.end() else item.start(), item.end())
            sep = _LIST_SEP.match(text, item.end()) if plural else None
            if sep is None or _ITEM.match(text, sep.end()) is None:
                break
            pos = sep.end()


_SHORT_NAME = re.compile(r"\(\s*[‘'“\"]?([A-Z][\w\- ]{2,60}?(?:Act|Law|Directive|Regulation|Framework))[’'”\"]?\s*\)")


def own_act(document: SourceDocument) -> tuple[str, str, tuple[str, ...]] | None:
    """(key, label, other names) of the act a document is, from its CELEX number or title."""
    meta = document.metadata or {}
    names = [str(meta[k]).strip() for k in ("act", "short_title", "alias") if isinstance(meta.get(k), str) and meta[k].strip()]
    title = document.title or ""
    names += [m.group(1).strip() for m in _SHORT_NAME.finditer(title)]
    for key in ("celex", "identifier", "celex_id"):
        value = meta.get(key)
        if isinstance(value, str) and (act := act_from_celex(value)):
            return act[0], act[1], tuple(dict.fromkeys(names))
    first = next(act_references(title[:120]), None)
    if first is not None and first.start < 20:
        return first.key, first.label, tuple(dict.fromkeys(names))
    return None
