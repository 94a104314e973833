"""Abbreviations the documents define, and the other form of one a question uses.

Policy texts define an abbreviation once and then write it everywhere: "the Just Transition Fund
(JTF)" and 200 times "the JTF"; "sustainable aviation fuels (SAF)" and 100 times "SAF". A reader
asks with either form. Word matching (BM25) finds only the form the question wrote, so a question
about "sustainable aviation fuel" misses the passages that say "SAF".

:func:`definitions` finds the definitions in a text with the algorithm of Schwartz & Hearst
(2003, "A simple algorithm for identifying abbreviation definitions in biomedical text"): a
short form in parentheses after its long form ("long form (SF)"), or the long form in
parentheses after the short form ("SF (long form)"); the long form is the shortest run of the
preceding words, at most min(|SF| + 5, 2·|SF|), in which the short form's letters occur in order,
its first letter starting a word. :class:`Abbreviations` collects a corpus's definitions and says,
for a question that spells one out, which short form to add (:meth:`Abbreviations.expansions`).

Pure functions over strings; the keyword index mines its texts and expands its queries
(:mod:`store.keyword_index`).
"""

from __future__ import annotations

import re
from collections import Counter
from collections.abc import Iterable, Mapping, Sequence

__all__ = ["Abbreviations", "definitions"]

MAX_LONG_FORMS = 3  # per short form: "NRP" is the National Reform and the National Research Programme

_PAREN = re.compile(r"\(\s*([^()]{1,120}?)\s*\)")
_QUOTES = "‘’'\"“”"
_SHORT = re.compile(r"[A-Za-z][A-Za-z0-9&/-]{1,9}")
_ROMAN = re.compile(r"[IVXLC]+")
_WORD = re.compile(r"[\w’'-]+")
_SENTENCE_END = re.compile(r"[.;:!?]\s|\n\s*\n")
# "Regulation (EU) 2021/1119", "Directive (EU) No 1093/2010": an act's series, not a definition.
_IDENTIFIER_AFTER = re.compile(r"\s*(?:No\.?\s*)?\d")


def _is_short_form(text: str) -> bool:
    """2-10 characters, a letter first, mostly capitals and two at least ("JTF", "NOx", "MiCA",
    "CSIRTs", "R&D"; not "GIS-Daten"), not a Roman numeral."""
    letters = [c for c in text if c.isalpha()]
    capitals = sum(c.isupper() for c in letters)
    return bool(_SHORT.fullmatch(text)) and capitals >= 2 and 2 * capitals > len(letters) and not _ROMAN.fullmatch(text)


def _long_form(short: str, before: str) -> str | None:
    """The Schwartz-Hearst long form of ``short`` at the end of ``before``, as written, or None."""
    letters = [c.lower() for c in short if c.isalnum()]
    words = list(_WORD.finditer(before))
    if not letters or not words:
        return None
    text = before[words[-min(len(letters) + 5, 2 * len(letters), len(words))].start() :].rstrip()
    low = text.lower()
    s, i = len(letters) - 1, len(low) - 1
    while s >= 0:
        c = letters[s]
        # the first letter must start a word; the others may be anywhere to its right
        while i >= 0 and (low[i] != c or (s == 0 and i > 0 and low[i - 1].isalnum())):
            i -= 1
        if i < 0:
            return None
        i -= 1
        s -= 1
    start = max(low.rfind(" ", 0, i + 1), low.rfind("\n", 0, i + 1)) + 1
    found = " ".join(text[start:].split()).strip(" ,-" + _QUOTES)
    if len(found.split()) < 2 or "(" in found or ")" in found or re.search(rf"(?<![a-z]){re.escape(_base(short).lower())}s?(?![a-z])", found.lower()):
        return None  # one word ("Regulation (EU)"), another parenthesis, or the short form itself ("non-SME traders (SME)")
    return found


def _normal(text: str) -> str:
    """Lower-cased words without a plural "s", space-joined: how long forms are compared."""
    words = re.findall(r"[a-z0-9]+", text.lower().replace("’", "'"))
    return " ".join(w[:-1] if len(w) > 3 and w.endswith("s") and not w.endswith("ss") else w for w in words)


def _base(short: str) -> str:
    """"CSIRTs" → "CSIRT": a plural ``s`` after a capital is not part of the abbreviation."""
    return short[:-1] if len(short) > 2 and short.endswith("s") and short[-2].isupper() else short


