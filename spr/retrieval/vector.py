"""Dense vectors: the signal ``dense`` of the fused stage, and alone the mode ``vector`` (top-k
chunks by embedding cosine: traditional RAG, the baseline every other mode is held to); and the
signal ``sentences``, the same search over one vector per chunk sentence (multi-vector retrieval:
a chunk scores by its best sentence, kgpipeline.derived.sentence_vectors)."""

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
    """Chunks by the cosine of the question and their best-matching vector: a window of the chunk
    (``dense``, the ``chunks`` index) or one of its sentences (``sentences``, the ``sentences`` index)."""

    def __init__(self, embedder: Embedder, index: VectorIndex | Callable[[], VectorIndex], name: str = "dense", reindex: str = "chunks"):
        self.embedder = embedder
        self._index = index  # or a loader, so opening a KB does not read an index it may not use
        self.name = name
        self.reindex = reindex  # the `policykb reindex` target that builds the index

    @property
    def index(self) -> VectorIndex:
        if callable(self._index):
            self._index = self._index()
        return self._index

    def _checked(self) -> VectorIndex:
        if self.index.dimension != self.embedder.dimension:  # a KB built with another [embed] model
            raise StoreError(
                f"the {self.reindex} index holds {self.index.dimension}-d vectors but {self.embedder.model_id.split(':')[1]} "
                f"makes {self.embedder.dimension}-d ones; set [embed] model to the KB's embedder or run `policykb reindex {self.reindex}`"
            )
        return self.index

    def similarities(self, question: str, chunks: list[str]) -> dict[str, float]:
        """Cosine of the question with each given chunk's best vector (a reranker's dense score)."""
        return self._checked().similarities(self.embedder.embed(question), chunks)

    def rank(self, question: str, depth: int) -> list[Ranked]:
        self._checked()
        query = self.embedder.embed(question)
        fetch = depth * _OVERFETCH
        while True:
            hits = self.index.search(query, fetch)[0]
            best: dict[str, float] = {}
            for hit in hits:
                best.setdefault(hit.id, hit.score)  # hits come best first: the first is the chunk's best vector
            if len(best) >= depth or len(hits) < fetch:  # enough chunks, or the whole index was read
                break
            fetch *= 4  # many vectors of few chunks (long chunks, many sentences each): read deeper
        return [Ranked(c, s) for c, s in list(best.items())[:depth]]


def load_chunk_index(kb_dir: Path) -> VectorIndex:
    return _load(kb_dir, "chunks", "chunk")


def load_sentence_index(kb_dir: Path) -> VectorIndex:
    return _load(kb_dir, "sentences", "sentence")


def _load(kb_dir: Path, name: str, what: str) -> VectorIndex:
    from store.vectors import VectorIndex

    folder = KBLayout(kb_dir).index(name)
    try:
        return VectorIndex.load(folder)
    except StoreError:
        raise StoreError(f"no {what} index in {folder}; run `policykb reindex {name}`") from None
