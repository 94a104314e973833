"""An optional LLM reranker over a text retriever's first ``top_n`` candidates (``[retrieval] rerank``).

Each candidate is one yes/no question to the [llm] model — "Does the passage help answer the
question?" — and is scored by :meth:`core.llm.LLM.yes_probability`, P(yes) / (P(yes) + P(no)) of
the first answer token. Candidates are ordered by that score (ties keep the first-stage order) and
the top ``k`` returned, each with ``("rerank", r)`` appended to its ``ranks`` and the score as its
``score``. The prompt puts the question first, so the embedded model reuses the question's KV cache
across the passages of one question.

A model that is down (or cannot return log-probabilities) does not fail retrieval: the first-stage
order is kept and the trace's note says why.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import replace

from core.errors import ModelError
from core.llm.base import LLM
from core.text import reading_text
from spr.records import Evidence, Retrieval
from spr.retrieval.base import Retriever, elapsed_ms

PROMPT = "Question: {question}\nPassage: {passage}\nDoes the passage help answer the question? Answer yes or no."


def rerank_prompt(question: str, passage: str, max_words: int = 300) -> str:
    """The one user message asked per candidate; the passage (without source markup) cut to
    ``max_words`` words.

    >>> print(rerank_prompt("Who?", "#### Article 1\\nAlice signs the act today.", max_words=3))
    Question: Who?
    Passage: Article 1 Alice …
    Does the passage help answer the question? Answer yes or no.
    """
    words = reading_text(passage).split()
    cut = " ".join(words[:max_words]) + (" …" if len(words) > max_words else "")
    return PROMPT.format(question=question.strip(), passage=cut)


def rerank_order(scores: Sequence[float]) -> list[int]:
    """Indices by descending score; equal scores keep their first-stage order.

    >>> rerank_order([0.2, 0.9, 0.2, 0.5])
    [1, 3, 0, 2]
    """
    return sorted(range(len(scores)), key=lambda i: (-scores[i], i))


class LLMReranker(Retriever):
    """``inner``'s first ``top_n`` (at least ``k``) candidates, reordered by the LLM's P(yes).

    ``llm``: the model, or a callable that returns it (so a KB loads its model only when a
    question is reranked). The name stays the inner retriever's (the mode is still e.g. "hybrid");
    timings gain "rerank" beside the inner ones.
    """

    def __init__(self, inner: Retriever, llm: LLM | Callable[[], LLM], *, top_n: int = 10, passage_words: int = 300):
        if top_n < 1:
            raise ValueError("top_n must be at least 1")
        self.inner = inner
        self.name = inner.name
        self._llm = llm
        self.top_n = top_n
        self.passage_words = passage_words

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        first = self.inner.search(question, max(k, self.top_n))
        candidates = first.evidence
        started = time.perf_counter()
        note = ""
        try:
            llm = self._llm if isinstance(self._llm, LLM) else self._llm()
            scores = [
                llm.yes_probability(rerank_prompt(question, e.text, self.passage_words), max_tokens=1)
                for e in candidates
            ]
        except ModelError as exc:
            evidence = list(candidates[:k])
            note = f"rerank skipped, first-stage order kept: {exc}"
        else:
            evidence = [
                replace(candidates[i], score=scores[i], ranks=(*candidates[i].ranks, ("rerank", r)))
                for r, i in enumerate(rerank_order(scores)[:k], 1)
            ]
        timings = {**dict(first.trace.timings_ms), "rerank": elapsed_ms(started)}
        notes = "; ".join(n for n in (first.trace.note, note) if n)
        return Retrieval(tuple(evidence), replace(first.trace, note=notes, timings_ms=timings))
