"""Derived stage "graph": the entity–chunk graph of the graph signal, in ``<kb>/indexes/graph/``.

Reads :class:`store.entity_graph.GraphData` from the store (mentions, relations, surface forms,
cross-references between documents) and saves it, so that a query process loads it in a fraction
of a second instead of reading the store on its first question. Rebuilt from scratch on every
run, like BM25: the controller runs every stage after a change.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from store.base import RDFStore
from store.entity_graph import NAME, GraphData
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.config import Config
    from core.usage import UsageTracker


class GraphStage:
    """Reads the KB's entity–chunk graph and writes it under ``<kb>/indexes/graph``."""

    name = NAME

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        data = GraphData.read(store)
        data.save(KBLayout(kb_dir).index(NAME))
        return f"{len(data.labels)} nodes, {len(data.edges)} edges saved in {time.perf_counter() - started:.1f} s"


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> GraphStage:
    """The stage (nothing in ``config`` tunes it; ``tracker``/``llm_cache`` are unused: no models)."""
    return GraphStage()
