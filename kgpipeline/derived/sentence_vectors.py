"""Derived stage "sentences": the embedding of every sentence of every chunk, computed at ingest,
and an index of them that ranks chunks by their best-matching sentence.

Two readers use these vectors:

- **answers** — an extractive answer scores each sentence of the retrieved chunks against the
  question by embedding cosine (:mod:`spr.generate`); so do the LLM answer's evidence focus and
  the citation check. Embedded at question time, the sentences of three long EU-law articles cost
  seconds with all-mpnet-base-v2 on two cores, so the stage puts them in the KB's persistent
  embedding cache (``<kb>/cache/embed.sqlite``, keyed by model and text) once;
- **retrieval** — the fused stage's ``sentences`` signal (:mod:`spr.retrieval.vector`). A chunk
  vector (or window vector) averages a whole article; a question usually matches one sentence of
  it. ``<kb>/indexes/sentences/`` holds one vector per sentence of at least
  :data:`MIN_INDEX_WORDS` words, under its chunk's IRI (several per chunk, like the windows of
  the ``chunks`` index), so a search scores a chunk by its best sentence — multi-vector retrieval
  at the cost of vectors the answer side embeds anyway.

The sentences are the chunk's stored text cut by :func:`core.text.sentence_spans`, exactly the
strings the answer side embeds (``spr.fuse.sentences``); the items of an inline list sentence are
embedded too, each read under its lead-in (:func:`core.text.item_readings`), for the answer that
quotes such a list by its items (``spr.lists.trim_inline``), but not indexed. The cache makes
unchanged sentences free when the stage runs again after an ingest; the index is rebuilt from
scratch each time.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from core.text import item_readings, sentence_spans
from store.base import RDFStore
from store.layout import KBLayout
from store.vocab import PKB

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.usage import UsageTracker

NAME = "sentences"
BATCH = 2048
# Headings, list markers and "Article 5" lines match many questions by their few words and say
# nothing; they stay in the embedding cache for the answer side but are not indexed for retrieval.
MIN_INDEX_WORDS = 4
_TEXTS = f"SELECT ?c ?t WHERE {{ ?c <{PKB}text> ?t }}"


def chunk_sentences(text: str) -> list[str]:
    """The sentences (and lines) of a chunk's stored text, as the answer side cuts them."""
    return [text[a:b] for a, b in sentence_spans(text)]


def indexed_sentences(text: str) -> list[str]:
    """The distinct sentences of a chunk that go into the retrieval index (≥ MIN_INDEX_WORDS words).

    >>> indexed_sentences("Article 5\\n\\nThe operator shall register the plant. The operator shall register the plant.")
    ['The operator shall register the plant.']
    """
    return list(dict.fromkeys(s for s in chunk_sentences(text) if len(s.split()) >= MIN_INDEX_WORDS))


class SentenceVectorStage:
    """Embeds every chunk sentence (into the embedding cache when it is on) and writes the sentence
    index. The embedder is injected and loads its model on first use."""

    name = NAME

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.vectors import VectorIndex

        started = time.perf_counter()
        rows = sorted((r["c"].value, r["t"].value) for r in store.select(_TEXTS).rows)  # sorted: a stable index
        texts: dict[str, None] = {}  # every sentence, for the cache (answers embed short ones too)
        ids: list[str] = []
        indexed: list[str] = []
        for chunk, text in rows:
            for sentence in chunk_sentences(text):
                texts.setdefault(sentence)
                for reading in item_readings(sentence):  # an inline list's items, as answers score them
                    texts.setdefault(reading)
            for sentence in indexed_sentences(text):
                ids.append(chunk)
                indexed.append(sentence)
        pending = list(texts) if self.embedder.cache is not None else []  # without a cache only the index needs them
        for start in range(0, len(pending), BATCH):  # each batch lands in the cache: a crash keeps it
            self.embedder.embed_many(pending[start : start + BATCH])
        index = VectorIndex(self.embedder.dimension)
        for start in range(0, len(indexed), BATCH):  # cache hits now, or embedded here when the cache is off
            index.add(ids[start : start + BATCH], self.embedder.embed_many(indexed[start : start + BATCH]))
        index.save(KBLayout(kb_dir).index(NAME))
        cached = "in the embedding cache" if self.embedder.cache is not None else "embedded (cache off)"
        return (
            f"{len(texts)} chunk sentences {cached}, {len(ids)} indexed for retrieval "
            f"in {time.perf_counter() - started:.1f} s"
        )


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> SentenceVectorStage:
    """The stage a configuration describes (``llm_cache`` is unused: no LLM here)."""
    from core.embed import make_embedder

    return SentenceVectorStage(make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker))
