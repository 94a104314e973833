"""Legal acts by their identifiers and their short names.

- Identifiers: "Regulation (EU) 2016/679", "Directive 95/46/EC", "Council Directive 84/253/EEC",
  lists such as "Regulations (EC) No 1060/2009, (EU) No 648/2012 and (EU) 2016/1011", CELEX numbers
  ("32016R0679"). An act is identified by its series, year and number (``key``: "regulation
  2016/679"), so every spelling of one act is one key; its label is built from that identity in
  the Official Journal's style of its period.
- Short names (:data:`KNOWN_ACTS`): people name acts as "the GDPR", "the EUDR", "the Net-Zero
  Industry Act" — names the acts' own texts often never write (the Deforestation Regulation's
  text says neither "EUDR" nor "Deforestation Regulation"). A table of the short names of EU acts
  in common use, by CELEX number, lets the indexer label an act with them and the answer side
  tell an act the documents hold from one they do not ("the Digital Markets Act" over a corpus
  without it).

Pure functions over strings, shared by indexing (:mod:`kgpipeline.extract.acts`) and answering
(:mod:`spr.answerable`).
"""

from __future__ import annotations

import functools
import re
from collections.abc import Iterable, Iterator
from dataclasses import dataclass

__all__ = [
    "KNOWN_ACTS", "ActRef", "KnownAct", "NamedAct", "act_from_celex", "act_references", "acts_named", "kind_of_key", "known_act",
    "mentions_act", "with_type_names", "with_unmarked_names",
]  # fmt: skip


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


# --- short names -------------------------------------------------------------------------------------
# (CELEX, names): the name most people use first, then acronyms and other names in common use. An
# all-capitals name (an acronym) matches as written; any other name in any case, hyphens and spaces
# alike. Names that are ordinary words or that name several things are left out ("LIFE", "RED",
# "ETS" alone: "non-ETS sectors" names no act).
_NAMES: tuple[tuple[str, tuple[str, ...]], ...] = (
    # data, digital, cyber
    ("32016R0679", ("General Data Protection Regulation", "GDPR")),
    ("32016L0680", ("Law Enforcement Directive",)),
    ("32018R1725", ("EUDPR",)),
    ("32002L0058", ("ePrivacy Directive", "e-Privacy Directive", "Directive on privacy and electronic communications")),
    ("32024R1689", ("AI Act", "Artificial Intelligence Act")),
    ("32022R2554", ("Digital Operational Resilience Act", "DORA")),
    ("32022L2555", ("NIS2 Directive", "NIS2", "NIS 2 Directive", "NIS 2")),
    ("32016L1148", ("NIS Directive",)),
    ("32024R2847", ("Cyber Resilience Act", "CRA")),
    ("32019R0881", ("Cybersecurity Act",)),
    ("32022R1925", ("Digital Markets Act", "DMA")),
    ("32022R2065", ("Digital Services Act", "DSA")),
    ("32023R2854", ("Data Act",)),
    ("32022R0868", ("Data Governance Act", "DGA")),
    ("32024R1183", ("eIDAS 2", "European Digital Identity Regulation")),
    ("32014R0910", ("eIDAS Regulation", "eIDAS")),
    ("32023R1781", ("Chips Act", "European Chips Act")),
    ("32024R0903", ("Interoperable Europe Act",)),
    ("32024R1083", ("European Media Freedom Act", "EMFA")),
    ("32025R0327", ("European Health Data Space Regulation", "EHDS")),
    ("32019L0882", ("European Accessibility Act",)),
    ("32024L2853", ("Product Liability Directive",)),
    ("32019L1937", ("Whistleblower Directive", "Whistleblowing Directive")),
    ("32017R0745", ("Medical Devices Regulation", "MDR")),
    # finance, reporting
    ("32022L2464", ("Corporate Sustainability Reporting Directive", "CSRD")),
    ("32024L1760", ("Corporate Sustainability Due Diligence Directive", "CSDDD", "CS3D")),
    ("32020R0852", ("Taxonomy Regulation", "EU Taxonomy Regulation")),
    ("32019R2088", ("Sustainable Finance Disclosure Regulation", "SFDR")),
    ("32023R2631", ("European Green Bond Standard", "European Green Bonds Regulation", "EuGBS")),
    ("32023R1114", ("Markets in Crypto-Assets Regulation", "MiCA", "MiCAR")),
    ("32014L0065", ("MiFID II",)),
    ("32014R0600", ("MiFIR",)),
    ("32013R0575", ("Capital Requirements Regulation",)),
    ("32013L0036", ("Capital Requirements Directive",)),
    # climate, energy, environment (the European Green Deal and before)
    ("32021R1119", ("European Climate Law",)),  # not "Climate Law" alone: national climate laws are called so too
    ("32018R0842", ("Effort Sharing Regulation", "ESR")),
    ("32018R0841", ("LULUCF Regulation",)),
    ("32018R1999", ("Governance Regulation", "Energy Union Governance Regulation", "Governance of the Energy Union and Climate Action Regulation")),
    ("32021R1056", ("Just Transition Fund", "JTF Regulation", "JTF")),
    ("32021R0783", ("LIFE Programme", "LIFE Regulation", "LIFE Program")),
    ("32023R1115", ("EU Deforestation Regulation", "Deforestation Regulation", "EUDR", "deforestation-free products regulation")),
    ("32010R0995", ("EU Timber Regulation", "EUTR")),
    ("32023R2405", ("ReFuelEU Aviation", "ReFuelEU Aviation Regulation", "ReFuelEU")),
    ("32023R1805", ("FuelEU Maritime", "FuelEU Maritime Regulation")),
    ("32023R1804", ("Alternative Fuels Infrastructure Regulation", "AFIR")),
    ("32024R1735", ("Net-Zero Industry Act", "NZIA")),
    ("32024R1252", ("Critical Raw Materials Act", "CRMA")),
    ("32024R1781", ("Ecodesign for Sustainable Products Regulation", "ESPR")),
    ("32023R1542", ("Batteries Regulation", "EU Batteries Regulation")),
    ("32024R1991", ("Nature Restoration Law", "Nature Restoration Regulation")),
    ("32024R1787", ("Methane Regulation",)),
    ("32023R0956", ("Carbon Border Adjustment Mechanism Regulation", "CBAM Regulation", "CBAM")),
    ("32023R0955", ("Social Climate Fund Regulation", "Social Climate Fund")),
    ("32003L0087", ("EU ETS Directive", "ETS Directive", "EU Emissions Trading System Directive", "EU ETS")),
    ("32018L2001", ("Renewable Energy Directive", "RED II")),
    ("32023L2413", ("RED III",)),
    ("32023L1791", ("Energy Efficiency Directive", "EED")),
    ("32024L1275", ("Energy Performance of Buildings Directive", "EPBD")),
    ("32019R0943", ("Electricity Regulation",)),
    ("32019L0944", ("Electricity Directive",)),
    ("32003L0096", ("Energy Taxation Directive",)),
    ("32019R0631", ("CO2 Standards Regulation for cars and vans",)),
    ("32019L0904", ("Single-Use Plastics Directive", "SUP Directive")),
    ("32008L0098", ("Waste Framework Directive",)),
    ("32000L0060", ("Water Framework Directive",)),
    ("31992L0043", ("Habitats Directive",)),
    ("32009L0147", ("Birds Directive",)),
    ("32010L0075", ("Industrial Emissions Directive",)),
    ("32006R1907", ("REACH Regulation", "REACH")),
    ("32008R1272", ("CLP Regulation",)),
    # funds and programmes
    ("32021R0241", ("Recovery and Resilience Facility Regulation", "Recovery and Resilience Facility", "RRF")),
    ("32021R0523", ("InvestEU Regulation", "InvestEU Programme", "InvestEU")),
    ("32021R0695", ("Horizon Europe Regulation", "Horizon Europe")),
    ("32021R1153", ("Connecting Europe Facility Regulation", "Connecting Europe Facility")),
)


