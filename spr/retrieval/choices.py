"""Evidence for every option of a comparison (``[retrieval] choices``, on by default).

"Which country plans to stop burning coal earlier, Germany or Greece?" needs Germany's plan and
Greece's; one search for the whole question ranks the option its words favour and may leave the
other out of the top k. For a question :func:`spr.choices.choice` reads as a choice, the inner
retriever also searches once per option (:meth:`spr.choices.Choice.about`: the option and the
question's other words, less those that ask or compare: "Greece plans to stop burning coal"), and the
rankings are interleaved: the question's first, each option's first, the question's second, each
option's second, … without repeats. A passage placed by an option's search gains
``("option 'Greece'", rank)`` in its ``ranks`` (shown by ``--explain``). Other questions pass
through unchanged, at no cost.

This is multi-query retrieval (query decomposition for comparison questions, as in
decomposition-based QA over HotpotQA's comparison questions) without a model: the options are read
from the question's wording.
"""

from __future__ import annotations

import time
from collections.abc import Sequence
from dataclasses import replace

from spr.choices import choice
from spr.records import Evidence, Retrieval
from spr.retrieval.base import Retriever, elapsed_ms


def option_label(option: str) -> str:
    """The ``ranks`` name of an option's search: ``option 'Greece'``."""
    return f"option '{option}'"


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


class ChoiceRetriever(Retriever):
    """``inner`` for the question, and for a choice question once more per option (the question
    about that option alone), interleaved (:func:`interleave`)."""

    def __init__(self, inner: Retriever):
        self.inner = inner
        self.name = inner.name

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        first = self.inner.search(question, k)
        found = choice(question)
        if found is None:
            return first
        started = time.perf_counter()
        per_option = [(option_label(option), self.inner.search(found.about(i), k).evidence) for i, option in enumerate(found.options)]
        timings = {**dict(first.trace.timings_ms), "options": elapsed_ms(started)}
        note = "a choice: searched for " + ", ".join(option_label(o).removeprefix("option ") for o in found.options) + " too"
        trace = replace(first.trace, note="; ".join(n for n in (first.trace.note, note) if n), timings_ms=timings)
        return Retrieval(tuple(interleave(first.evidence, per_option, k)), trace)
