"""Derived index stages: built from the whole KB after documents change.

Each stage (disambiguation weights, question bank, chunk vectors, ...) reads the store and writes
its results to the store or to ``<kb>/indexes/<name>/``. ``policykb ingest`` runs every registered
stage after a run that changed documents; ``policykb reindex NAME`` runs one alone.
"""

from __future__ import annotations

from pathlib import Path
from typing import Protocol

from store.base import RDFStore


class DerivedStage(Protocol):
    name: str

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        """Rebuild from scratch (idempotent); return a one-line summary with counts and timing."""
        ...