@dataclass(frozen=True)
class KnownAct:
    """An act by its CELEX number, identity ``key`` (as :func:`act_references` keys it), formal
    ``label`` and short ``names`` (the first the one most people use)."""

    celex: str
    key: str
    label: str
    names: tuple[str, ...]


@dataclass(frozen=True)
class NamedAct:
    """A known act named in a text: the ``act`` and where (``start``, ``end``) and how (``name``)."""

    act: KnownAct
    name: str
    start: int
    end: int


def _known(celex: str, names: tuple[str, ...]) -> KnownAct:
    identity = act_from_celex(celex)
    if identity is None:  # the table holds sector-3 CELEX numbers only
        raise ValueError(f"not a CELEX number of a regulation, directive or decision: {celex}")
    return KnownAct(celex, identity[0], identity[1], with_type_names(with_unmarked_names(names), kind_of_key(identity[0])))


def with_unmarked_names(names: tuple[str, ...]) -> tuple[str, ...]:
    """``names`` and, after them, each name that opens with "European" or "EU" without it when two
    words or more remain: within the Union people drop the mark ("the Climate Law", "the Chips Act").

    >>> with_unmarked_names(("European Climate Law", "EU ETS", "Chips Act", "European Chips Act"))
    ('European Climate Law', 'EU ETS', 'Chips Act', 'European Chips Act', 'Climate Law')
    """
    seen = {n.casefold() for n in names}
    unmarked = [rest for n in names if (rest := re.sub(r"^(?:European|EU)\s+", "", n)) != n and len(rest.split()) >= 2]
    return tuple(dict.fromkeys([*names, *(r for r in unmarked if r.casefold() not in seen)]))


_TYPE_WORDS = ("act", "law", "regulation", "directive", "decision", "standard", "code", "package")


