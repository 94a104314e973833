"""Derived stage "bm25": a BM25 keyword index over every chunk, in ``<kb>/indexes/bm25/``.

Indexes :attr:`store.units.Unit.index_text` (heading path + markup-free chunk text) under the
chunk IRI, so keyword hits resolve like vector hits. Rebuilt from scratch on every run — cheap
(about a second for a few thousand chunks) and it is what keeps the index in step with deletes
and replaced documents: the controller runs every stage after a change.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from store.base import RDFStore
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.config import Config
    from core.usage import UsageTracker

NAME = "bm25"


class BM25Stage:
    """Reads the KB's units and writes :class:`store.keyword_index.KeywordIndex`."""

    name = NAME

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.keyword_index import KeywordIndex
        from store.units import read_units

        started = time.perf_counter()
        units = read_units(store)
        index = KeywordIndex([u.iri for u in units], [u.index_text for u in units])
        index.save(KBLayout(kb_dir).index(NAME))
        return f"{len(index)} chunks, {index.terms} terms indexed in {time.perf_counter() - started:.1f} s"


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> BM25Stage:
    """The stage (nothing in ``config`` tunes it yet; ``tracker``/``llm_cache`` are unused: no models)."""
    return BM25Stage()
