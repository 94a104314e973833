"""Dense chunk vectors: the signal ``dense`` of the fused stage, and alone the mode ``vector``
(top-k chunks by embedding cosine: traditional RAG, the baseline every other mode is held to)."""

from __future__ import annotations

from collections.abc import Callable
from pathlib import Path
from typing import TYPE_CHECKING

from core.errors import StoreError
from spr.retrieval.fusion import Ranked
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.embed import Embedder
    from store.vectors import VectorIndex

# A long chunk has several window vectors under its IRI (kgpipeline.derived.chunk_vectors), so a
# search fetches more vectors than it returns chunks.
_OVERFETCH = 4


class DenseSignal:
    """Chunks by the cosine of the question and their best-matching window vector."""

    name = "dense"

    def __init__(self, embedder: Embedder, index: VectorIndex | Callable[[], VectorIndex]):
        self.embedder = embedder
        self._index = index  # or a loader, so opening a KB does not read an index it may not use

    @property
    def index(self) -> VectorIndex:
        if callable(self._index):
            self._index = self._index()
        return self._index

    def _checked(self) -> VectorIndex:
        if self.index.dimension != self.embedder.dimension:  # a KB built with another [embed] model
            raise StoreError(
                f"the chunk index holds {self.index.dimension}-d vectors but {self.embedder.model_id.split(':')[1]} "
                f"makes {self.embedder.dimension}-d ones; set [embed] model to the KB's embedder or run `policykb reindex chunks`"
            )
        return self.index

    def similarities(self, question: str, chunks: list[str]) -> dict[str, float]:
        """Cosine of the question with each given chunk's best window (a reranker's dense score)."""
        return self._checked().similarities(self.embedder.embed(question), chunks)

    def rank(self, question: str, depth: int) -> list[Ranked]:
        self._checked()
        best: dict[str, float] = {}
        for hit in self.index.search(self.embedder.embed(question), depth * _OVERFETCH)[0]:
            best.setdefault(hit.id, hit.score)  # hits come best first: the first is the chunk's best window
        return [Ranked(c, s) for c, s in list(best.items())[:depth]]


def load_chunk_index(kb_dir: Path) -> VectorIndex:
    from store.vectors import VectorIndex

    folder = KBLayout(kb_dir).index("chunks")
    try:
        return VectorIndex.load(folder)
    except StoreError:
        raise StoreError(f"no chunk index in {folder}; run `policykb reindex chunks`") from None
