"""Vector indexes: FAISS over L2-normalized float32 vectors, with a string id per vector.

Scores are inner products of normalized vectors, i.e. cosine similarity in [-1, 1], higher is more
similar. An exact flat index is used up to ``approximate_above`` vectors, HNSW beyond (exact
search stops being cheap there; HNSW keeps recall high without training). Saved as two files in
one folder: ``index.faiss`` and ``ids.json``; a save goes through temporary names and renames, so
a crash never leaves an index that disagrees with its id map.
"""

from __future__ import annotations

import json
import os
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import faiss
import numpy as np

from core.errors import InputError, StoreError

if TYPE_CHECKING:
    from core.embed import Embedder

INDEX_FILE = "index.faiss"
IDS_FILE = "ids.json"


@dataclass(frozen=True)
class Hit:
    """One search result: ``score`` is cosine similarity in [-1, 1], higher is more similar."""

    id: str
    score: float


class VectorIndex:
    def __init__(self, dimension: int, approximate_above: int = 200_000, hnsw_m: int = 32):
        if dimension <= 0:
            raise InputError("vector dimension must be positive")
        self.dimension = dimension
        self.approximate_above = approximate_above
        self.hnsw_m = hnsw_m
        self._ids: list[str] = []
        self._index: faiss.Index = faiss.IndexFlatIP(dimension)
        self._rows: dict[str, list[int]] | None = None  # id -> its rows, built on first similarities()
        self._rows_len = 0

    def __len__(self) -> int:
        return len(self._ids)

    @property
    def ids(self) -> tuple[str, ...]:
        return tuple(self._ids)

    @property
    def exact(self) -> bool:
        return isinstance(self._index, faiss.IndexFlat)

    def add(self, ids: list[str], vectors: np.ndarray) -> None:
        vectors = self._check(vectors)
        if len(ids) != vectors.shape[0]:
            raise InputError(f"{len(ids)} ids for {vectors.shape[0]} vectors")
        if len(self._ids) + len(ids) > self.approximate_above and self.exact:
            self._to_hnsw()
        self._index.add(vectors)
        self._ids.extend(ids)

    def search(self, queries: np.ndarray, k: int) -> list[list[Hit]]:
        """Top-k hits per query row, best first."""
        queries = self._check(queries)
        if not self._ids or k <= 0:
            return [[] for _ in range(queries.shape[0])]
        scores, rows = self._index.search(queries, min(k, len(self._ids)))
        return [
            [Hit(self._ids[r], float(s)) for s, r in zip(score_row, row) if r >= 0]
            for score_row, row in zip(scores, rows)
        ]

    def similarities(self, query: np.ndarray, ids: list[str]) -> dict[str, float]:
        """Cosine of ``query`` with the given ids' vectors (an id with several vectors — a long
        chunk's windows — gets its best); ids not in the index are absent. Exact, for a few ids."""
        query = self._check(query)[0]
        out = {}
        for i in ids:
            vectors = self.vectors(i)
            if len(vectors):
                out[i] = float((vectors @ query).max())
        return out

    def vectors(self, id_: str) -> np.ndarray:
        """The vectors stored under ``id_`` (a long chunk has several), shape (n, dimension); n = 0 if absent."""
        if self._rows is None or self._rows_len != len(self._ids):  # ids are only ever appended
            rows: dict[str, list[int]] = {}
            for row, i in enumerate(self._ids):
                rows.setdefault(i, []).append(row)
            self._rows, self._rows_len = rows, len(self._ids)
        rows_i = self._rows.get(id_, [])
        if not rows_i:
            return np.zeros((0, self.dimension), dtype=np.float32)
        return np.vstack([self._index.reconstruct(r) for r in rows_i])

    def save(self, folder: Path) -> None:
        folder = Path(folder)
        folder.mkdir(parents=True, exist_ok=True)
        tmp_index, tmp_ids = folder / (INDEX_FILE + ".tmp"), folder / (IDS_FILE + ".tmp")
        faiss.write_index(self._index, str(tmp_index))
        tmp_ids.write_text(json.dumps({"dimension": self.dimension, "ids": self._ids}), encoding="utf-8")
        os.replace(tmp_index, folder / INDEX_FILE)
        os.replace(tmp_ids, folder / IDS_FILE)

    @classmethod
    def load(cls, folder: Path) -> VectorIndex:
        folder = Path(folder)
        if not (folder / INDEX_FILE).is_file() or not (folder / IDS_FILE).is_file():
            raise StoreError(f"no vector index in {folder}")
        meta = json.loads((folder / IDS_FILE).read_text(encoding="utf-8"))
        index = cls(int(meta["dimension"]))
        index._index = faiss.read_index(str(folder / INDEX_FILE))
        index._ids = list(meta["ids"])
        if index._index.ntotal != len(index._ids):
            raise StoreError(f"vector index in {folder} has {index._index.ntotal} vectors for {len(index._ids)} ids")
        return index

    def _check(self, vectors: np.ndarray) -> np.ndarray:
        vectors = np.ascontiguousarray(vectors, dtype=np.float32)
        if vectors.ndim == 1:
            vectors = vectors.reshape(1, -1)
        if vectors.ndim != 2 or vectors.shape[1] != self.dimension:
            raise InputError(f"expected vectors of dimension {self.dimension}, got shape {vectors.shape}")
        return vectors

    def _to_hnsw(self) -> None:
        hnsw = faiss.IndexHNSWFlat(self.dimension, self.hnsw_m, faiss.METRIC_INNER_PRODUCT)
        if self._index.ntotal:
            hnsw.add(self._index.reconstruct_n(0, self._index.ntotal))
        self._index = hnsw


def embed_index(embedder: Embedder, ids: list[str], texts: list[str], slice_size: int = 256) -> VectorIndex:
    """A new index of ``texts`` embedded by ``embedder``, one vector per id.

    The texts go to the embedder ``slice_size`` at a time, shortest first (batches of like
    lengths, as :meth:`~core.embed.Embedder.embed_many` makes them), so each slice reaches the
    embedding cache as soon as it is done: a build of minutes that is interrupted resumes from
    the cache. Cached texts need no model: the dimension comes from the vectors (asking the
    embedder for it would load the model)."""
    if len(ids) != len(texts):
        raise InputError(f"{len(ids)} ids for {len(texts)} texts")
    if not ids:
        return VectorIndex(embedder.dimension)
    order = sorted(range(len(texts)), key=lambda i: len(texts[i]))
    step = max(1, slice_size)
    slices = [order[s : s + step] for s in range(0, len(order), step)]
    by_length = np.concatenate([np.asarray(embedder.embed_many([texts[i] for i in rows]), dtype=np.float32) for rows in slices])
    vectors = np.empty_like(by_length)
    vectors[order] = by_length  # row order[j] gets the j-th shortest text's vector
    index = VectorIndex(vectors.shape[1])
    index.add(ids, vectors)
    return index
