"""Every HTTP endpoint of `policykb serve`, fuzzed from the app's own OpenAPI document (schemathesis).

The app runs in-process (ASGI) over the sample KB, with writes enabled (the fuzzer sends the
bearer token) and an answering API that needs no big model: retrieval 'naive-kg', lexical
extractive scoring, and an LLM endpoint where nothing listens (so 'llm' answers are a 503).
Checks on every response: no 5xx but the documented 503/504; status, content type, headers and
body conform to the schema; every error is the project's one-line JSON problem.
"""

from __future__ import annotations

import json
import os
from collections import Counter
from collections.abc import Iterator

import httpx
import pytest
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    status_code_conformance,
)
from support.kbs import build_sample_kb
from support.servers import free_port, uvicorn_server

TOKEN = "fuzz-token"
TOKEN_ENV = "POLICYKB_FUZZ_UPDATE_TOKEN"
EXAMPLES = 25  # per operation: the whole module stays well under a minute and a half
OPERATIONS = [
    ("GET", "/sparql"),
    ("POST", "/sparql"),
    ("GET", "/store"),
    ("PUT", "/store"),
    ("POST", "/store"),
    ("DELETE", "/store"),
    ("POST", "/ask"),
    ("POST", "/ask/stream"),
    ("GET", "/ask/options"),
    ("GET", "/health"),
]


@pytest.fixture(scope="module")
def server(tmp_path_factory) -> Iterator[str]:
    """The app on a real uvicorn in a thread of this process, on a free loopback port.

    Not schemathesis's in-process ASGI client: that runs the app's lifespan around every call,
    and the shutdown closes the store (see test_regression_store_close_is_idempotent)."""
    from core.config import load_config
    from policykb.server.app import create_app

    kb = build_sample_kb(tmp_path_factory.mktemp("fuzz") / "kb")
    (kb / "policykb.toml").write_text(
        f'[server]\nupdate_token_env = "{TOKEN_ENV}"\nmax_upload_mb = 1\n'
        '[answer]\nmode = "naive-kg"\nscoring = "lexical"\n'
        f'[llm]\nprovider = "openai"\nbase_url = "http://127.0.0.1:{free_port()}/v1"\nmodel = "none"\nretries = 0\n',
        encoding="utf-8",
    )
    config = load_config(kb_dir=kb)
    os.environ[TOKEN_ENV] = TOKEN  # read once, by create_app: writes are fuzzed too
    try:
        app = create_app(config)
    finally:
        del os.environ[TOKEN_ENV]
    with uvicorn_server(app) as base:
        # The first question opens the answering API (seconds): not part of any example's time.
        assert httpx.post(f"{base}/ask", json={"question": "solar"}, timeout=300).status_code == 200
        yield base


@pytest.fixture(scope="module")
def schema(server):
    return schemathesis.openapi.from_url(f"{server}/openapi.json")


def test_every_documented_operation_is_fuzzed(schema):
    documented = {(op.method.upper(), op.path) for op in (r.ok() for r in schema.get_all_operations())}
    assert documented == set(OPERATIONS)


# --- the checks ---------------------------------------------------------------------------------
def one_line_problem(ctx, response, case) -> bool | None:
    """Every 4xx/5xx body is ``{"error", "message", "status"}`` JSON with a one-line message."""
    if response.status_code < 400:
        return None
    assert response.headers.get("content-type", [""])[0].startswith("application/json"), response.headers
    body = json.loads(response.content)
    assert set(body) >= {"error", "message", "status"}, body
    assert body["status"] == response.status_code, body
    assert isinstance(body["error"], str) and body["error"], body
    assert isinstance(body["message"], str) and body["message"] and "\n" not in body["message"], body
    return True


def no_undocumented_server_error(ctx, response, case) -> bool | None:
    """5xx only where documented as a condition of the service: busy (503) or deadline (504).
    An 'llm' answer's 503 (the model endpoint is down) is one of those."""
    if response.status_code in (503, 504):
        return True
    return not_a_server_error(ctx, response, case)


