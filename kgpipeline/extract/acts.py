"""The act a document itself is, with every name it goes by, and who adopted it when. Acts named
in a text, by identifier or short name, are read by :mod:`core.acts` (shared with the answer side);
an act is identified by its series, year and number (``key``: "regulation 2016/679"), so every
spelling of one act is one entity with one label (one skos:prefLabel). An EU act's formal title
also says who adopted it and on which day ("Regulation (EU) 2021/1119 of the European Parliament
and of the Council of 30 June 2021 …", "Commission Implementing Regulation (EU) 2019/1842 of 31
October 2019 …"): :func:`title_adoption`. Used by :mod:`kgpipeline.extract.policy_facts` and
:mod:`kgpipeline.write`.
"""

from __future__ import annotations

import datetime as dt
import re
from dataclasses import dataclass

from core.acts import KNOWN_ACTS, ActRef, act_from_celex, act_references, kind_of_key, with_type_names, with_unmarked_names
from kgpipeline.records import SourceDocument

__all__ = ["ActRef", "Adoption", "act_from_celex", "act_references", "own_act", "title_adoption"]


_SHORT_NAME = re.compile(r"\(\s*[‘'“\"]?([A-Z][\w\- ]{2,60}?(?:Act|Law|Directive|Regulation|Framework))[’'”\"]?\s*\)")


_NAMES_BY_KEY = {act.key: act.names for act in KNOWN_ACTS}


def own_act(document: SourceDocument) -> tuple[str, str, tuple[str, ...]] | None:
    """(key, label, other names) of the act a document is, from its CELEX number or title. The
    other names are the document's own (metadata, a short title in its title), then the act's
    short names in common use (:data:`core.acts.KNOWN_ACTS`: "EUDR" for Regulation (EU)
    2023/1115, whose text never says so)."""
    meta = document.metadata or {}
    names = [str(meta[k]).strip() for k in ("act", "short_title", "alias") if isinstance(meta.get(k), str) and meta[k].strip()]
    title = document.title or ""
    names += [m.group(1).strip() for m in _SHORT_NAME.finditer(title)]
    for key in ("celex", "identifier", "celex_id"):
        value = meta.get(key)
        if isinstance(value, str) and (act := act_from_celex(value)):
            return act[0], act[1], _with_known_names(act[0], names)
    first = next(act_references(title[:120]), None)
    if first is not None and first.start < 20:
        return first.key, first.label, _with_known_names(first.key, names)
    return None


def _with_known_names(key: str, names: list[str]) -> tuple[str, ...]:
    seen = {name.casefold() for name in names}
    known = tuple(dict.fromkeys(names + [n for n in _NAMES_BY_KEY.get(key, ()) if n.casefold() not in seen]))
    # the title's "‘European Climate Law’" is "the Climate Law" too; "‘InvestEU’" is "the InvestEU Regulation"
    return with_type_names(with_unmarked_names(known), kind_of_key(key))


# --- who adopted the act, and when: its formal title ------------------------------------------------

# The Official Journal's formal title: [issuer prefix] type (org) number [of the <issuer>] [of <date>].
_FORMAL_TITLE = re.compile(
    r"\s*(?:(?P<prefix>European\s+Parliament\s+and\s+Council|Council|Commission)\s+)?(?:(?:Implementing|Delegated)\s+)?"
    r"(?:Framework\s+Decision|Regulation|Directive|Decision)\s+(?:\((?:EU|EC|EEC|Euratom)\)\s*)?(?:No\.?\s*)?\d{1,4}/\d{1,4}"
    r"(?:/(?:EU|EC|EEC|JHA|CFSP|Euratom))?"
    r"(?:\s+of\s+the\s+(?P<by>European\s+Parliament\s+and\s+of\s+the\s+Council|European\s+Parliament|Council|"
    r"European\s+Commission|Commission|European\s+Central\s+Bank))?"
    r"(?:\s+of\s+(?P<day>\d{1,2})\s+(?P<month>[A-Z][a-z]+)\s+(?P<year>\d{4}))?"
)  # fmt: skip
PARLIAMENT, COUNCIL, COMMISSION = "European Parliament", "Council of the European Union", "European Commission"
_ISSUERS = {
    "european parliament and council": (PARLIAMENT, COUNCIL),
    "european parliament and of the council": (PARLIAMENT, COUNCIL),
    "european parliament": (PARLIAMENT,),
    "council": (COUNCIL,),
    "commission": (COMMISSION,),
    "european commission": (COMMISSION,),
    "european central bank": ("European Central Bank",),
}
_MONTHS = {m: i for i, m in enumerate(("january", "february", "march", "april", "may", "june", "july", "august",
                                       "september", "october", "november", "december"), 1)}  # fmt: skip


@dataclass(frozen=True)
class Adoption:
    """Who adopted an act (its issuing institutions, as the EU names them) and the day (ISO date)."""

    issuers: tuple[str, ...]
    date: str | None


def title_adoption(title: str) -> Adoption | None:
    """The issuers and adoption date an EU act's formal title states; None when the title is not
    one (it must open with the act's type and number) or states neither.

    >>> title_adoption("Regulation (EU) 2021/1119 of the European Parliament and of the Council of 30 June 2021 establishing …")
    Adoption(issuers=('European Parliament', 'Council of the European Union'), date='2021-06-30')
    >>> title_adoption("Commission Implementing Regulation (EU) 2019/1842 of 31 October 2019 laying down rules …")
    Adoption(issuers=('European Commission',), date='2019-10-31')
    >>> title_adoption("Proposal for a Regulation of the European Parliament and of the Council") is None
    True
    """
    m = _FORMAL_TITLE.match(title)
    if m is None:
        return None
    who = " ".join((m.group("by") or m.group("prefix") or "").lower().split())
    issuers = _ISSUERS.get(who, ())
    date = None
    if m.group("day") and m.group("month").lower() in _MONTHS:
        try:
            date = dt.date(int(m.group("year")), _MONTHS[m.group("month").lower()], int(m.group("day"))).isoformat()
        except ValueError:  # "of 31 February 2020": no date rather than a wrong one
            date = None
    return Adoption(issuers, date) if issuers or date else None
