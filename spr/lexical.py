"""Word-level matching shared by answer selection and citation checking: content words (stop
words dropped, crudely stemmed) and rarity-weighted overlap. Pure functions."""

from __future__ import annotations

import math
import re
from collections.abc import Iterable, Sequence

from core.text import stem

_STOP = frozenset(
    "a an and are as at be by can de did do does for from has have how i in is it its of on or "
    "shall should that the their there these this those to was were what when where which who "
    "whom whose why will with would under per than into any all much many not no".split()
)
_WORD = re.compile(r"[A-Za-z0-9]+(?:[.,][0-9]+)*")


def content_words(text: str) -> list[str]:
    """Lower-cased words without stop words, crudely stemmed (:func:`core.text.stem`: "targets" →
    "target", "registering" → "register"): enough for overlap between a question and a sentence."""
    return [stem(word) for word in _WORD.findall(text.lower()) if word not in _STOP]


def lexical_scores(question: str, candidates: Sequence[str], optional: Iterable[str] = ()) -> list[float]:
    """Share of the question's content words found in each candidate, each word weighted by its
    inverse frequency among the candidates (a word every candidate has tells little). In [0, 1].

    ``optional`` content words count only where some candidate has them: the words an asker tells
    their case in ("a former customer", "in the middle of a lawsuit") are theirs, not the law's, and
    a word no candidate has would lower every score alike.

    >>> question, law = "A former customer sued our firm. Must personal data be erased?", ["Personal data shall be erased.", "Fines apply."]
    >>> [round(s, 2) for s in lexical_scores(question, law)]
    [0.25, 0.0]
    >>> [round(s, 2) for s in lexical_scores(question, law, ["customer", "firm", "former", "our", "sued"])]
    [0.67, 0.0]
    """
    terms = set(content_words(question))
    if not terms or not candidates:
        return [0.0] * len(candidates)
    bags = [set(content_words(c)) for c in candidates]
    n = len(bags)
    spare = set(optional)
    terms = {t for t in terms if t not in spare or any(t in b for b in bags)}
    weight = {t: math.log(1 + n / (1 + sum(t in b for b in bags))) + 0.1 for t in terms}
    total = sum(weight.values())
    return [sum(weight[t] for t in terms if t in bag) / total for bag in bags]
