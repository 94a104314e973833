"""Dense vectors: the signal ``dense`` of the fused stage, and alone the mode ``vector`` (top-k
chunks by embedding cosine: traditional RAG, the baseline every other mode is held to); and the
signal ``sentences``, the same search over one vector per chunk sentence (multi-vector retrieval:
a chunk scores by its best sentence, kgpipeline.derived.sentence_vectors)."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.errors import StoreError
from spr.retrieval.fusion import Fused, Ranked
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
        return self.rank_vector(self.embedder.embed(question), depth)

    def rank_vector(self, query: np.ndarray, depth: int) -> list[Ranked]:
        """Chunks by the cosine of ``query`` (a normalized vector) and their best vector."""
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


class FeedbackSignal:
    """Dense pseudo-relevance feedback (Rocchio, 1971, in embedding space; cf. ANCE-PRF): the
    question vector moved towards the first stage's top ``passages`` chunks — each by its window
    closest to the question — ``q' = q + beta · mean(top)``, normalized, then searched like
    ``dense``. A question about a bridge entity ("the director of the film that …") finds the
    passage that names it; the moved query then also reaches passages about that entity. Runs after
    the other signals (it needs their fused ranking); without one it abstains."""

    name = "prf"
    second_stage = True

    def __init__(self, dense: DenseSignal, passages: int = 3, beta: float = 0.5):
        self.dense = dense
        self.passages = passages
        self.beta = beta

    def rank(self, question: str, depth: int, first: Sequence[Fused] = ()) -> list[Ranked]:
        top = [f.chunk for f in first[: self.passages]]
        if not top or self.passages < 1:
            return []
        index = self.dense._checked()
        query = self.dense.embedder.embed(question)
        found = [vs[int(np.argmax(vs @ query))] for vs in (index.vectors(c) for c in top) if len(vs)]
        if not found:
            return []
        moved = query + self.beta * np.mean(found, axis=0)
        return self.dense.rank_vector((moved / np.linalg.norm(moved)).astype(np.float32), depth)


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
