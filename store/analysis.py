"""Text analysis for the keyword index: index terms per language, and German compound splitting.

Two analyzers, chosen per document by its language (:func:`document_language`):

- ``"en"``: case-folded words without stop words, stemmed by the English Snowball stemmer.
- ``"de"``: the same with the German Snowball stemmer ("Anlagen"/"Anlage", "Messsystems"/
  "Messsystem" meet), and each compound word also indexed by its parts (:class:`Decompounder`):
  German writes "Preisobergrenze" where English writes "price cap", so a question that says
  "Obergrenze" or "Preis" — or a translation that picked another compound — still finds it.

Both keep numbers whole and in parts (``2024/1689`` is one term plus ``2024`` and ``1689``;
``50,000``, ``50.000`` and ``50000`` are all ``50000``) and drop the stop words of both languages
(minus German ones that are English content words: "die", "war", ...), so a term never depends on
which analyzer read a number or a stop word.

    >>> analyze("Regulation (EU) 2024/1689: fines of up to EUR 50,000 for operators")
    ['regul', 'eu', '2024/1689', '2024', '1689', 'fine', 'eur', '50000', 'oper']
    >>> analyze("Die Netzbetreiber und die Förderung des Gesetzes")
    ['die', 'netzbetreib', 'die', 'förderung', 'gesetz']
    >>> split = Decompounder({"netz": 5, "betreiber": 3, "preis": 4, "obergrenze": 2})
    >>> analyze("Die Netzbetreiber melden Preisobergrenzen", "de", split)
    ['die', 'netzbetreib', 'netz', 'betreib', 'meld', 'preisobergrenz', 'preis', 'obergrenz']
"""

from __future__ import annotations

import math
import re
from collections import Counter
from collections.abc import Iterable, Mapping
from functools import cache

import Stemmer
from bm25s.stopwords import STOPWORDS_EN_PLUS, STOPWORDS_GERMAN

__all__ = ["LANGUAGES", "Decompounder", "analyze", "document_language", "word_counts"]

LANGUAGES = ("en", "de")  # the languages with an analyzer; anything else is read as English

# German stopwords that are also English content words stay searchable.
_GERMAN_KEPT = {"die", "war", "man", "hat", "bin", "hin", "weg", "also"}
STOPWORDS = frozenset(STOPWORDS_EN_PLUS) | (frozenset(STOPWORDS_GERMAN) - _GERMAN_KEPT)

# A run of letters/digits; after a digit, "." "," "/" followed by digits continue the token.
_TOKEN = re.compile(r"[^\W_]+(?:(?<=\d)[.,/]\d+)*")
_THOUSANDS = re.compile(r"\d{1,3}(?:,\d{3})+|\d{1,3}(?:\.\d{3})+")
_SEPARATOR = re.compile(r"[.,/]")
_LETTERS = re.compile(r"[^\W\d_]+")
_STEMMER_NAMES = {"en": "english", "de": "german"}

# German linking elements ("Fugen") between the parts of a compound, longest first:
# "Bundes|regierung", "Energie|ausweis", "Sonne|n|energie", "Arbeit|s|markt".
_LINKS = ("ens", "es", "en", "er", "s", "n", "e", "")
_ENDINGS = ("ern", "en", "er", "es", "n", "s", "e")  # inflection of the last part: "Grenze|n"
# Stop words are prefixes when glued to a word ("über|führung", "unter|bunden"); "-innen" is the
# feminine plural ("Vertreter|innen"), not a word.
_NOT_PARTS = STOPWORDS | {"innen"}
MIN_PART = 4  # shorter parts ("ab", "ver", "ein") are affixes more often than words
MIN_COUNT = 2  # a part must occur this often as a word of its own in the corpus
MAX_PARTS = 4
MIN_GERMAN_STOPWORDS = 10  # fewer: too short a text to tell
MEMO_WORDS = 200_000


@cache
def _stemmer(language: str) -> Stemmer.Stemmer:
    return Stemmer.Stemmer(_STEMMER_NAMES.get(language, "english"))


