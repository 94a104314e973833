"""Whether the derived indexes still cover the store.

Ingest and ``policykb delete`` rebuild the derived indexes (BM25, chunk and sentence vectors,
entity labels, weights, communities, ...) after they change the store. Writes that bypass them —
``policykb load`` of RDF files, a SPARQL update or a Graph Store write through the server — leave
the indexes as they were: an entity loaded that way is in the store but not in the entity index,
so no question links to it. Such a write leaves a marker, ``<kb>/indexes/STALE`` (what changed and
when); rebuilding every derived index removes it; answers and ``/health`` say so meanwhile.

    >>> import tempfile
    >>> kb = tempfile.mkdtemp()
    >>> stale_since(kb) is None
    True
    >>> mark_stale(kb, "policykb load facts.ttl")
    >>> stale_since(kb).startswith("policykb load facts.ttl at ")
    True
    >>> mark_fresh(kb); stale_since(kb) is None
    True
"""

from __future__ import annotations

import datetime as dt
from pathlib import Path

from store.layout import KBLayout

MARKER = "STALE"


def _marker(kb_dir: str | Path) -> Path:
    return KBLayout(kb_dir).indexes / MARKER


def mark_stale(kb_dir: str | Path, what: str) -> None:
    """Record that ``what`` changed the store after the derived indexes were built (the first
    such change is kept: the indexes are stale since then)."""
    marker = _marker(kb_dir)
    if marker.is_file():
        return
    marker.parent.mkdir(parents=True, exist_ok=True)
    when = dt.datetime.now(dt.UTC).strftime("%Y-%m-%d %H:%M UTC")
    marker.write_text(f"{' '.join(what.split())[:300]} at {when}\n", encoding="utf-8")


def mark_fresh(kb_dir: str | Path) -> None:
    """Every derived index was rebuilt from the store as it is."""
    _marker(kb_dir).unlink(missing_ok=True)


def stale_since(kb_dir: str | Path) -> str | None:
    """What changed the store after the indexes were built, and when; None when they cover it."""
    try:
        return _marker(kb_dir).read_text(encoding="utf-8").strip() or "an unrecorded change"
    except (FileNotFoundError, NotADirectoryError):
        return None
    except OSError as exc:
        return f"unknown ({exc.strerror or exc})"
