"""Map backend failures to policykb's error types, in one place per kind of backend."""

from __future__ import annotations

import re

from core.errors import QuerySyntaxError, StoreError

# pyoxigraph and `oxigraph serve` report positions as "line:column" (e.g. "error at 1:8: ...").
_POSITION = re.compile(r"(\d+):(\d+)")


def syntax_error(message: str) -> QuerySyntaxError:
    """A QuerySyntaxError with the position parsed out of a backend's message, when present."""
    text = " ".join(message.split())
    match = _POSITION.search(text)
    if match:
        # Drop the backend's own "error at L:C:" prefix: QuerySyntaxError states the position.
        detail = re.sub(r"^(?:error )?at \d+:\d+:\s*", "", text)
        return QuerySyntaxError(detail, int(match.group(1)), int(match.group(2)))
    return QuerySyntaxError(text)


def map_oxigraph_error(exc: BaseException, what: str) -> Exception:
    """pyoxigraph raises SyntaxError for bad SPARQL, OSError for storage, ValueError for misuse."""
    if isinstance(exc, SyntaxError):
        return syntax_error(str(exc.msg if getattr(exc, "msg", None) else exc))
    return StoreError(f"{what} failed: {' '.join(str(exc).split())}")
