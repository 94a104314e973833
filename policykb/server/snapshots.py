"""Point-in-time copies of the embedded store that query worker processes open read-only.

Opening a RocksDB store read-only while another process writes it is undefined behaviour (the
writer compacts and deletes files the reader still needs). So workers never open the live store:
they open a *snapshot*, a RocksDB checkpoint made by ``Store.backup`` — hard links to the immutable
table files plus a copy of the manifest, a few milliseconds whatever the store's size. Nothing ever
writes a snapshot. After each write the server publishes a new one; a query that started before
keeps reading its own (snapshot isolation across processes), and an old snapshot is deleted once
no worker holds it.

Layout: ``<kb>/store.snapshots/<n>/``; everything there is derived and removed at start and close.
"""

from __future__ import annotations

import logging
import shutil
import threading
from collections.abc import Iterable
from pathlib import Path

import pyoxigraph as ox

from core.errors import StoreError

log = logging.getLogger("policykb.server")


class Snapshots:
    """Publishes checkpoints of ``store`` under ``root`` and deletes the ones nobody reads."""

    def __init__(self, store: ox.Store, root: Path):
        self._store = store
        self.root = root
        self._lock = threading.Lock()
        self._generation = 0
        shutil.rmtree(root, ignore_errors=True)  # left over from a server that was killed
        self.current = self.publish()

    def publish(self) -> str:
        """A new snapshot of the store as it is now (call after a write commits); its path."""
        with self._lock:
            self._generation += 1
            path = self.root / str(self._generation)
            self.root.mkdir(parents=True, exist_ok=True)
            try:
                self._store.backup(str(path))
            except OSError as exc:
                raise StoreError(f"cannot snapshot the store into {path}: {exc}") from None
            self.current = str(path)
            return self.current

    def collect(self, held: Iterable[str]) -> None:
        """Delete every snapshot but the current one and those in ``held``."""
        with self._lock:  # never while publish() is writing a new one
            keep = {self.current, *held}
            for path in self.root.iterdir() if self.root.exists() else ():
                if str(path) not in keep:
                    shutil.rmtree(path, ignore_errors=True)

    def close(self) -> None:
        shutil.rmtree(self.root, ignore_errors=True)
