"""The SPARQL 1.1 Protocol endpoint (``/sparql``) and the Graph Store Protocol (``/store``).

Reads are open; writes (SPARQL Update, Graph Store PUT/POST/DELETE) need the bearer token named in
``[server] update_token_env`` and go through a single writer thread, so they are serialized while
queries keep reading their own snapshots.

The handlers take a Starlette request and return a response; ``policykb.server.protocol`` routes
``/sparql`` and ``/store`` to them ahead of FastAPI.
"""

from __future__ import annotations

from urllib.parse import parse_qs

import pyoxigraph as ox
from starlette.requests import Request
from starlette.responses import Response

from core.errors import InputError
from policykb.server.engine import QueryRequest, serialize_graph
from policykb.server.errors import HTTPProblem
from policykb.server.formats import acceptable_at_all, negotiate, offered
from policykb.server.state import ServerState


def state_of(request: Request) -> ServerState:
    return request.app.state.policykb


def media_type(request: Request) -> str:
    return request.headers.get("content-type", "").split(";")[0].strip().lower()


async def read_body(request: Request, max_bytes: int) -> bytes:
    declared = request.headers.get("content-length")
    if declared and declared.isdigit() and int(declared) > max_bytes:
        raise HTTPProblem(413, "too_large", f"request body over the server limit of {max_bytes:,} bytes")
    chunks: list[bytes] = []
    size = 0
    async for chunk in request.stream():
        size += len(chunk)
        if size > max_bytes:
            raise HTTPProblem(413, "too_large", f"request body over the server limit of {max_bytes:,} bytes")
        chunks.append(chunk)
    return b"".join(chunks)


def _url_params(request: Request) -> dict[str, list[str]]:
    return parse_qs(request.scope["query_string"].decode("latin-1"), keep_blank_values=True)


def _text(data: bytes) -> str:
    try:
        return data.decode("utf-8")
    except UnicodeDecodeError as exc:
        raise InputError(f"request body is not UTF-8: {exc}") from None


def _one(values: dict[str, list[str]], name: str) -> str | None:
    found = values.get(name, [])
    if len(found) > 1:
        raise InputError(f"more than one '{name}' parameter")
    return found[0] if found else None


# --- SPARQL 1.1 Protocol -------------------------------------------------------------------------
async def sparql_get(request: Request) -> Response:
    params = _url_params(request)
    if "update" in params:
        raise HTTPProblem(405, "method_not_allowed", "SPARQL Update must be sent with POST", {"Allow": "POST"})
    query = _one(params, "query")
    if query is None:
        return service_description(request)
    return await _query(request, _dataset(query, params))


async def sparql_post(request: Request) -> Response:
    state = state_of(request)
    media = media_type(request)
    url_params = _url_params(request)
    if media == "application/sparql-update":
        state.authorize(request)  # before reading a possibly large body
        body = await read_body(request, state.max_body)
        return await _update(request, _text(body), url_params)
    body = await read_body(request, state.max_body)
    if media == "application/x-www-form-urlencoded":
        form = parse_qs(_text(body), keep_blank_values=True)
        query, update = _one(form, "query"), _one(form, "update")
        if (query is None) == (update is None):
            raise InputError("send exactly one of the form fields 'query' and 'update'")
        if update is not None:
            state.authorize(request)
            return await _update(request, update, form)
        return await _query(request, _dataset(query or "", form))
    if media == "application/sparql-query":
        return await _query(request, _dataset(_text(body), url_params))
    raise HTTPProblem(
        415,
        "unsupported_media_type",
        "POST a query as application/sparql-query or application/x-www-form-urlencoded, "
        "an update as application/sparql-update",
    )


def _dataset(query: str, params: dict[str, list[str]]) -> QueryRequest:
    if not query.strip():
        raise InputError("empty query")
    return QueryRequest(query, tuple(params.get("default-graph-uri", [])), tuple(params.get("named-graph-uri", [])))


async def _query(request: Request, query: QueryRequest) -> Response:
    state = state_of(request)
    accept = request.headers.get("accept")
    if not acceptable_at_all(accept):  # refuse before spending time on the query
        raise HTTPProblem(406, "not_acceptable", f"offered: {offered('results')}, {offered('graph')}")
    limit = state.config.server.result_limit
    payload = await state.query(query, accept, limit)
    headers = {"Vary": "Accept"}
    if payload.truncated:
        headers["X-SPARQL-MaxRows"] = str(limit)  # Virtuoso's header for a cut result
    return Response(payload.body, media_type=payload.format.content_type, headers=headers)


async def _update(request: Request, text: str, params: dict[str, list[str]]) -> Response:
    state = state_of(request)
    if params.get("using-graph-uri") or params.get("using-named-graph-uri"):
        raise InputError("using-graph-uri/using-named-graph-uri are not supported; write USING in the update")
    if not text.strip():
        raise InputError("empty update")
    await state.writes.run(lambda cancel: state.engine.update(text))
    state.changed()
    return Response(status_code=204)


def service_description(request: Request) -> Response:
    """SPARQL 1.1 Service Description of this endpoint (Turtle by default)."""
    state = state_of(request)
    fmt = negotiate(request.headers.get("accept"), "graph")
    if fmt is None:
        raise HTTPProblem(406, "not_acceptable", f"the service description is offered as {offered('graph')}")
    endpoint = str(request.url.replace(query=None, fragment=None))
    languages = "sd:SPARQL11Query" + (", sd:SPARQL11Update" if state.token else "")
    ttl = f"""@prefix sd: <http://www.w3.org/ns/sparql-service-description#> .
@prefix formats: <http://www.w3.org/ns/formats/> .
@prefix dcterms: <http://purl.org/dc/terms/> .
[] a sd:Service ;
    dcterms:title "policykb SPARQL endpoint" ;
    sd:endpoint <{endpoint}> ;
    sd:supportedLanguage {languages} ;
    sd:resultFormat formats:SPARQL_Results_JSON, formats:SPARQL_Results_XML, formats:SPARQL_Results_CSV,
        formats:SPARQL_Results_TSV, formats:Turtle, formats:N-Triples, formats:JSON-LD, formats:RDF_XML ;
    sd:feature sd:UnionDefaultGraph ;
    sd:defaultEntailmentRegime <http://www.w3.org/ns/entailment/Simple> ;
    sd:defaultDataset [ a sd:Dataset ;
        sd:defaultGraph [ a sd:Graph ; dcterms:description "the union of all named graphs" ] ] .
""".encode()
    if fmt.native != ox.RdfFormat.TURTLE:
        nt = ox.serialize(ox.parse(ttl, format=ox.RdfFormat.TURTLE), format=ox.RdfFormat.N_TRIPLES) or b""
        ttl = serialize_graph(nt, fmt)
    return Response(ttl, media_type=fmt.content_type, headers={"Vary": "Accept"})
