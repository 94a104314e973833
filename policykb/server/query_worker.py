"""One query-evaluating child process of ``policykb serve`` (see :mod:`policykb.server.workers`).

Run as ``python -m policykb.server.query_worker FD``: ``FD`` is this end of a socket pair. The
child reads one job at a time — ``(snapshot, query, default_graphs, named_graphs, accept, limit)``
pickled — evaluates it over a read-only open of the store snapshot (reopened when the job names a
newer one) with the same :class:`~policykb.server.engine.OxigraphEngine` the in-process path uses,
and answers ``("ok", body, media_type, truncated)`` or ``("error", class_name, message, attrs)``.

It holds no lock and writes nothing, so the parent may SIGKILL it at a query's deadline: that is
the point of running queries here. It exits when the parent closes the socket.
"""

from __future__ import annotations

import pickle
import signal
import sys
import threading
from multiprocessing.connection import Connection

READY = b"ready"


def serve(conn: Connection) -> None:
    import pyoxigraph as ox

    from core.errors import PolicyKBError, StoreError
    from policykb.server.engine import OxigraphEngine, QueryRequest
    from policykb.server.errors import HTTPProblem

    never = threading.Event()  # the parent kills instead of cancelling
    engine: OxigraphEngine | None = None
    opened = ""
    conn.send_bytes(READY)
    while True:
        try:
            snapshot, text, default_graphs, named_graphs, accept, limit = pickle.loads(conn.recv_bytes())
        except (EOFError, OSError):
            return  # the server went away
        try:
            if engine is None or snapshot != opened:
                engine, opened = None, ""
                engine, opened = OxigraphEngine(ox.Store.read_only(snapshot)), snapshot
            payload = engine.query(QueryRequest(text, default_graphs, named_graphs), accept, limit, never)
            reply: tuple = ("ok", payload.body, payload.format.media_type, payload.truncated)
        except (PolicyKBError, HTTPProblem) as exc:
            reply = ("error", type(exc).__name__, str(exc), dict(vars(exc)))
        except OSError as exc:  # the snapshot vanished or is damaged
            reply = ("error", StoreError.__name__, f"cannot read the store snapshot: {exc}", {})
        except Exception as exc:  # noqa: BLE001 - any other failure is this query's, not the worker's
            reply = ("error", StoreError.__name__, f"query evaluation failed: {type(exc).__name__}: {exc}", {})
        conn.send_bytes(pickle.dumps(reply, protocol=pickle.HIGHEST_PROTOCOL))


def main(argv: list[str]) -> None:
    # Ctrl-C, and a SIGTERM sent to the server's whole process group (`timeout`, a service manager),
    # stop the server, which then stops us: a child killed first would be logged as a crash.
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    serve(Connection(int(argv[0])))


if __name__ == "__main__":
    main(sys.argv[1:])
