"""Graph expansion, HippoRAG-style (Gutiérrez et al., 2024): the signal ``graph`` of the fused stage.

The KB's entity–chunk graph has a node per entity, per chunk and per document. An entity is
joined to every chunk that mentions it (``pkb:mentionedIn``) and to every entity it has an
extracted relation with; a document to its chunks, and to every chunk of another document that
names it by its title (a cross-reference: "... under the Climate Law", a Wikipedia passage naming
another article). The entities and documents named in the question seed a personalized PageRank,
each weighted by its specificity (1 / degree, so "Commission" counts less than "Just Transition
Fund"); chunks rank by their PageRank mass. A chunk two hops away — through a shared entity or a
cross-reference — is so found although it shares no words with the question: the multi-hop case.

The graph is loaded on first use and kept (igraph): from the derived index ``graph`` that ingest
writes (:mod:`store.entity_graph`), or read from the store when the KB has none or its indexes are
stale. A KB without entities, or a question that names none, gives an empty ranking and the other
signals decide.
"""

from __future__ import annotations

import threading
from collections.abc import Mapping, Sequence
from pathlib import Path

from core.config import RetrievalConfig
from spr.retrieval.fusion import Fused, Ranked
from store.base import RDFStore
from store.entity_graph import GraphData, open_graph, words

__all__ = ["EntityGraph", "GraphSignal"]


class EntityGraph:
    """Entity, chunk and document nodes with mention, relation and cross-reference edges
    (:class:`store.entity_graph.GraphData`), as an igraph graph, and a surface-form lookup.
    ``source``: "index" (the saved derived index) or "store" (read from the store)."""

    def __init__(self, data: GraphData, source: str = "store"):
        import igraph as ig

        self.data = data
        self.source = source
        self.names = data.names
        self.labels = data.labels
        self.chunk_ids = data.chunk_ids
        self.documents = data.documents
        self.chunks_of = data.chunks_of
        self.graph = ig.Graph(n=len(self.labels), edges=data.edges, directed=False)
        self.degree = dict(zip(self.labels, self.graph.degree(), strict=True))

    @classmethod
    def read(cls, store: RDFStore) -> EntityGraph:
        """The graph read from the store now."""
        return cls(GraphData.read(store), "store")

    @classmethod
    def open(cls, store: RDFStore, kb_dir: str | Path | None) -> EntityGraph:
        """The KB's saved graph when it covers the store, else read from the store
        (:func:`store.entity_graph.open_graph`)."""
        data, source = open_graph(store, kb_dir)
        return cls(data, source)

    def documents_named(self, text: str) -> set[str]:
        """The documents ``text`` names by their title: its cross-references (the edges above)."""
        return {node for node in self.data.named(words(text)) if node in self.documents}

    def seeds(self, question: str) -> dict[str, float]:
        """Entities and documents named in ``question`` → specificity weight (1 / their degree:
        a node joined to few chunks says more about where the answer is)."""
        return {node: 1.0 / max(1, self.degree.get(node, 1)) for node in self.data.named(words(question)) if node in self.names}

    def rank_chunks(self, seeds: Mapping[str, float], damping: float, depth: int) -> list[Ranked]:
        if not seeds:
            return []
        reset = [0.0] * len(self.labels)
        for entity, weight in seeds.items():
            reset[self.names[entity]] = weight
        scores: Sequence[float] = self.graph.personalized_pagerank(directed=False, damping=damping, reset=reset)
        chunks = [(scores[i], label) for i, label in enumerate(self.labels) if label in self.chunk_ids and scores[i] > 0]
        chunks.sort(key=lambda x: (-x[0], x[1]))
        return [Ranked(c, s) for s, c in chunks[:depth]]


class GraphSignal:
    """Chunks by personalized PageRank from the question's entities over the KB graph."""

    name = "graph"
    second_stage = True  # runs after the other signals, seeded by their fused top chunks

    def __init__(self, store: RDFStore, config: RetrievalConfig, kb_dir: str | Path | None = None):
        self.store = store
        self.kb_dir = kb_dir  # where the saved graph is (None: always read from the store)
        self.damping = config.ppr_damping
        self.seed_passages = config.graph_seed_passages
        self._graph: EntityGraph | None = None
        self._lock = threading.Lock()

    @property
    def graph(self) -> EntityGraph:
        if self._graph is None:
            with self._lock:
                if self._graph is None:
                    self._graph = EntityGraph.open(self.store, self.kb_dir)
        return self._graph

    def rank(self, question: str, depth: int, first: Sequence[Fused] = ()) -> list[Ranked]:
        """PageRank from the entities named in ``question`` and — HippoRAG 2's passage seeds —
        the first stage's top ``seed_passages`` chunks; each group's seed weights sum to 1
        (passages in proportion to their first-stage score)."""
        graph = self.graph
        seeds = _normalized(graph.seeds(question))
        passages = {f.chunk: f.score for f in first[: self.seed_passages] if f.chunk in graph.names}
        for chunk, weight in _normalized(passages).items():
            seeds[chunk] = seeds.get(chunk, 0.0) + weight
        return graph.rank_chunks(seeds, self.damping, depth)


def _normalized(weights: Mapping[str, float]) -> dict[str, float]:
    total = sum(weights.values())
    return {k: v / total for k, v in weights.items()} if total > 0 else {}