class Decompounder:
    """Splits German compounds into words the corpus itself uses on their own.

    The frequency method of Koehn & Knight (2003, "Empirical methods for compound splitting"):
    of all ways to cut a word into parts that occur as words of their own (each at least
    :data:`MIN_PART` letters, at least :data:`MIN_COUNT` times, with a linking element between
    them; the last part may carry an inflection, "…grenze|n"), take the one whose parts'
    geometric-mean frequency is highest, and keep the word whole when it is itself more frequent
    than that (a lexicalized word such as "Energieausweis" in a law about them). The index keeps the
    whole word's term beside the parts', so a split only adds ways to find it. ``counts`` are
    case-folded surface words of the corpus (:func:`word_counts`). Pure and deterministic; results
    are memoized per word (up to :data:`MEMO_WORDS`, then the memo starts over).
    """

    def __init__(self, counts: Mapping[str, int]):
        self.counts = {w: n for w, n in counts.items() if n >= MIN_COUNT and len(w) >= MIN_PART and w not in _NOT_PARTS}
        self._memo: dict[str, tuple[str, ...]] = {}

    def __len__(self) -> int:
        return len(self.counts)

    def split(self, word: str) -> tuple[str, ...]:
        """The parts of ``word`` (case-folded, in order), or ``()`` when it is not a compound.

        >>> Decompounder({"energie": 9, "ausweis": 3}).split("Energieausweis")
        ('energie', 'ausweis')
        >>> Decompounder({"sonne": 4, "energie": 9}).split("sonnenenergie")
        ('sonne', 'energie')
        >>> Decompounder({"preis": 4, "obergrenze": 2}).split("Preisobergrenzen")
        ('preis', 'obergrenze')
        >>> Decompounder({"energie": 9}).split("Energieausweis")
        ()
        >>> Decompounder({"energie": 9, "ausweis": 3, "energieausweis": 50}).split("Energieausweis")
        ()
        """
        word = word.casefold()
        if len(word) < 2 * MIN_PART or not word.isalpha():
            return ()
        if word not in self._memo:
            if len(self._memo) >= MEMO_WORDS:  # a long-running server sees ever new query words
                self._memo.clear()
            parts, _ = self._best(word, MAX_PARTS)
            self._memo[word] = parts if len(parts) > 1 else ()
        return self._memo[word]

    def _final(self, part: str) -> tuple[str, int]:
        """``part`` as a known word, itself or without an inflection ending, with its count."""
        if part in self.counts:
            return part, self.counts[part]
        for ending in _ENDINGS:
            base = part[: -len(ending)]
            if part.endswith(ending) and base in self.counts:
                return base, self.counts[base]
        return "", 0

    def _best(self, word: str, budget: int) -> tuple[tuple[str, ...], float]:
        """The best cut of ``word`` into at most ``budget`` known parts and its score (the parts'
        geometric-mean count; 0 when no cut exists)."""
        best: tuple[tuple[str, ...], float] = ((), 0.0)
        known, count = self._final(word)
        if known:
            best = ((known,), float(count))
        if budget < 2:
            return best
        for cut in range(MIN_PART, len(word) - MIN_PART + 1):
            head = word[:cut]
            if head not in self.counts:
                continue
            for link in _LINKS:
                rest = word[cut:]
                if not rest.startswith(link) or len(rest) - len(link) < MIN_PART:
                    continue
                tail_parts, tail_score = self._best(rest[len(link) :], budget - 1)
                if not tail_parts:
                    continue
                parts = (head, *tail_parts)
                # geometric mean over all parts: log-mean of the head's count and the tail's parts
                log_mean = (math.log(self.counts[head]) + len(tail_parts) * math.log(tail_score)) / len(parts)
                score = math.exp(log_mean)
                if score > best[1]:
                    best = (parts, score)
        return best


def word_counts(texts: Iterable[str]) -> Counter[str]:
    """Case-folded letter-only words of ``texts`` with their counts (what :class:`Decompounder`
    reads)."""
    counts: Counter[str] = Counter()
    for text in texts:
        counts.update(_LETTERS.findall(text.casefold()))
    return counts


def document_language(text: str) -> str:
    """``"de"`` when German stop words clearly outnumber English ones in ``text`` (its first
    2,000 words: at least :data:`MIN_GERMAN_STOPWORDS` and 1.5 times as many), else ``"en"`` —
    so an English paragraph about a German film ("Kauf dir einen bunten Luftballon is a 1961 West
    German film directed by …") stays English.

    >>> document_language("Der Netzbetreiber hat die Anlage unverzüglich an das Netz anzuschließen, "
    ...                   "wenn sie den Anforderungen entspricht und der Betreiber dies bei ihm verlangt.")
    'de'
    >>> document_language("Kauf dir einen bunten Luftballon is a 1961 West German film directed by Géza von Cziffra.")
    'en'
    >>> document_language("The operator shall connect the installation to the grid without delay.")
    'en'
    """
    from core.keywords import language_shares

    shares = language_shares(text)
    german, english = shares.get("de", 0), shares.get("en", 0)
    return "de" if german >= MIN_GERMAN_STOPWORDS and german > 1.5 * english else "en"


def analyze(text: str, language: str = "en", decompounder: Decompounder | None = None) -> list[str]:
    """The index terms of ``text`` in order (documents and queries alike); see the module
    docstring. ``decompounder`` adds, for German, the parts of each compound after its term."""
    words: list[str] = []
    numbers: list[tuple[int, list[str]]] = []  # (position in words, terms): not stemmed
    for token in _TOKEN.findall(text.casefold()):
        if token.isalnum():  # no separator: a word (or a plain number)
            if token not in STOPWORDS:
                words.append(token)
            continue
        if _THOUSANDS.fullmatch(token):
            terms = [_SEPARATOR.sub("", token)]
        else:
            compound = token.replace(",", ".")
            terms = [compound, *(part for part in _SEPARATOR.split(token) if part)]
        numbers.append((len(words), terms))
    stemmer = _stemmer(language)
    stemmed: list[list[str]] = [[term] for term in stemmer.stemWords(words)] if words else []
    if language == "de" and decompounder is not None:
        for i, word in enumerate(words):
            parts = decompounder.split(word)
            if parts:
                stemmed[i].extend(stemmer.stemWords(list(parts)))
    out: list[str] = []
    at = 0
    for position, terms in numbers:
        out.extend(term for group in stemmed[at:position] for term in group)
        out.extend(terms)
        at = position
    out.extend(term for group in stemmed[at:] for term in group)
    return out
