"""Mode ``dual``: SPR-RAG's dual-source context — confident structured facts, then the fused text.

The text half is the fused stage (mode ``hybrid``: BM25 + dense + question bank + graph), so
``dual`` never holds fewer or worse passages than the text stage alone: facts are added in front
of the same k chunks, never in their place. Facts enter only when their confidence
(:mod:`spr.retrieval.confidence`) reaches ``min_confidence``; the trace's note says when facts
were found but withheld.
"""

from __future__ import annotations

from dataclasses import replace

from spr.records import Evidence, Retrieval
from spr.retrieval.base import Retriever


class DualRetriever(Retriever):
    """The structured retriever's confident facts, then the text retriever's chunks."""

    name = "dual"

    def __init__(self, structured: Retriever, text: Retriever, min_confidence: float = 0.0):
        self.structured = structured
        self.text = text
        self.min_confidence = min_confidence

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        facts = self.structured.search(question, k)
        passages = self.text.search(question, k)
        timings = {**dict(facts.trace.timings_ms), **dict(passages.trace.timings_ms)}
        kept = tuple(e for e in facts.evidence if (e.confidence if e.confidence is not None else 1.0) >= self.min_confidence)
        trace = replace(facts.trace, timings_ms=timings)
        if len(kept) < len(facts.evidence):
            best = max((e.confidence or 0.0) for e in facts.evidence)
            trace = replace(
                trace,
                note=f"{len(facts.evidence) - len(kept)} facts withheld: confidence {best:.2f} < {self.min_confidence:.2f}",
            )
            if not kept:  # the query's answers rest on the withheld facts
                trace = replace(trace, answers=(), count=None)
        if passages.trace.note:  # how the text half read the question (a bridge, abbreviations, another language)
            trace = replace(trace, note="; ".join(n for n in (trace.note, passages.trace.note) if n))
        return Retrieval(kept + passages.evidence, trace)
