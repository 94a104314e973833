"""The ingest queue and its state, persisted in SQLite in the KB directory (``state.sqlite``).

A document moves ``queued`` → ``writing`` → ``done`` (or ``skipped`` with a reason). The graph list
recorded at ``writing`` is what a resumed run drops before rewriting, so a crash at any moment
(even ``kill -9`` between the store commit and the state update) converges to the clean result.
"""

from __future__ import annotations

import json
import sqlite3
import time
from dataclasses import dataclass
from pathlib import Path

_SCHEMA = """
CREATE TABLE IF NOT EXISTS documents (
    doc_id TEXT PRIMARY KEY,
    source TEXT NOT NULL,
    content_hash TEXT NOT NULL,
    category TEXT NOT NULL DEFAULT '',
    status TEXT NOT NULL,
    attempts INTEGER NOT NULL DEFAULT 0,
    error TEXT NOT NULL DEFAULT '',
    graphs TEXT NOT NULL DEFAULT '[]',
    chunks INTEGER NOT NULL DEFAULT 0,
    entities INTEGER NOT NULL DEFAULT 0,
    triples INTEGER NOT NULL DEFAULT 0,
    conflicts INTEGER NOT NULL DEFAULT 0,
    updated REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS meta (
    key TEXT PRIMARY KEY,
    value TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS skipped_sources (
    source TEXT PRIMARY KEY,
    reason TEXT NOT NULL,
    updated REAL NOT NULL
);
"""


@dataclass(frozen=True)
class DocState:
    doc_id: str
    source: str
    content_hash: str
    category: str
    status: str  # queued | writing | done | skipped | deleting
    attempts: int
    error: str
    graphs: tuple[str, ...]
    chunks: int
    entities: int
    triples: int
    conflicts: int
    updated: float


class IngestState:
    """Short transactions in WAL mode, so `policykb status` can read while an ingest runs."""

    def __init__(self, path: Path):
        path.parent.mkdir(parents=True, exist_ok=True)
        self._db = sqlite3.connect(str(path), timeout=30, isolation_level=None)
        self._db.execute("PRAGMA journal_mode=WAL")
        self._db.execute("PRAGMA synchronous=FULL")  # a 'done' row must survive a crash
        self._db.executescript(_SCHEMA)

    def close(self) -> None:
        self._db.close()

    def get(self, doc_id: str) -> DocState | None:
        row = self._db.execute("SELECT * FROM documents WHERE doc_id = ?", (doc_id,)).fetchone()
        return _doc(row) if row else None

    def find(self, key: str) -> DocState | None:
        """A document by id, or by its source path."""
        found = self.get(key)
        if found:
            return found
        row = self._db.execute("SELECT * FROM documents WHERE source = ? ORDER BY doc_id LIMIT 1", (key,)).fetchone()
        return _doc(row) if row else None

    def all(self) -> list[DocState]:
        return [_doc(r) for r in self._db.execute("SELECT * FROM documents ORDER BY doc_id")]

    def unfinished_sources(self) -> list[str]:
        rows = self._db.execute("SELECT DISTINCT source FROM documents WHERE status IN ('queued', 'writing')")
        return sorted(r[0] for r in rows)

    def queue(self, doc_id: str, source: str, content_hash: str) -> None:
        """Enter (or re-enter) a document; keeps the graph list of what is in the store now."""
        self._db.execute(
            """INSERT INTO documents (doc_id, source, content_hash, status, updated) VALUES (?, ?, ?, 'queued', ?)
               ON CONFLICT(doc_id) DO UPDATE SET source = excluded.source, content_hash = excluded.content_hash,
               status = CASE WHEN documents.status = 'writing' THEN 'writing' ELSE 'queued' END,
               error = '', updated = excluded.updated""",
            (doc_id, source, content_hash, time.time()),
        )

    def writing(self, doc_id: str, graphs: list[str]) -> None:
        """Record every graph the document may occupy (old and new) before touching the store."""
        current = self.get(doc_id)
        union = sorted(set(current.graphs if current else ()) | set(graphs))
        self._db.execute(
            "UPDATE documents SET status = 'writing', graphs = ?, attempts = attempts + 1, updated = ? WHERE doc_id = ?",
            (json.dumps(union), time.time(), doc_id),
        )

    def done(self, doc_id: str, category: str, graphs: list[str], chunks: int, entities: int, triples: int, conflicts: int) -> None:
        self._db.execute(
            """UPDATE documents SET status = 'done', category = ?, graphs = ?, chunks = ?, entities = ?, triples = ?,
               conflicts = ?, error = '', updated = ? WHERE doc_id = ?""",
            (category, json.dumps(sorted(graphs)), chunks, entities, triples, conflicts, time.time(), doc_id),
        )

    def deleting(self, doc_id: str, graphs: list[str]) -> None:
        self._db.execute(
            "UPDATE documents SET status = 'deleting', graphs = ?, updated = ? WHERE doc_id = ?",
            (json.dumps(sorted(graphs)), time.time(), doc_id),
        )

    def pending_deletes(self) -> list[str]:
        return [r[0] for r in self._db.execute("SELECT doc_id FROM documents WHERE status = 'deleting'")]

    def skipped(self, doc_id: str, reason: str) -> None:
        self._db.execute(
            "UPDATE documents SET status = 'skipped', error = ?, updated = ? WHERE doc_id = ?",
            (reason, time.time(), doc_id),
        )

    def skip_source(self, source: str, reason: str) -> None:
        self._db.execute(
            "INSERT OR REPLACE INTO skipped_sources (source, reason, updated) VALUES (?, ?, ?)",
            (source, reason, time.time()),
        )

    def clear_source_skip(self, source: str) -> None:
        self._db.execute("DELETE FROM skipped_sources WHERE source = ?", (source,))

    def skipped_sources(self) -> list[tuple[str, str]]:
        return [(r[0], r[1]) for r in self._db.execute("SELECT source, reason FROM skipped_sources ORDER BY source")]

    def set_meta(self, key: str, value: str) -> None:
        self._db.execute("INSERT OR REPLACE INTO meta (key, value) VALUES (?, ?)", (key, value))

    def get_meta(self, key: str, default: str = "") -> str:
        row = self._db.execute("SELECT value FROM meta WHERE key = ?", (key,)).fetchone()
        return row[0] if row else default

    def remove(self, doc_id: str) -> None:
        self._db.execute("DELETE FROM documents WHERE doc_id = ?", (doc_id,))


def _doc(row: tuple) -> DocState:
    values = list(row)
    values[7] = tuple(json.loads(values[7]))
    return DocState(*values)
