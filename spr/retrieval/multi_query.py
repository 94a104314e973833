"""More searches for some questions, interleaved with the question's own ranking: the step that
comparisons (:mod:`spr.retrieval.choices`: one search per option) and bridge questions
(:mod:`spr.retrieval.bridges`: the description, then the question with what it found) share.
A subclass says which questions get which searches (:meth:`MultiQueryRetriever.more`); other
questions pass through unchanged, at no cost.
"""

from __future__ import annotations

import time
from abc import abstractmethod
from collections.abc import Sequence
from dataclasses import replace

from spr.records import Evidence, Retrieval
from spr.retrieval.base import Retriever, elapsed_ms

Searches = list[tuple[str, Sequence[Evidence]]]  # (label shown in the evidence's ranks, ranking)


def interleave(main: Sequence[Evidence], others: Sequence[tuple[str, Sequence[Evidence]]], k: int) -> list[Evidence]:
    """Round-robin over the question's ranking and each other search's (label, ranking), without
    repeats, cut to ``k``. An item another search found gains ``(its label, rank there)``; the
    signals' ranks it shows are the question's own search's (none when only another search found
    it: ranks in another search would read as the question's).

    >>> from spr.records import Evidence
    >>> e = lambda t: Evidence("chunk", t, 0.0, "hybrid", ranks=(("bm25", 1),))
    >>> out = interleave([e("a"), e("b")], [("option 'x'", [e("b"), e("c")]), ("option 'y'", [e("d")])], 4)
    >>> [(i.text, i.ranks) for i in out]
    [('a', (('bm25', 1),)), ('b', (('bm25', 1), ("option 'x'", 1))), ('d', (("option 'y'", 1),)), ('c', (("option 'x'", 2),))]
    """
    order: list[str] = []
    items: dict[str, Evidence] = {}
    in_main = {e.key: e for e in main}
    lists = [("", list(main))] + [(label, list(r)) for label, r in others]
    for rank in range(max((len(r) for _, r in lists), default=0)):
        for label, ranking in lists:
            if rank >= len(ranking):
                continue
            item = ranking[rank]
            if item.key not in items:
                order.append(item.key)
                items[item.key] = in_main.get(item.key) or replace(item, ranks=())
            if label:
                items[item.key] = replace(items[item.key], ranks=(*items[item.key].ranks, (label, rank + 1)))
    return [items[key] for key in order[:k]]


class MultiQueryRetriever(Retriever):
    """``inner`` for the question, then the searches :meth:`more` asks for, interleaved
    (:func:`interleave`); their time is the trace's ``timing`` entry and :meth:`more`'s note joins
    the trace's."""

    timing = "more"

    def __init__(self, inner: Retriever):
        self.inner = inner
        self.name = inner.name

    @abstractmethod
    def more(self, question: str, k: int) -> tuple[Searches, str] | None:
        """The labelled rankings of the further searches and a note on them, or None for none."""

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        first = self.inner.search(question, k)
        started = time.perf_counter()
        found = self.more(question, k)
        if found is None:
            return first
        others, note = found
        timings = {**dict(first.trace.timings_ms), self.timing: elapsed_ms(started)}
        trace = replace(first.trace, note="; ".join(n for n in (first.trace.note, note) if n), timings_ms=timings)
        return Retrieval(tuple(interleave(first.evidence, others, k)), trace)
