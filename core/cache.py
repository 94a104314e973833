"""Persistent caches for model outputs: LLM responses and embedding vectors, in SQLite.

Both live in the KB directory (``<kb>/cache/llm.sqlite``, ``<kb>/cache/embed.sqlite``) so that
copying a KB copies its caches. Several processes may share one file: the database runs in WAL
mode (readers never block the writer), each write is one short transaction, and a busy timeout
makes a second writer wait instead of failing.
"""

from __future__ import annotations

import hashlib
import json
import os
import sqlite3
import threading
import time
from collections.abc import Iterable, Mapping, Sequence
from pathlib import Path
from typing import Any

import numpy as np

from core.errors import ModelError

_BUSY_TIMEOUT_S = 30.0
_SQL_VARS = 500  # keys per IN (...) query; SQLite's limit is 32766 but small batches stay quick


def stable_hash(value: Any) -> str:
    """SHA-256 of a canonical JSON rendering (sorted keys), so equal inputs share one key."""
    text = json.dumps(value, sort_keys=True, ensure_ascii=False, separators=(",", ":"))
    return hashlib.sha256(text.encode("utf-8")).hexdigest()


class SQLiteKV:
    """A key → bytes table in one SQLite file; safe across threads and processes."""

    def __init__(self, path: Path | str):
        self.path = Path(path)
        self._lock = threading.Lock()
        self._conn: sqlite3.Connection | None = None
        self._pid = -1

    def _connection(self) -> sqlite3.Connection:
        # A connection must not cross a fork, so reopen when the process id changes.
        if self._conn is None or self._pid != os.getpid():
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                conn = self._open()
            except (OSError, sqlite3.Error) as exc:
                raise ModelError(f"cannot open cache {self.path}: {exc}") from exc
            self._conn, self._pid = conn, os.getpid()
        return self._conn

    def _open(self) -> sqlite3.Connection:
        # Switching a new file to WAL needs an exclusive lock and SQLite answers "database is
        # locked" at once, without its busy handler, when another process opens the same new file
        # at that moment (regression: test_response_cache_is_shared_by_concurrent_processes).
        # Such an open is retried, with backoff, up to the busy timeout.
        deadline = time.monotonic() + _BUSY_TIMEOUT_S
        pause = 0.01
        while True:
            conn = sqlite3.connect(self.path, timeout=_BUSY_TIMEOUT_S, isolation_level=None, check_same_thread=False)
            try:
                if conn.execute("PRAGMA journal_mode").fetchone()[0].lower() != "wal":
                    conn.execute("PRAGMA journal_mode=WAL")
                conn.execute("PRAGMA synchronous=NORMAL")  # WAL + NORMAL: durable enough for a cache
                conn.execute("CREATE TABLE IF NOT EXISTS kv (key TEXT PRIMARY KEY, value BLOB NOT NULL)")
                return conn
            except sqlite3.OperationalError as exc:
                conn.close()
                if "locked" not in str(exc) or time.monotonic() + pause > deadline:
                    raise
                time.sleep(pause)
                pause = min(pause * 2, 0.5)

    def get(self, key: str) -> bytes | None:
        return self.get_many([key]).get(key)

    def get_many(self, keys: Sequence[str]) -> dict[str, bytes]:
        found: dict[str, bytes] = {}
        with self._lock:
            conn = self._connection()
            for start in range(0, len(keys), _SQL_VARS):
                part = list(keys[start : start + _SQL_VARS])
                marks = ",".join("?" * len(part))
                rows = conn.execute(f"SELECT key, value FROM kv WHERE key IN ({marks})", part)
                found.update((k, bytes(v)) for k, v in rows)
        return found

    def put(self, key: str, value: bytes) -> None:
        self.put_many({key: value})

    def put_many(self, items: Mapping[str, bytes] | Iterable[tuple[str, bytes]]) -> None:
        pairs = list(items.items() if isinstance(items, Mapping) else items)
        if not pairs:
            return
        with self._lock:
            conn = self._connection()
            try:
                conn.execute("BEGIN IMMEDIATE")
                conn.executemany("INSERT OR REPLACE INTO kv (key, value) VALUES (?, ?)", pairs)
                conn.execute("COMMIT")
            except sqlite3.Error as exc:
                if conn.in_transaction:
                    conn.execute("ROLLBACK")
                raise ModelError(f"cannot write cache {self.path}: {exc}") from exc

    def __len__(self) -> int:
        with self._lock:
            return self._connection().execute("SELECT COUNT(*) FROM kv").fetchone()[0]

    def close(self) -> None:
        with self._lock:
            if self._conn is not None and self._pid == os.getpid():
                self._conn.close()
            self._conn = None


class ResponseCache:
    """LLM responses as JSON objects, keyed by :func:`stable_hash` of the whole request."""

    def __init__(self, path: Path | str):
        self._kv = SQLiteKV(path)
        self.path = self._kv.path

    def get(self, key: str) -> dict[str, Any] | None:
        raw = self._kv.get(key)
        if raw is None:
            return None
        try:
            return json.loads(raw.decode("utf-8"))
        except (UnicodeDecodeError, json.JSONDecodeError):
            return None  # a damaged entry is a miss; the fresh answer overwrites it

    def put(self, key: str, value: Mapping[str, Any]) -> None:
        self._kv.put(key, json.dumps(value, ensure_ascii=False).encode("utf-8"))

    def __len__(self) -> int:
        return len(self._kv)

    def close(self) -> None:
        self._kv.close()


class EmbeddingCache:
    """Vectors as raw float32 bytes, keyed by (model id, text)."""

    def __init__(self, path: Path | str):
        self._kv = SQLiteKV(path)
        self.path = self._kv.path

    @staticmethod
    def key(model_id: str, text: str) -> str:
        return hashlib.sha256(f"{model_id}\x00{text}".encode()).hexdigest()

    def get_many(self, model_id: str, texts: Sequence[str]) -> dict[str, np.ndarray]:
        """Cached vectors by text; texts without an entry are absent from the result."""
        keys = {self.key(model_id, t): t for t in texts}
        found = self._kv.get_many(list(keys))
        return {keys[k]: np.frombuffer(v, dtype=np.float32) for k, v in found.items()}

    def put_many(self, model_id: str, vectors: Mapping[str, np.ndarray]) -> None:
        self._kv.put_many(
            (self.key(model_id, t), np.asarray(v, dtype=np.float32).tobytes())
            for t, v in vectors.items()
        )

    def __len__(self) -> int:
        return len(self._kv)

    def close(self) -> None:
        self._kv.close()


def user_cache_dir() -> Path:
    """``$XDG_CACHE_HOME/policykb`` (else ``~/.cache/policykb``): for large, rebuildable files that
    belong to no KB (evaluation KBs, the parser's unpacked base model)."""
    root = os.environ.get("XDG_CACHE_HOME") or str(Path.home() / ".cache")
    return Path(root) / "policykb"
