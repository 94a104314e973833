"""The SPARQL 1.1 Graph Store Protocol on ``/store``: ``?graph=IRI`` or ``?default``.

GET is open like any query; PUT (replace), POST (add; without a graph name, into a new graph the
server names) and DELETE need the bearer token and run on the single writer thread.
"""

from __future__ import annotations

import uuid

import pyoxigraph as ox
from pyoxigraph import DefaultGraph, NamedNode, Quad
from starlette.requests import Request
from starlette.responses import Response

from core.errors import InputError
from policykb.server.engine import iri_of
from policykb.server.errors import HTTPProblem
from policykb.server.formats import UPLOAD_FORMATS, negotiate, offered
from policykb.server.sparql import media_type, read_body, state_of
from policykb.server.state import ServerState


def _target(request: Request, required: bool = True) -> NamedNode | DefaultGraph | None:
    params = request.query_params
    graph, default = params.get("graph"), "default" in params
    if graph is not None and default:
        raise InputError("give either ?graph=IRI or ?default, not both")
    if graph is not None:
        return iri_of(graph, "graph")
    if default:
        return DefaultGraph()
    if required:
        raise InputError("name a graph: ?graph=IRI or ?default")
    return None


def _exists(state: ServerState, graph: NamedNode | DefaultGraph) -> bool:
    if isinstance(graph, DefaultGraph):
        return True  # the default graph always exists, possibly empty
    result = state.store.query(f"ASK {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
    return bool(getattr(result, "value", False))


async def store_get(request: Request) -> Response:
    state = state_of(request)
    target = _target(request)
    fmt = negotiate(request.headers.get("accept"), "graph")
    if fmt is None:
        raise HTTPProblem(406, "not_acceptable", f"graphs are offered as {offered('graph')}")

    def job(cancel):
        if target is not None and not _exists(state, target):
            raise HTTPProblem(404, "not_found", f"no graph {target}")
        return state.engine.graph_triples(target, fmt, cancel)

    body = await state.reads.run(job)
    return Response(body, media_type=fmt.content_type, headers={"Vary": "Accept"})


async def _upload(request: Request, graph: NamedNode | DefaultGraph) -> list[ox.Triple]:
    state = state_of(request)
    media = media_type(request)
    if media not in UPLOAD_FORMATS:
        raise HTTPProblem(415, "unsupported_media_type", f"send RDF as one of: {', '.join(UPLOAD_FORMATS)}")
    body = await read_body(request, state.max_body)
    base = graph.value if isinstance(graph, NamedNode) else str(request.url.replace(query=None))
    try:
        return [
            ox.Triple(q.subject, q.predicate, q.object)
            for q in ox.parse(body, format=UPLOAD_FORMATS[media], base_iri=base)
        ]
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"cannot parse the body as {media}: {' '.join(str(exc).split())}") from None


async def store_put(request: Request) -> Response:
    state = state_of(request)
    state.authorize(request)
    target = _target(request)
    triples = await _upload(request, target)
    where = "DEFAULT" if isinstance(target, DefaultGraph) else f"GRAPH {target}"
    data = " ".join(f"{t.subject} {t.predicate} {t.object} ." for t in triples)
    inner = data if isinstance(target, DefaultGraph) else f"GRAPH {target} {{ {data} }}"
    # One update = one transaction: readers never see the graph half replaced.
    text = f"CLEAR SILENT {where} ;" + (f" INSERT DATA {{ {inner} }}" if triples else "")

    def job(cancel):
        existed = _exists(state, target)
        state.engine.update(text)
        return existed

    existed = await state.writes.run(job)
    state.changed()
    return Response(status_code=204 if existed else 201)


async def store_post(request: Request) -> Response:
    state = state_of(request)
    state.authorize(request)
    target = _target(request, required=False)
    created = target is None
    if target is None:  # no graph named: the server mints one and says where it is
        target = NamedNode(f"{state.store.base_iri.rstrip('/#')}/graph/upload/{uuid.uuid4().hex}")
    triples = await _upload(request, target)
    quads = [Quad(t.subject, t.predicate, t.object, target) for t in triples]

    def job(cancel):
        existed = not created and _exists(state, target)
        state.store.extend(quads)
        return existed

    existed = await state.writes.run(job)
    state.changed()
    if created:
        location = str(request.url.include_query_params(graph=target.value))
        return Response(status_code=201, headers={"Location": location})
    return Response(status_code=204 if existed else 201)


async def store_delete(request: Request) -> Response:
    state = state_of(request)
    state.authorize(request)
    target = _target(request)

    def job(cancel):
        if not _exists(state, target):
            raise HTTPProblem(404, "not_found", f"no graph {target}")
        if isinstance(target, DefaultGraph):
            state.engine.update("CLEAR DEFAULT")
        else:
            state.store.drop_graph(target)

    await state.writes.run(job)
    state.changed()
    return Response(status_code=204)