def definitions(text: str) -> list[tuple[str, str]]:
    """The abbreviations ``text`` defines, as (short form, long form) in text order.

    >>> definitions("support from the Just Transition Fund (JTF) for coal regions")
    [('JTF', 'Just Transition Fund')]
    >>> definitions("the ETS (emissions trading system) and land use, land-use change and forestry (‘LULUCF’)")
    [('ETS', 'emissions trading system'), ('LULUCF', 'land use, land-use change and forestry')]
    >>> definitions("Regulation (EU) 2021/1119 and point (a) of Annex (IV)")
    []
    """
    out: list[tuple[str, str]] = []
    for match in _PAREN.finditer(text):
        inner = match.group(1).strip(_QUOTES + " ")
        sentence_start = 0
        for end in _SENTENCE_END.finditer(text, max(0, match.start() - 400), match.start()):
            sentence_start = end.end()
        before = text[max(sentence_start, match.start() - 400) : match.start()]
        if _is_short_form(inner) and not _IDENTIFIER_AFTER.match(text, match.end()):
            found = _long_form(inner, before)
            if found:
                out.append((_base(inner), found))
        elif len(inner.split()) >= 2 and (prev := _WORD.findall(before)) and _is_short_form(prev[-1]):
            found = _long_form(prev[-1], inner)
            if found and _normal(found) == _normal(inner):  # the whole parenthesis spells it out
                out.append((_base(prev[-1]), found))
    return out


class Abbreviations:
    """A corpus's abbreviations: short form → its long forms, the most often defined first
    (at most :data:`MAX_LONG_FORMS`). Immutable once built."""

    def __init__(self, forms: Mapping[str, Sequence[str]] | None = None):
        self.forms: dict[str, tuple[str, ...]] = {k: tuple(v) for k, v in (forms or {}).items()}
        shorts = sorted(self.forms, key=lambda s: (-len(s), s))
        # one pass over the question for every short form; a hyphen may join it ("non-ETS")
        self._shorts = re.compile(rf"(?<![A-Za-z0-9])({'|'.join(map(re.escape, shorts))})s?(?![A-Za-z0-9])") if shorts else None
        self._longs = [(short, f" {_normal(long)} ") for short, longs in self.forms.items() for long in longs]

    @classmethod
    def from_texts(cls, texts: Iterable[str]) -> Abbreviations:
        counts: dict[str, Counter[str]] = {}
        written: dict[str, str] = {}  # normalized long form -> its first spelling
        for text in texts:
            for short, long in definitions(text):
                key = _normal(long)
                written.setdefault(key, long.lower())
                counts.setdefault(short, Counter())[key] += 1
        return cls({
            short: [written[k] for k, _ in sorted(c.items(), key=lambda kv: (-kv[1], kv[0]))[:MAX_LONG_FORMS]]
            for short, c in sorted(counts.items())
        })

    def __len__(self) -> int:
        return len(self.forms)

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Abbreviations) and self.forms == other.forms

    def to_json(self) -> dict[str, list[str]]:
        return {short: list(longs) for short, longs in self.forms.items()}

    @classmethod
    def from_json(cls, data: object) -> Abbreviations:
        if not isinstance(data, dict) or not all(
            isinstance(k, str) and k and isinstance(v, list) and all(isinstance(x, str) for x in v) for k, v in data.items()
        ):
            # types only: a table read by an earlier rule for short forms still loads
            raise ValueError("abbreviations must map short forms to lists of strings")
        return cls(data)

    def expansions(self, question: str) -> list[str]:
        """The short forms to add to ``question``: that of each long form it writes (any case,
        plural-insensitive) and does not abbreviate itself.

        Only this way round: a document writes the short form once it has defined it, so a reader
        who spells it out misses those passages. A short form's long forms mostly occur in the
        definitions themselves; added to "the AI Act's bans", "artificial intelligence" drew
        passages that spell it out ahead of the asked article (docs/retrieval.md "Abbreviations").

        >>> a = Abbreviations({"ETS": ["emissions trading system"], "SAF": ["sustainable aviation fuels"]})
        >>> a.expansions("What share of sustainable aviation fuel?"), a.expansions("Outside the emissions trading systems?")
        (['SAF'], ['ETS'])
        >>> a.expansions("How far must non-ETS emissions fall?"), a.expansions("The ETS (emissions trading system)?")
        ([], [])
        """
        words = f" {_normal(question)} "
        written = {m.group(1) for m in self._shorts.finditer(question)} if self._shorts else set()
        return list(dict.fromkeys(short for short, long in self._longs if short not in written and long in words))
