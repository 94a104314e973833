"""Derived stage "chunks": dense vectors of every chunk, in ``<kb>/indexes/chunks/`` (FAISS + id map).

What is embedded is the retrieval unit's :attr:`store.units.Unit.index_text` — heading path plus
the chunk text without markup. A unit longer than the embedder's window is not cut at the
window (the model would silently drop its tail): it is embedded as overlapping word windows, one
vector each, all under the chunk's IRI; a search scores a chunk by its best window
(:class:`spr.retrieval.vector.DenseSignal`). Windows start at a word count estimated from the
model's token limit; a unit whose windows still tokenize longer (German compounds, PDF noise)
is cut again into proportionally shorter windows, so no window loses its tail. Rebuilt from scratch on every run (the embedding
cache makes unchanged windows free).
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.text import word_windows
from store.base import RDFStore
from store.layout import KBLayout
from store.units import read_units

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.usage import UsageTracker

NAME = "chunks"
# Subword tokens per whitespace word in English and German legal text is ~1.3-1.6 (numbers,
# references and compounds split into several); 1.6 keeps a window inside the model's limit.
TOKENS_PER_WORD = 1.6


def window_words(max_tokens: int) -> int:
    """Words per window for an embedder that reads ``max_tokens`` tokens (room for [CLS]/[SEP])."""
    return max(16, int((max_tokens - 2) / TOKENS_PER_WORD))


class ChunkVectorStage:
    """Embeds every chunk of the KB. The embedder is injected and loads its model on first use."""

    name = NAME

    def __init__(self, embedder: Embedder, overlap: float = 0.2):
        self.embedder = embedder
        self.overlap = overlap

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.vectors import VectorIndex

        started = time.perf_counter()
        units = read_units(store)
        size = window_words(self.embedder.max_tokens)
        ids: list[str] = []
        texts: list[str] = []
        long_units = 0
        for unit in units:
            windows = self._windows(unit.index_text, size) or [unit.heading_path or unit.iri]
            long_units += len(windows) > 1
            ids += [unit.iri] * len(windows)
            texts += windows
        index = VectorIndex(self.embedder.dimension)
        if ids:
            index.add(ids, self.embedder.embed_many(texts))
        index.save(KBLayout(kb_dir).index(NAME))
        share = long_units / len(units) if units else 0.0
        return (
            f"{len(units)} chunks embedded as {len(ids)} windows of <= {size} words "
            f"({share:.0%} longer than one window) in {time.perf_counter() - started:.1f} s"
        )


    def _windows(self, text: str, size: int) -> list[str]:
        limit = self.embedder.max_tokens
        for _ in range(4):  # each pass shrinks by the measured excess; 4 suffice for any real text
            windows = word_windows(text, size, int(size * self.overlap))
            longest = max(self.embedder.token_counts(windows), default=0)
            if longest <= limit or size <= 16:
                return windows
            size = max(16, int(size * limit / longest * 0.95))
        return windows


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> ChunkVectorStage:
    """The stage a configuration describes (``llm_cache`` is unused: no LLM here)."""
    from core.embed import make_embedder

    embedder = make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker)
    return ChunkVectorStage(embedder, config.retrieval.window_overlap)
