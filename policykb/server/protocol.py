"""Routing of ``/sparql`` and ``/store`` ahead of FastAPI, and their OpenAPI description.

A small SPARQL query costs about a hundred microseconds end to end; FastAPI's per-request machinery
(telemetry, middleware stack, dependency solving) would more than double that, so the server hands
these two paths to :func:`sparql_protocol`, a plain ASGI app. The OpenAPI schema still describes
them (:data:`OPENAPI_PATHS`).
"""

from __future__ import annotations

from starlette.requests import Request
from starlette.types import Receive, Scope, Send

from policykb.server.errors import HTTPProblem, error_response
from policykb.server.formats import UPLOAD_FORMATS
from policykb.server.gsp import store_delete, store_get, store_post, store_put
from policykb.server.sparql import sparql_get, sparql_post

HANDLERS = {
    "/sparql": {"GET": sparql_get, "POST": sparql_post},
    "/store": {"GET": store_get, "PUT": store_put, "POST": store_post, "DELETE": store_delete},
}


async def sparql_protocol(scope: Scope, receive: Receive, send: Send) -> None:
    """ASGI app for the paths in :data:`HANDLERS`; every failure becomes the JSON error shape."""
    request = Request(scope, receive)
    methods = HANDLERS[scope["path"]]
    try:
        handler = methods.get(scope["method"])
        if handler is None:
            allow = ", ".join(methods)
            raise HTTPProblem(405, "method_not_allowed", f"{scope['path']} allows {allow}", {"Allow": allow})
        response = await handler(request)
    except Exception as exc:  # noqa: BLE001 - mapped to a status in policykb.server.errors
        response = error_response(exc)
    await response(scope, receive, send)


def _param(name: str, description: str, array: bool = False) -> dict:
    schema = {"type": "array", "items": {"type": "string"}} if array else {"type": "string"}
    return {"name": name, "in": "query", "required": False, "schema": schema, "description": description}


_DATASET = [
    _param("default-graph-uri", "graphs whose merge is the default graph (default: the union of all graphs)", True),
    _param("named-graph-uri", "the named graphs GRAPH patterns may see (default: all)", True),
]
_GRAPH = [_param("graph", "the named graph's IRI"), _param("default", "the store's default graph (no value)")]
_RESULTS = {
    "description": "SPARQL results (JSON, XML, CSV, TSV) or an RDF graph (Turtle, N-Triples, JSON-LD, RDF/XML)"
    ", by Accept"
}
_ERROR = {
    "description": "JSON error",
    "content": {"application/json": {"schema": {"$ref": "#/components/schemas/ErrorBody"}}},
}
_ERRORS = {str(code): _ERROR for code in (400, 401, 403, 404, 406, 413, 415, 503, 504)}
_RDF_BODY = {"content": {media: {"schema": {"type": "string"}} for media in UPLOAD_FORMATS}}

OPENAPI_PATHS: dict = {
    "/sparql": {
        "get": {
            "tags": ["SPARQL"],
            "summary": "SPARQL 1.1 query; without `query`, the service description (Turtle)",
            "parameters": [_param("query", "SPARQL 1.1 query"), *_DATASET],
            "responses": {"200": _RESULTS, **_ERRORS},
        },
        "post": {
            "tags": ["SPARQL"],
            "summary": "SPARQL 1.1 query (form or direct body) or update (needs the bearer token)",
            "parameters": _DATASET,
            "requestBody": {
                "content": {
                    "application/x-www-form-urlencoded": {
                        "schema": {
                            "type": "object",
                            "properties": {"query": {"type": "string"}, "update": {"type": "string"}},
                        }
                    },
                    "application/sparql-query": {"schema": {"type": "string"}},
                    "application/sparql-update": {"schema": {"type": "string"}},
                }
            },
            "responses": {"200": _RESULTS, "204": {"description": "update applied"}, **_ERRORS},
        },
    },
    "/store": {
        "get": {
            "tags": ["Graph Store"],
            "summary": "Read a graph",
            "parameters": _GRAPH,
            "responses": {"200": _RESULTS, **_ERRORS},
        },
        "put": {
            "tags": ["Graph Store"],
            "summary": "Replace a graph (bearer token)",
            "parameters": _GRAPH,
            "requestBody": _RDF_BODY,
            "responses": {"201": {"description": "created"}, "204": {"description": "replaced"}, **_ERRORS},
        },
        "post": {
            "tags": ["Graph Store"],
            "summary": "Add to a graph, or to a new one when none is named (bearer token)",
            "parameters": _GRAPH,
            "requestBody": _RDF_BODY,
            "responses": {
                "201": {"description": "created (Location names a new graph)"},
                "204": {"description": "added"},
                **_ERRORS,
            },
        },
        "delete": {
            "tags": ["Graph Store"],
            "summary": "Delete a graph (bearer token)",
            "parameters": _GRAPH,
            "responses": {"204": {"description": "deleted"}, **_ERRORS},
        },
    },
}
