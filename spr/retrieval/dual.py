"""Mode ``dual``: SPR-RAG's dual-source context — structured facts first, then text chunks."""

from __future__ import annotations

from dataclasses import replace

from spr.records import Evidence, Retrieval
from spr.retrieval.base import Retriever


class DualRetriever(Retriever):
    """SPR-RAG's dual source: the structured retriever's facts, then the text retriever's chunks."""

    name = "dual"

    def __init__(self, structured: Retriever, text: Retriever):
        self.structured = structured
        self.text = text

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        facts = self.structured.search(question, k)
        passages = self.text.search(question, k)
        timings = {**dict(facts.trace.timings_ms), **dict(passages.trace.timings_ms)}
        return Retrieval(facts.evidence + passages.evidence, replace(facts.trace, timings_ms=timings))
