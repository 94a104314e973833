"""Which documents a question names by the words that set their titles apart.

"The first hop" of the rescoring (:mod:`spr.retrieval.rescore`) lifts a candidate whose whole
title the question writes, and cannot lift what is not a candidate: "When was the country that
produced *Fist Power* taken by the British?" names the passage titled "Fist Power" — the first
hop, which shares one word with the question and was not among the 20 candidates (MuSiQue). And
questions name documents more loosely than by whole titles: "What share of Spain's energy …" names
the five NECP sections titled "Spain_National Objectives and Targets_…" by one word; look-alike
documents like those are told apart only by their titles.

A title's *distinctive* words are those few titles share (at most :data:`DISTINCT_SHARE` of them,
and at most :data:`MAX_SHARING`): "spain" in 6 of the 162 plan titles, not "national", "targets" or
"decarbonisation". A question names a document when it holds every distinctive word of its title
("Spain's" → spain). A title with many distinctive words ("Regulation (EU) 2021/1056 establishing
the Just Transition Fund") is named only by a question writing them all, so in most corpora this
names nothing, and :class:`spr.retrieval.rescore.OfflineReranker` pulls in nothing.

A title that follows a pattern many titles share (a word in ≥ :data:`DISTINCT_SHARE` of them:
"…_National Objectives and Targets_…") is one of a family of look-alikes (:attr:`TitleWords.alike`);
the rescoring gives candidates of such a named document the named bonus too
(``[retrieval] rescore_named_alike``: on dev-necp the named country's plan then answers).
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence

from store.base import RDFStore
from store.entity_graph import words
from store.vocab import DCTERMS, PKB

DISTINCT_SHARE = 0.1  # of the titles: a word in more of them names a kind of document ("decarbonisation"), not one
MAX_SHARING = 30  # titles: a word in more of them is not distinctive however large the corpus
# Words that name no document on their own, in titles of any corpus (English; German articles).
_FUNCTION = frozenset(
    "a an and as at by de der die das den des dem und für fur from for in into of on or the to with zu zur zum über uber "
    "von vom im am".split()
)
_TITLES = (
    f"SELECT DISTINCT ?d ?title WHERE {{ ?c <{PKB}partOfDocument> ?d . "
    f"{{ ?d <{DCTERMS}title> ?title }} UNION {{ ?d <{DCTERMS}alternative> ?title }} }}"
)


def _title_words(title: str) -> frozenset[str]:
    # Not numbers: "Article 10" of one act is told apart from another's by the act's name; alone,
    # "10" names the tenth article of every act (and a question's "10^25 FLOPs" would name them).
    return frozenset(w for w in words(title) if len(w) >= 2 and w not in _FUNCTION and not w[0].isdigit())


class TitleWords:
    """The distinctive words of each document's title (document IRI → title), and the documents a
    text names by them.

    >>> titles = {f"doc:{c}-{part}": f"{c}_National Objectives and Targets_{part}"
    ...           for c in ("Spain", "Germany", "Austria", "Portugal", "Italy", "France", "Greece", "Malta", "Latvia", "Poland", "Ireland")
    ...           for part in ("Decarbonisation", "Energy efficiency")}
    >>> sorted(TitleWords(titles).named("How much of Spain's final energy use will be renewable?"))
    ['doc:Spain-Decarbonisation', 'doc:Spain-Energy efficiency']
    >>> TitleWords(titles).named("What does the plan aim for?")
    set()
    >>> laws = {"doc:eeg": ["Gesetz für den Ausbau erneuerbarer Energien", "EEG 2014"], "doc:ksg": ["Bundes-Klimaschutzgesetz", "KSG"]}
    >>> TitleWords(laws).named("What solar capacity does the EEG foresee for 2030?")
    {'doc:eeg'}
    """

    def __init__(self, titles: Mapping[str, str | Sequence[str]]):
        # A document may have several titles (its title and the short ones it is cited by,
        # "EEG 2014"); each names it on its own.
        own = {doc: [_title_words(t) for t in ([title] if isinstance(title, str) else title)] for doc, title in titles.items()}
        sharing: dict[str, int] = {}
        for title_words in own.values():
            for word in frozenset().union(*title_words):
                sharing[word] = sharing.get(word, 0) + 1
        most = min(MAX_SHARING, max(1, int(DISTINCT_SHARE * len(own))))
        self.keys = {doc: [frozenset(w for w in ws if sharing[w] <= most) for ws in wss] for doc, wss in own.items()}
        # A title that follows a pattern many titles share ("…_National Objectives and Targets_…")
        # belongs to a family of look-alike documents, told apart by their titles alone.
        pattern = max(2, DISTINCT_SHARE * len(own))
        self.alike = {doc for doc, wss in own.items() if any(sharing[w] >= pattern for ws in wss for w in ws)}
        self.by_word: dict[str, set[str]] = {}
        for doc, keys in self.keys.items():
            for word in frozenset().union(*keys):
                self.by_word.setdefault(word, set()).add(doc)

    def named(self, text: str) -> set[str]:
        """The documents every distinctive word of one of whose titles ``text`` holds (a title
        without one names nothing)."""
        held = set(words(text))
        found = {doc for word in held for doc in self.by_word.get(word, ())}
        return {doc for doc in found if any(keys and keys <= held for keys in self.keys[doc])}

    def named_alike(self, text: str) -> set[str]:
        """:meth:`named`'s documents of a family of look-alike titles (:attr:`alike`)."""
        return self.named(text) & self.alike


def read_titles(store: RDFStore) -> dict[str, list[str]]:
    """Document IRI → its titles (``dcterms:title`` and the short ones, ``dcterms:alternative``;
    longest first), of the documents that have chunks."""
    out: dict[str, list[str]] = {}
    for row in store.select(_TITLES).rows:
        out.setdefault(row["d"].value, []).append(row["title"].value)  # type: ignore[union-attr]
    return {doc: sorted(titles, key=len, reverse=True) for doc, titles in out.items()}


class StoreTitles:
    """:class:`TitleWords` over a store's titles, read on first use (thread-safe)."""

    def __init__(self, store: RDFStore):
        self.store = store
        self._words: TitleWords | None = None
        self._lock = threading.Lock()

    @property
    def words(self) -> TitleWords:
        with self._lock:
            if self._words is None:
                self._words = TitleWords(read_titles(self.store))
            return self._words

    def named(self, text: str) -> set[str]:
        return self.words.named(text)

    def named_alike(self, text: str) -> set[str]:
        return self.words.named_alike(text)
