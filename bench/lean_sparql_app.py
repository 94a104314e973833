"""The least a Python HTTP front can do per SPARQL request: the ceiling for policykb's ``/sparql``.

A bare ASGI app under uvicorn (uvloop and httptools, which `policykb serve` picks too) that reads a form POST,
evaluates the query on the event loop's thread and returns SPARQL JSON: no isolation, no deadline,
no content negotiation, no limits, no errors mapped. Nothing a production endpoint could ship; what
``bench/bench_sparql_endpoint.py --ceiling`` measures beside policykb and ``oxigraph serve``.

Usage: python bench/lean_sparql_app.py STORE_DIR PORT
"""

from __future__ import annotations

import sys
from urllib.parse import parse_qs

import pyoxigraph as ox
import uvicorn

STORE = ox.Store.read_only(sys.argv[1]) if __name__ == "__main__" else None
HEADERS = [(b"content-type", b"application/sparql-results+json")]


async def app(scope, receive, send) -> None:
    if scope["type"] != "http":
        return
    if scope["path"] == "/health":
        await send({"type": "http.response.start", "status": 200, "headers": []})
        await send({"type": "http.response.body", "body": b"ok"})
        return
    body, more = b"", True
    while more:
        message = await receive()
        body += message.get("body", b"")
        more = message.get("more_body", False)
    query = parse_qs(body.decode())["query"][0]
    result = STORE.query(query, use_default_graph_as_union=True)  # type: ignore[union-attr]
    await send({"type": "http.response.start", "status": 200, "headers": HEADERS})
    await send({"type": "http.response.body", "body": result.serialize(format=ox.QueryResultsFormat.JSON)})


if __name__ == "__main__":
    uvicorn.run(app, host="127.0.0.1", port=int(sys.argv[2]), log_level="warning", access_log=False, loop="uvloop", http="httptools")
