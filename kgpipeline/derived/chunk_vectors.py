"""Derived stage "chunks": one embedding per chunk, in ``<kb>/indexes/chunks/`` (FAISS + id map).

The traditional-RAG baseline (``policykb ask --mode vector``) searches this index; comparing it with
the structured and question-bank modes is the point of having it. Vectors embed the chunk text as
stored (``pkb:text``); ids are chunk IRIs, so a hit resolves to its text, offsets and document in
the store. Rebuilt from scratch on every run (the embedding cache makes unchanged chunks free).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from store.base import RDFStore
from store.layout import KBLayout
from store.vocab import PKB

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.usage import UsageTracker

NAME = "chunks"

_CHUNKS = f"SELECT ?c ?text WHERE {{ ?c a <{PKB}Chunk> ; <{PKB}text> ?text }} ORDER BY ?c"


class ChunkVectorStage:
    """Embeds every chunk of the KB. The embedder is injected and loads its model on first use."""

    name = NAME

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.vectors import VectorIndex

        started = time.perf_counter()
        rows = store.select(_CHUNKS).rows
        ids = [row["c"].value for row in rows]  # type: ignore[union-attr]
        texts = [row["text"].value for row in rows]  # type: ignore[union-attr]
        index = VectorIndex(self.embedder.dimension)
        if ids:
            index.add(ids, self.embedder.embed_many(texts))
        index.save(KBLayout(kb_dir).index(NAME))
        return f"{len(ids)} chunks embedded in {time.perf_counter() - started:.1f} s"


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> ChunkVectorStage:
    """The stage a configuration describes (``llm_cache`` is unused: no LLM here)."""
    from core.embed import make_embedder

    return ChunkVectorStage(make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker))
