"""One retriever interface, the retrieval modes as adapters, and the registry that names them.

A :class:`Retriever` has one required method, ``retrieve(question, k) -> list[Evidence]``;
``search`` adds the trace (S-expression, SPARQL, linked entities) where a retriever has one. Modes:

- ``spr``: structured only — the semantic parsing retriever's triples (verbalized), each with its
  provenance chunk;
- ``k``: the question bank only — chunks whose generated questions match the question;
- ``dual``: both, facts first (SPR-RAG's dual-source context);
- ``vector``: plain chunk retrieval over the "chunks" index — the traditional-RAG baseline.

A new strategy is one class and one line in :data:`RETRIEVERS`; ``KnowledgeBase.ask(mode=...)``
picks it up without an API change. No retriever calls an LLM.
"""

from __future__ import annotations

import time
from abc import ABC, abstractmethod
from collections.abc import Callable, Iterable, Mapping
from dataclasses import replace
from pathlib import Path
from typing import TYPE_CHECKING, Protocol

from pyoxigraph import NamedNode

from policykb.errors import StoreError
from spr.records import ChunkRef, Evidence, Fact, LinkedEntity, Retrieval, Trace
from spr.verbalize import format_literal, verbalize
from store.base import RDFStore
from store.vocab import DCTERMS, PKB

if TYPE_CHECKING:
    from policykb.config import Config
    from policykb.embed import Embedder
    from spr.question_bank import QuestionBankRetriever
    from spr.retriever import SemanticParsingRetriever, SPRResult
    from store.vectors import VectorIndex


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
        return Retrieval(evidence, Trace(timings_ms={self.name: _ms(started)}))


# --- chunks from the store ---------------------------------------------------------------------------
def chunk_refs(store: RDFStore, iris: Iterable[str]) -> dict[str, ChunkRef]:
    """Text, offsets and document of the given chunks, in one query. Unknown IRIs are absent."""
    unique = sorted({i for i in iris if i})
    if not unique:
        return {}
    values = " ".join(str(NamedNode(i)) for i in unique)
    rows = store.select(
        f"SELECT ?c ?text ?start ?end ?doc ?title WHERE {{ VALUES ?c {{ {values} }} "
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


# --- vector: the traditional-RAG baseline ---------------------------------------------------------
class VectorRetriever(Retriever):
    """Top-k chunks by cosine similarity of question and chunk embeddings."""

    name = "vector"

    def __init__(self, store: RDFStore, embedder: Embedder, index: VectorIndex | Callable[[], VectorIndex]):
        self.store = store
        self.embedder = embedder
        self._index = index  # or a loader, so opening a KB does not read an index it may not use

    @property
    def index(self) -> VectorIndex:
        if callable(self._index):
            self._index = self._index()
        return self._index

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        hits = self.index.search(self.embedder.embed(question), k)[0]
        chunks = chunk_refs(self.store, [h.id for h in hits])
        return [chunk_evidence(chunks[h.id], h.score, self.name) for h in hits if h.id in chunks]


def load_chunk_index(kb_dir: Path) -> VectorIndex:
    from store.vectors import VectorIndex

    folder = Path(kb_dir) / "indexes" / "chunks"
    try:
        return VectorIndex.load(folder)
    except StoreError:
        raise StoreError(f"no chunk index in {folder}; run `policykb reindex chunks`") from None


# --- k: the question bank -------------------------------------------------------------------------
class QuestionBankAdapter(Retriever):
    """Chunks found through their latent questions (``spr.question_bank.QuestionBankRetriever``)."""

    name = "k"

    def __init__(self, bank: QuestionBankRetriever):
        self.bank = bank

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return [
            chunk_evidence(ChunkRef(h.chunk, h.document, h.title, h.start, h.end, h.text), h.score, self.name, h.questions)
            for h in self.bank.retrieve(question, k=k)
        ]


# --- spr: the semantic parsing retriever ----------------------------------------------------------
class SPRAdapter(Retriever):
    """Triples of ``spr.retriever.SemanticParsingRetriever``, verbalized, each with the first of its
    provenance chunks the store resolves. They score 1.0: a query over the KB returned them."""

    name = "spr"

    def __init__(self, spr: SemanticParsingRetriever, store: RDFStore, property_labels: Mapping[str, str]):
        self.spr = spr
        self.store = store
        self.property_labels = property_labels

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        result = self.spr.retrieve(question)
        facts = [_readable(f, self.property_labels) for f in result.triples]
        chunks = chunk_refs(self.store, [g for f in facts for g in f.graphs])
        evidence = tuple(
            Evidence("triple", verbalize(f), 1.0, self.name, chunk=next((chunks[g] for g in f.graphs if g in chunks), None), fact=f)
            for f in facts
        )
        return Retrieval(evidence, spr_trace(result, _ms(started)))


def _readable(fact: Fact, property_labels: Mapping[str, str]) -> Fact:
    """Ontology labels for properties (the SPR may fall back to local names) and literal values
    written as a person would ("2030-12-31" → "31 December 2030")."""
    label = property_labels.get(fact.predicate) or fact.predicate_label
    value = format_literal(fact.object) if fact.object_is_literal else fact.object_label
    return replace(fact, predicate_label=label, object_label=value)


def spr_trace(result: SPRResult, ms: float) -> Trace:
    linked = tuple(
        LinkedEntity(e.label, e.entity, e.name, e.score, e.similarity, e.weight) for e in result.entities
    )
    answers = tuple(a.label or a.value for a in result.answers)
    timings = {f"spr.{name}": float(v) for name, v in result.timings_ms.items()}
    timings["spr"] = ms
    return Trace(
        sexpr=result.grounded,
        parse=result.sexpr,
        sparql=result.sparql,
        linked=linked,
        answers=answers,
        count=result.count,
        note=result.note,
        timings_ms=timings,
    )


# --- dual: structured + question bank -------------------------------------------------------------
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


# --- registry -------------------------------------------------------------------------------------
class Services(Protocol):
    """What retriever factories may use; ``spr.qa.KnowledgeBase`` provides it, loading lazily."""

    config: Config
    store: RDFStore

    @property
    def embedder(self) -> Embedder: ...

    @property
    def property_labels(self) -> Mapping[str, str]: ...

    def retriever(self, mode: str) -> Retriever: ...


def _spr(kb: Services) -> Retriever:
    from spr.retriever import SemanticParsingRetriever

    spr = SemanticParsingRetriever(kb.store, kb.embedder, kb.config.kb_dir, kb.config.spr)
    return SPRAdapter(spr, kb.store, kb.property_labels)


def _bank(kb: Services) -> Retriever:
    from spr.question_bank import QuestionBankRetriever

    return QuestionBankAdapter(QuestionBankRetriever(kb.config.kb_dir, kb.embedder, kb.store))


def _vector(kb: Services) -> Retriever:
    return VectorRetriever(kb.store, kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))


def _dual(kb: Services) -> Retriever:
    return DualRetriever(kb.retriever("spr"), kb.retriever("k"))


# mode name -> factory(services). Add a strategy with one line here.
RETRIEVERS: dict[str, Callable[[Services], Retriever]] = {
    "dual": _dual,
    "spr": _spr,
    "k": _bank,
    "vector": _vector,
    "naive-kg": lambda kb: __import__("spr.eval.naive_kg", fromlist=["make_retriever"]).make_retriever(kb),  # every triple verbalized, vector-retrieved (baseline)
}


def _ms(started: float) -> float:
    return (time.perf_counter() - started) * 1000.0
