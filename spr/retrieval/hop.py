"""LLM hops for multi-hop questions (``[retrieval] llm_hops``, off by default).

A multi-hop question names its later passages only by a description — "the first president of the
association which published *Journal of Psychotherapy Integration*". The first round finds the
journal's passage, which names the American Psychological Association; the association's own
passage shares almost no words with the question. Interleaving retrieval with a model's reading
(IRCoT, Trivedi et al. 2023; ITER-RETGEN, Shao et al. 2023) closes that gap: the [llm] model reads
the first round's top ``passages`` and writes one sentence naming what the question's descriptions
refer to ("The journal is published by the American Psychological Association."); the second round
searches with the question and that sentence. ``hops`` > 1 repeats the step: the model reads the
new ranking and the next round searches with all the sentences.

The result keeps the first round's top ``keep`` chunks (one by default: the first hop's passage,
which the hop query ranks lower since it leans towards the next one), then the last round's
ranking. A chunk a later round placed gains ``("hop", r)`` in its ``ranks``; the trace's note shows
the sentences. A model that is down, or an empty reply, leaves the earlier rounds; the note says why.
Measured (docs/retrieval.md "Optional LLM hops"): multi-hop sets gain, the policy dev sets lose at @5.
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

SYSTEM = (
    "A question may name something only by a description, such as 'the composer of X' or 'the country "
    "where Y is'. Using the passages, write one short sentence that names what such a description refers "
    "to, exactly as the passages name it (for example: 'X was composed by Z.'). Do not answer the rest of "
    "the question."
)
MAX_TOKENS = 48  # one sentence; a longer reply drifts into answering the question


def hop_messages(question: str, passages: Sequence[str], words: int = 120) -> list[dict[str, str]]:
    """The chat asked once per question: numbered passages (without source markup, each cut to
    ``words`` words), then the question.

    >>> hop_messages("Who?", ["#### Title\\nAlice met Bob in Rome."], words=4)[1]["content"]
    'Passages:\\n[1] Title Alice met Bob\\n\\nQuestion: Who?\\nFacts:'
    """
    numbered = "\n\n".join(f"[{i}] " + " ".join(reading_text(p).split()[:words]) for i, p in enumerate(passages, 1))
    return [
        {"role": "system", "content": SYSTEM},
        {"role": "user", "content": f"Passages:\n{numbered}\n\nQuestion: {question.strip()}\nFacts:"},
    ]


def merge_rounds(first: Sequence[Evidence], second: Sequence[Evidence], keep: int, k: int) -> list[Evidence]:
    """The first round's top ``keep``, then the second round's order without repeats, cut to ``k``;
    a chunk placed by the second round gains ``("hop", rank in the second round)``."""
    out = list(first[:keep])
    seen = {e.key for e in out}
    for rank, e in enumerate(second, 1):
        if len(out) >= k:
            break
        if e.key not in seen:
            seen.add(e.key)
            out.append(replace(e, ranks=(*e.ranks, ("hop", rank))))
    for e in first[keep:]:  # a short second round: the first fills up
        if len(out) >= k:
            break
        if e.key not in seen:
            seen.add(e.key)
            out.append(e)
    return out


class LLMHopRetriever(Retriever):
    """``inner`` for the question, then ``hops`` more times for the question and the sentences the
    LLM wrote so far, each written from the current ranking's top ``passages`` (a 3-hop question
    needs the second sentence to name the third passage's subject). ``llm``: the model, or a
    callable returning it (a KB loads its model on the first question)."""

    def __init__(
        self, inner: Retriever, llm: LLM | Callable[[], LLM], *, hops: int = 1, passages: int = 5, keep: int = 1, passage_words: int = 120,
    ):
        if hops < 1 or passages < 1 or keep < 0:
            raise ValueError("hops and passages must be at least 1, keep at least 0")
        self.inner = inner
        self.name = inner.name
        self._llm = llm
        self.hops = hops
        self.passages = passages
        self.keep = keep
        self.passage_words = passage_words

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        depth = max(k, self.passages)  # each round ranks enough for the next read
        first = self.inner.search(question, depth)
        ranking, sentences, notes = list(first.evidence), [], [first.trace.note]
        timings = dict(first.trace.timings_ms)
        for hop in range(1, self.hops + 1):
            label = "LLM hop" if self.hops == 1 else f"LLM hop {hop}"
            kept = "first round" if hop == 1 else "earlier rounds"
            started = time.perf_counter()
            try:
                llm = self._llm if isinstance(self._llm, LLM) else self._llm()
                messages = hop_messages(question, [e.text for e in ranking[: self.passages]], self.passage_words)
                sentence = " ".join(llm.complete(messages, max_tokens=MAX_TOKENS, temperature=0.0).text.split())
            except ModelError as exc:
                notes.append(f"{label} skipped, {kept} kept: {exc}")
                break
            finally:
                timings["hop"] = timings.get("hop", 0.0) + elapsed_ms(started)
            if not sentence:
                notes.append(f"{label}: the model wrote nothing, {kept} kept")
                break
            sentences.append(sentence)
            notes.append(f"{label}: {sentence}")
            again = self.inner.search(" ".join([question.strip(), *sentences]), depth)
            timings["second round" if hop == 1 else f"round {hop + 1}"] = dict(again.trace.timings_ms).get(self.name, 0.0)
            ranking = merge_rounds(first.evidence, again.evidence, self.keep, depth)
        trace = replace(first.trace, note="; ".join(n for n in notes if n), timings_ms=timings)
        return Retrieval(tuple(ranking[:k]), trace)
