"""Naive-KG-RAG, the SPR-RAG paper's knowledge-graph baseline: every extracted triple of the KB is
verbalized as a sentence, embedded, and retrieved by cosine similarity to the question — no parsing,
no linking, no SPARQL.

Registered as retrieval mode ``naive-kg`` in :data:`spr.retrieval.registry.RETRIEVERS`, so ``kb.ask`` and
the harness treat it like any other mode. The triple index is built in memory on first use from
the store; the KB's embedding cache (``<kb>/cache/embed.sqlite``) makes every later build cheap.

Which triples: those in chunk graphs (the extracted relations, attributes and entity types), not
the bookkeeping ``skos:prefLabel``/``skos:altLabel``/``pkb:mentionedIn`` (labels are how the other
triples are verbalized). A triple stated in several chunks is one sentence citing its first chunk.

Budget: a chunk holds many triples, so for ``k`` chunks this retriever returns ``k * per_chunk``
triples; the fusion step then packs them into the same token budget every mode gets.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import TYPE_CHECKING

from pyoxigraph import Literal

from spr.records import Evidence, Fact
from spr.retrieval.base import Retriever, chunk_refs
from spr.verbalize import format_literal, verbalize
from store.vocab import PKB, RDF, SKOS
from store.vocabulary import label_from_iri

if TYPE_CHECKING:
    from core.embed import Embedder
    from spr.retrieval.base import Services
    from store.base import RDFStore
    from store.vectors import VectorIndex

NAME = "naive-kg"
PER_CHUNK = 10

_TRIPLES = (
    f"SELECT ?g ?s ?p ?o WHERE {{ ?g a <{PKB}Chunk> . GRAPH ?g {{ ?s ?p ?o }} "
    f"FILTER(?p NOT IN (<{SKOS}prefLabel>, <{SKOS}altLabel>, <{PKB}mentionedIn>)) }}"
)
_LABELS = f"SELECT ?e ?l WHERE {{ ?e <{SKOS}prefLabel> ?l }}"


def kb_facts(store: RDFStore, term_labels: Mapping[str, str]) -> list[Fact]:
    """Every extracted triple once, with readable labels and all of its chunk graphs (sorted by
    key, so index positions are stable for a given KB)."""
    labels = {row["e"].value: row["l"].value for row in store.select(_LABELS).rows}  # type: ignore[union-attr]
    graphs: dict[tuple[str, str, str], list[str]] = {}
    literal: dict[tuple[str, str, str], bool] = {}
    for row in store.select(_TRIPLES).rows:
        o = row["o"]
        key = (row["s"].value, row["p"].value, o.value)  # type: ignore[union-attr]
        graphs.setdefault(key, []).append(row["g"].value)  # type: ignore[union-attr]
        literal[key] = isinstance(o, Literal)
    facts = []
    for key in sorted(graphs):
        s, p, o = key
        is_literal = literal[key]
        predicate = "is a" if p == RDF + "type" else term_labels.get(p) or label_from_iri(p)
        obj = format_literal(o) if is_literal else labels.get(o) or term_labels.get(o) or label_from_iri(o)
        facts.append(Fact(s, p, o, labels.get(s) or label_from_iri(s), predicate, obj, is_literal, tuple(sorted(graphs[key]))))
    return facts


class NaiveKGRetriever(Retriever):
    """Top ``k * per_chunk`` verbalized triples by cosine similarity to the question."""

    name = NAME

    def __init__(self, store: RDFStore, embedder: Embedder, term_labels: Mapping[str, str] | Callable[[], Mapping[str, str]], per_chunk: int = PER_CHUNK):
        self.store = store
        self.embedder = embedder
        self._labels = term_labels
        self.per_chunk = per_chunk
        self._facts: list[Fact] | None = None
        self._index: VectorIndex | None = None

    def _build(self) -> tuple[list[Fact], VectorIndex]:
        from store.vectors import VectorIndex

        if self._facts is None or self._index is None:
            labels = self._labels() if callable(self._labels) else self._labels
            facts = kb_facts(self.store, labels)
            index = VectorIndex(self.embedder.dimension)
            if facts:
                index.add([str(i) for i in range(len(facts))], self.embedder.embed_many([verbalize(f) for f in facts]))
            self._facts, self._index = facts, index
        return self._facts, self._index

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        facts, index = self._build()
        if not facts:
            return []
        hits = index.search(self.embedder.embed(question), min(len(facts), k * self.per_chunk))[0]
        picked = [(facts[int(h.id)], h.score) for h in hits]
        chunks = chunk_refs(self.store, [f.graphs[0] for f, _ in picked])
        return [
            Evidence("triple", verbalize(f), float(score), self.name, chunk=chunks.get(f.graphs[0]), fact=f) for f, score in picked
        ]


def make_retriever(kb: Services) -> Retriever:
    """The registry's factory: the KB's store and embedder, ontology labels for properties/classes."""
    return NaiveKGRetriever(kb.store, kb.embedder, lambda: kb.term_labels)