CHECKS = [
    no_undocumented_server_error,
    status_code_conformance,
    content_type_conformance,
    response_headers_conformance,
    response_schema_conformance,
    one_line_problem,
]


@pytest.mark.parametrize(("method", "path"), OPERATIONS)
def test_fuzz(server, schema, method, path):
    operation = schema[path][method]
    # Data that fits the schema and data that does not (wrong types, missing fields, bad media).
    cases = st.one_of(operation.as_strategy(GenerationMode.POSITIVE), operation.as_strategy(GenerationMode.NEGATIVE))
    statuses: Counter[int] = Counter()

    @settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck))
    @given(case=cases, auth=st.booleans())
    def run(case, auth):
        headers = {"Authorization": f"Bearer {TOKEN}"} if auth else {}
        response = case.call(base_url=server, headers=headers, timeout=120)
        statuses[response.status_code] += 1
        case.validate_response(response, checks=CHECKS)

    run()
    print(f"{method} {path}: {sum(statuses.values())} requests, statuses {dict(sorted(statuses.items()))}")


# Random text is rarely SPARQL: these well-formed requests reach evaluation and every result format.
QUERIES = [
    "SELECT ?d ?t WHERE { ?d dcterms:title ?t } ORDER BY ?t",
    "SELECT (COUNT(*) AS ?n) WHERE { ?s ?p ?o }",
    "ASK { ?s a ?type }",
    "CONSTRUCT { ?s ?p ?o } WHERE { ?s ?p ?o } LIMIT 20",
    "DESCRIBE ?s WHERE { ?s ?p ?o } LIMIT 2",
    "SELECT ?g (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } } GROUP BY ?g",
]
ACCEPTS = [
    None, "*/*", "application/sparql-results+json", "application/sparql-results+xml", "text/csv",
    "text/tab-separated-values", "text/turtle", "application/n-triples", "application/ld+json",
    "application/rdf+xml", "image/png", "text/html;q=0.9, */*;q=0.1", "garbage",
]


@settings(max_examples=EXAMPLES, suppress_health_check=list(HealthCheck))
@given(query=st.sampled_from(QUERIES), accept=st.sampled_from(ACCEPTS), post=st.booleans(), graphs=st.lists(st.sampled_from(
    ["https://w3id.org/policykb/graph/ontology", "urn:x-none", "not an iri"]), max_size=2))
def test_fuzz_well_formed_queries(server, schema, query, accept, post, graphs):
    operation = schema["/sparql"]["POST" if post else "GET"]
    params = {"default-graph-uri": graphs} if graphs else {}
    headers = {"Accept": accept} if accept else {}
    if post:
        case = operation.Case(query=params, body={"query": query}, media_type="application/x-www-form-urlencoded", headers=headers)
    else:
        case = operation.Case(query={**params, "query": query}, headers=headers)
    response = case.call(base_url=server, timeout=120)
    assert response.status_code in (200, 400, 406), response.text
    case.validate_response(response, checks=CHECKS)


# --- regressions: what the fuzzer found -----------------------------------------------------------
def test_regression_ask_stream_events_match_the_documented_event_schema(server, schema):
    """The stream was documented as one string; SSE validators check each event against the
    schema, so it now describes an event: its name and its JSON data (done = POST /ask's body)."""
    operation = schema["/ask/stream"]["POST"]
    for body in ({"question": "Who supports rooftop photovoltaic projects?"}, {"question": "solar", "answer": "llm"}):
        case = operation.Case(body=body, media_type="application/json")
        response = case.call(base_url=server, timeout=120)
        assert response.status_code in (200, 503), response.text
        case.validate_response(response, checks=CHECKS)


def test_regression_store_close_is_idempotent(tmp_path):
    """schemathesis's ASGI client runs the app's lifespan around every request; the second
    shutdown closed the store again and raised AttributeError."""
    from store.oxigraph_store import OxigraphStore

    store = OxigraphStore(tmp_path / "store")
    store.close()
    store.close()
    OxigraphStore(tmp_path / "store").close()  # the lock was released by the first close
