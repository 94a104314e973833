"""FAISS vector index with an id map: exact search, the HNSW switch, save/load."""

from __future__ import annotations

import numpy as np
import pytest

from core.errors import InputError, StoreError
from store.vectors import VectorIndex


def unit(rows: np.ndarray) -> np.ndarray:
    return (rows / np.linalg.norm(rows, axis=1, keepdims=True)).astype(np.float32)


def test_exact_search_returns_cosine_best_first():
    index = VectorIndex(3)
    index.add(["x", "y", "xy"], unit(np.array([[1, 0, 0], [0, 1, 0], [1, 1, 0]], dtype=np.float32)))
    hits = index.search(unit(np.array([[1, 0.1, 0]], dtype=np.float32)), 2)[0]
    assert [h.id for h in hits] == ["x", "xy"]
    assert hits[0].score == pytest.approx(1 / np.sqrt(1.01), rel=1e-5)


def test_switches_to_hnsw_and_keeps_ids(tmp_path):
    rng = np.random.default_rng(0)
    vectors = unit(rng.normal(size=(300, 16)).astype(np.float32))
    index = VectorIndex(16, approximate_above=100)
    index.add([f"v{i}" for i in range(300)], vectors)
    assert not index.exact
    hits = index.search(vectors[:20], 1)
    assert sum(h[0].id == f"v{i}" for i, h in enumerate(hits)) >= 19  # HNSW recall, not exactness
    index.save(tmp_path / "idx")
    again = VectorIndex.load(tmp_path / "idx")
    assert again.ids == index.ids and again.search(vectors[:1], 1)[0][0].id == "v0"


def test_bad_input_is_reported(tmp_path):
    index = VectorIndex(4)
    with pytest.raises(InputError):
        index.add(["a"], np.zeros((1, 3), dtype=np.float32))
    with pytest.raises(InputError):
        index.add(["a", "b"], np.zeros((1, 4), dtype=np.float32))
    assert index.search(np.zeros(4, dtype=np.float32), 3) == [[]]
    with pytest.raises(StoreError):
        VectorIndex.load(tmp_path / "missing")


def test_embed_index_slices_by_length_and_keeps_each_text_with_its_id(tmp_path):
    """Slices reach the embedder (and its cache) one by one, shortest texts first; every id gets
    the vector of its own text."""
    from core.cache import EmbeddingCache
    from core.embed import SentenceTransformerEmbedder
    from store.vectors import embed_index

    class Counting(SentenceTransformerEmbedder):  # the real embedder, its calls recorded
        def __init__(self, *args, **kwargs):
            super().__init__(*args, **kwargs)
            self.calls: list[list[str]] = []

        def embed_many(self, texts):
            self.calls.append(list(texts))
            return super().embed_many(texts)

    texts = ["a much longer sentence about offshore wind permits", "wind", "grid fees", "carbon price floor", "x y"]
    ids = [f"e{i}" for i in range(len(texts))]
    embedder = Counting(None, cache=EmbeddingCache(tmp_path / "cache.sqlite"))  # None: all-MiniLM-L6-v2
    index = embed_index(embedder, ids, texts, slice_size=2)
    assert [len(c) for c in embedder.calls] == [2, 2, 1]
    flat = [t for call in embedder.calls for t in call]
    assert [len(t) for t in flat] == sorted(len(t) for t in texts)
    for id_, text in zip(ids, texts):
        assert np.allclose(index.vectors(id_)[0], embedder.embed(text), atol=1e-5)
    again = Counting(None, cache=EmbeddingCache(tmp_path / "cache.sqlite"))
    rebuilt = embed_index(again, ids, texts, slice_size=2)
    assert again._model is None  # every slice came from the cache: the model was never loaded
    assert np.allclose(rebuilt.vectors("e0"), index.vectors("e0"))