def kind_of_key(key: str) -> str:
    """The act type of an identity key (:func:`act_references`): "Regulation", "Directive" or "Decision".

    >>> kind_of_key("regulation 2021/1056"), kind_of_key("decision no 2022/591")
    ('Regulation', 'Decision')
    """
    return key.split(" ", 1)[0].capitalize()


def with_type_names(names: tuple[str, ...], kind: str) -> tuple[str, ...]:
    """``names`` and, after them, each name followed by the act's type where it does not end in
    one: people write "the Just Transition Fund regulation", "the DORA regulation", "the LIFE
    regulation" for acts whose short names are the fund's, the acronym or the programme's.

    >>> with_type_names(("Just Transition Fund", "JTF Regulation", "DORA", "Chips Act"), "Regulation")
    ('Just Transition Fund', 'JTF Regulation', 'DORA', 'Chips Act', 'Just Transition Fund Regulation', 'DORA Regulation')
    """
    seen = {n.casefold() for n in names}
    typed = [f"{n} {kind}" for n in names if n.split()[-1].casefold().rstrip("s") not in _TYPE_WORDS]
    return tuple(dict.fromkeys([*names, *(t for t in typed if t.casefold() not in seen)]))


#: The short names of EU acts in common use, by CELEX number.
KNOWN_ACTS: tuple[KnownAct, ...] = tuple(_known(celex, names) for celex, names in _NAMES)
_BY_CELEX = {act.celex: act for act in KNOWN_ACTS}


def _name_pattern(name: str) -> str:
    words = [re.escape(w) for w in re.split(r"[\s-]+", name)]
    if not re.search(r"[a-z]", name):  # an acronym ("GDPR", "RED III"): as written, not inside a longer token
        return r"(?<![\w-])" + r"[\s-]+".join(words) + r"(?![\w-])"
    return r"(?i:(?<![\w-])" + r"[\s-]+".join(words) + r"(?!\w))"


# Longest names first, so that "Data Governance Act" is not read as "Data Act" and "NIS2
# Directive" wins over "NIS2"; one alternation, one pass over the text.
_ALL_NAMES = sorted(((name, act) for act in KNOWN_ACTS for name in act.names), key=lambda pair: -len(pair[0]))
_ACT_OF_NAME = {name.casefold(): act for name, act in _ALL_NAMES}
_NAMED = re.compile("|".join(f"(?P<n{i}>{_name_pattern(name)})" for i, (name, _) in enumerate(_ALL_NAMES)))


def known_act(celex: str) -> KnownAct | None:
    """The known act of a CELEX number, or None.

    >>> known_act("32023R1115").names[:3]
    ('EU Deforestation Regulation', 'Deforestation Regulation', 'EUDR')
    """
    return _BY_CELEX.get(celex.strip())


def acts_named(text: str) -> list[NamedAct]:
    """The known acts ``text`` names by a short name, in order (one entry per naming).

    >>> [(n.act.celex, n.name) for n in acts_named("Does the EUDR or the EU Data Act apply, or the Data Governance Act?")]
    [('32023R1115', 'EUDR'), ('32023R2854', 'Data Act'), ('32022R0868', 'Data Governance Act')]
    >>> acts_named("non-ETS sectors, a red light, life on earth, the data acted")
    []
    """
    return list(_named_in(text))


@functools.lru_cache(maxsize=4096)
def _named_in(text: str) -> tuple[NamedAct, ...]:
    # Cached: one answer reads its question's acts several times (premises, focus words, each
    # passage), and the alternation of every known name costs ~1 ms a scan.
    out: list[NamedAct] = []
    for m in _NAMED.finditer(text):
        name = _ALL_NAMES[int(m.lastgroup[1:])][0]  # type: ignore[index]  # every alternative is a named group
        out.append(NamedAct(_ACT_OF_NAME[name.casefold()], m.group(0), m.start(), m.end()))
    return tuple(out)


def mentions_act(act: KnownAct, texts: Iterable[str]) -> bool:
    """Whether any of ``texts`` names ``act``: by one of its short names or by its identifier
    ("Regulation (EU) 2023/1115", in any spelling :func:`act_references` reads).

    >>> eudr = known_act("32023R1115")
    >>> mentions_act(eudr, ["Regulation (EU) 2023/1115 of the European Parliament … on deforestation"])
    True
    >>> mentions_act(eudr, ["the EUDR applies"]), mentions_act(eudr, ["Regulation (EU) 2023/1114 (MiCA)"])
    (True, False)
    """
    names, number = _names_of(act), act.key.rsplit("/", 1)[-1]
    for text in texts:
        if names.search(text):
            return True
        if number in text and any(ref.key == act.key for ref in act_references(text)):
            return True
    return False


@functools.cache
def _names_of(act: KnownAct) -> re.Pattern[str]:
    """One act's names alone: evidence texts are long, and the alternation of every known name
    (:func:`acts_named`, for questions and titles) cost tens of milliseconds per answer over them."""
    return re.compile("|".join(_name_pattern(name) for name in sorted(act.names, key=len, reverse=True)))
