"""Map backend failures to policykb's error types, in one place per kind of backend."""

from __future__ import annotations

import re
from pathlib import Path

from core.errors import QuerySyntaxError, StoreError

# pyoxigraph and `oxigraph serve` report positions as "line:column" (e.g. "error at 1:8: ...").
_POSITION = re.compile(r"(\d+):(\d+)")
# RocksDB's messages when its LOCK file is held (see open_error).
_LOCK = re.compile(r"(?:While lock file|lock hold by current process).*\bLOCK\b")


def syntax_error(message: str) -> QuerySyntaxError:
    """A QuerySyntaxError with the position parsed out of a backend's message, when present."""
    text = " ".join(message.split())
    match = _POSITION.search(text)
    if match:
        # Drop the backend's own "error at L:C:" prefix: QuerySyntaxError states the position.
        detail = re.sub(r"^(?:error )?at \d+:\d+:\s*", "", text)
        return QuerySyntaxError(detail, int(match.group(1)), int(match.group(2)))
    return QuerySyntaxError(text)


class StoreInUseError(StoreError):
    """The embedded store is open read-write elsewhere: RocksDB lets one writer hold its LOCK file."""

    def __init__(self, kb: Path):
        self.kb = kb
        super().__init__(
            f"the knowledge base at {kb} is in use by another process (a running policykb serve?): "
            "stop it first, or send changes through its SPARQL Update / Graph Store endpoints"
        )


def open_error(exc: OSError, path: Path) -> StoreError:
    """Why the Oxigraph store at ``path`` (``<kb>/store``) did not open.

    RocksDB reports a held lock as "IO error: While lock file: <path>/LOCK: Resource temporarily
    unavailable" (another process) or "lock hold by current process ... LOCK: No locks available"
    (opened twice here); pyoxigraph raises both as a plain OSError, so the text is all there is."""
    text = " ".join(str(exc).split())
    if _LOCK.search(text):
        return StoreInUseError(path.parent if path.name == "store" else path)
    return StoreError(f"cannot open Oxigraph store at {path}: {text}")


def map_oxigraph_error(exc: BaseException, what: str) -> Exception:
    """pyoxigraph raises SyntaxError for bad SPARQL, OSError for storage, ValueError for misuse."""
    if isinstance(exc, SyntaxError):
        return syntax_error(str(exc.msg if getattr(exc, "msg", None) else exc))
    return StoreError(f"{what} failed: {' '.join(str(exc).split())}")
