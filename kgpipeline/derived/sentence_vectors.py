"""Derived stage "sentences": the embedding of every sentence of every chunk, computed at ingest.

An extractive answer scores each sentence of the retrieved chunks against the question by
embedding cosine (:mod:`spr.generate`); so does the LLM answer's evidence focus and the citation
check. Embedded at question time, the sentences of three long EU-law articles cost seconds with
all-mpnet-base-v2 on two cores. This stage embeds them once, into the KB's persistent embedding
cache (``<kb>/cache/embed.sqlite``, keyed by model and text), so answering finds them there.

The sentences are the chunk's stored text cut by :func:`core.text.sentence_spans`, exactly the
strings the answer side embeds (``spr.fuse.sentences``). The cache makes unchanged sentences free
when the stage runs again after an ingest. Needs the embedding cache on (``[embed] cache``).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.text import sentence_spans
from store.base import RDFStore
from store.vocab import PKB

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.usage import UsageTracker

NAME = "sentences"
BATCH = 2048
_TEXTS = f"SELECT ?t WHERE {{ ?c <{PKB}text> ?t }}"


def chunk_sentences(text: str) -> list[str]:
    """The sentences (and lines) of a chunk's stored text, as the answer side cuts them."""
    return [text[a:b] for a, b in sentence_spans(text)]


class SentenceVectorStage:
    """Fills the embedding cache with every chunk sentence; writes no index of its own."""

    name = NAME

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        if self.embedder.cache is None:
            return "skipped: the embedding cache is off ([embed] cache), nothing would be kept"
        texts: dict[str, None] = {}
        for row in store.select(_TEXTS).rows:
            for sentence in chunk_sentences(row["t"].value):
                texts.setdefault(sentence)
        pending = list(texts)
        for start in range(0, len(pending), BATCH):  # each batch lands in the cache: a crash keeps it
            self.embedder.embed_many(pending[start : start + BATCH])
        return f"{len(texts)} chunk sentences in the embedding cache in {time.perf_counter() - started:.1f} s"


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> SentenceVectorStage:
    """The stage a configuration describes (``llm_cache`` is unused: no LLM here)."""
    from core.embed import make_embedder
    from store.layout import KBLayout

    return SentenceVectorStage(make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker))
