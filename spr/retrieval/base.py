"""The retriever interface, the chunk lookups every text mode shares, and what factories may use.

A :class:`Retriever` has one required method, ``retrieve(question, k) -> list[Evidence]``;
``search`` adds the trace (S-expression, SPARQL, linked entities) where a retriever has one.
No retriever calls an LLM, except the optional reranker (:mod:`spr.retrieval.rerank`) and the LLM hop
(:mod:`spr.retrieval.hop`), both off by default. The modes are registered in :mod:`spr.retrieval.registry`.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Iterable, Mapping
from typing import TYPE_CHECKING, Protocol

from spr.records import ChunkRef, Evidence, Retrieval, Trace
from store.base import RDFStore
from store.vocab import DCTERMS, PKB, values_clause

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder


class Retriever(ABC):
    """Finds evidence for a question. ``k``: how many text chunks (structured retrievers return
    every triple their query yields; fusion packs them)."""

    name: str = ""

    @abstractmethod
    def retrieve(self, question: str, k: int) -> list[Evidence]:
        """Ranked evidence, best first."""

    def search(self, question: str, k: int) -> Retrieval:
        """Evidence with the trace of how it was found (empty for retrievers without one)."""
        started = time.perf_counter()
        evidence = tuple(self.retrieve(question, k))
        return Retrieval(evidence, Trace(timings_ms={self.name: elapsed_ms(started)}))


# --- chunks from the store ---------------------------------------------------------------------------
def chunk_refs(store: RDFStore, iris: Iterable[str]) -> dict[str, ChunkRef]:
    """Text, offsets and document of the given chunks, in one query. Unknown IRIs are absent."""
    unique = sorted({i for i in iris if i})
    if not unique:
        return {}
    rows = store.select(
        f"SELECT ?c ?text ?start ?end ?doc ?title WHERE {{ {values_clause('c', unique)} "
        f"?c <{PKB}text> ?text ; <{PKB}partOfDocument> ?doc . "
        f"OPTIONAL {{ ?c <{PKB}startOffset> ?start }} OPTIONAL {{ ?c <{PKB}endOffset> ?end }} "
        f"OPTIONAL {{ ?doc <{DCTERMS}title> ?title }} }}"
    ).rows
    out: dict[str, ChunkRef] = {}
    for row in rows:
        iri, text = row["c"].value, row["text"].value  # type: ignore[union-attr]
        start = int(row["start"].value) if row.get("start") is not None else 0  # type: ignore[union-attr]
        end = int(row["end"].value) if row.get("end") is not None else start + len(text)  # type: ignore[union-attr]
        title = row["title"].value if row.get("title") is not None else ""  # type: ignore[union-attr]
        out.setdefault(iri, ChunkRef(iri, row["doc"].value, title, start, end, text))  # type: ignore[union-attr]
    return out


def chunk_evidence(chunk: ChunkRef, score: float, source: str, matched: tuple[str, ...] = ()) -> Evidence:
    return Evidence("chunk", chunk.text, float(score), source, chunk=chunk, matched=matched)


class Services(Protocol):
    """What retriever factories may use; ``spr.qa.KnowledgeBase`` provides it, loading lazily."""

    config: Config
    store: RDFStore

    @property
    def embedder(self) -> Embedder: ...

    @property
    def property_labels(self) -> Mapping[str, str]: ...

    @property
    def term_labels(self) -> Mapping[str, str]: ...

    @property
    def language(self) -> str:
        """ISO code of the language most of the KB's documents are written in."""
        ...

    def retriever(self, mode: str) -> Retriever: ...


def elapsed_ms(started: float) -> float:
    """Milliseconds since ``started`` (a ``time.perf_counter()`` reading)."""
    return (time.perf_counter() - started) * 1000.0
