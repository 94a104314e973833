"""Mode ``vector``: top-k chunks by embedding cosine over the "chunks" index (traditional RAG)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import StoreError
from spr.records import Evidence
from spr.retrieval.base import Retriever, chunk_evidence, chunk_refs
from store.base import RDFStore
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.embed import Embedder
    from store.vectors import VectorIndex


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

    folder = KBLayout(kb_dir).index("chunks")
    try:
        return VectorIndex.load(folder)
    except StoreError:
        raise StoreError(f"no chunk index in {folder}; run `policykb reindex chunks`") from None
