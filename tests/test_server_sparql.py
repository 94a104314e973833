"""The SPARQL 1.1 endpoint of `policykb serve`: a real server process over a KB of the sample data,
driven by curl, SPARQLWrapper and httpx."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import xml.etree.ElementTree as ET
from collections.abc import Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
import pytest
from SPARQLWrapper import JSON, POST, TURTLE, SPARQLWrapper
from support.kbs import ROOT, build_sample_kb
from support.servers import bindings, policykb_server

TOKEN = "s3cret-test-token"
TOKEN_ENV = "POLICYKB_TEST_UPDATE_TOKEN"
CHUNK = "https://w3id.org/policykb/id/chunk/"
TITLES = "SELECT ?d ?t WHERE { ?d dcterms:title ?t } ORDER BY ?t"


@pytest.fixture(scope="module")
def server_kb(tmp_path_factory) -> Path:
    return build_sample_kb(
        tmp_path_factory.mktemp("sparql") / "kb",
        f'update_token_env = "{TOKEN_ENV}"\nresult_limit = 100\n'
        'cors_origins = "http://allowed.example"\nmax_upload_mb = 1\n',
    )


@pytest.fixture(scope="module")
def server(server_kb) -> Iterator[str]:
    with policykb_server(server_kb, {TOKEN_ENV: TOKEN}) as base:
        yield base


# --- queries: clients, methods, formats -----------------------------------------------------------
def test_curl_get_select_json(server):
    out = subprocess.run(
        [
            "curl",
            "-sS",
            "-G",
            f"{server}/sparql",
            "--data-urlencode",
            f"query={TITLES}",
            "-H",
            "Accept: application/sparql-results+json",
            "-w",
            "\n%{http_code} %{content_type}",
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    body, _, status = out.rpartition("\n")
    assert status.startswith("200 application/sparql-results+json")
    titles = [row["t"]["value"] for row in json.loads(body)["results"]["bindings"]]
    assert "Renewable Energy Law" in titles and titles == sorted(titles)


def test_curl_post_direct_and_form(server):
    direct = subprocess.run(
        [
            "curl",
            "-sS",
            "-X",
            "POST",
            f"{server}/sparql",
            "-H",
            "Content-Type: application/sparql-query",
            "-H",
            "Accept: text/csv",
            "--data-binary",
            TITLES,
        ],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    form = subprocess.run(
        ["curl", "-sS", f"{server}/sparql", "-H", "Accept: text/csv", "--data-urlencode", f"query={TITLES}"],
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert direct == form
    assert direct.splitlines()[0] == "d,t" and "Renewable Energy Law" in direct


def test_sparqlwrapper_select_ask_construct(server):
    client = SPARQLWrapper(f"{server}/sparql")
    client.setQuery("PREFIX dcterms: <http://purl.org/dc/terms/> SELECT ?t WHERE { ?d dcterms:title ?t }")
    client.setReturnFormat(JSON)
    rows = client.query().convert()["results"]["bindings"]
    assert {"type": "literal", "value": "Renewable Energy Law"} in [r["t"] for r in rows]

    client.setMethod(POST)  # URL-encoded form, with SPARQLWrapper's extra format/output parameters
    client.setQuery('ASK { ?a skos:prefLabel "Jiangsu Province"@en }')
    assert client.query().convert()["boolean"] is True

    client.setQuery("CONSTRUCT { ?d dcterms:title ?t } WHERE { ?d a pkb:Law ; dcterms:title ?t }")
    client.setReturnFormat(TURTLE)
    turtle = client.query().convert()
    triples = list(ox.parse(turtle, format=ox.RdfFormat.TURTLE))
    assert [t.object.value for t in triples] == ["Renewable Energy Law"]


@pytest.mark.parametrize(
    ("accept", "media", "check"),
    [
        (
            "application/sparql-results+xml",
            "application/sparql-results+xml",
            lambda b: ET.fromstring(b).tag.endswith("sparql"),
        ),
        ("text/tab-separated-values", "text/tab-separated-values", lambda b: b.splitlines()[0] == b"?d\t?t"),
        (
            "text/csv;q=0.4, application/sparql-results+xml;q=0.9",
            "application/sparql-results+xml",
            lambda b: b"<sparql" in b,
        ),
        ("application/json", "application/sparql-results+json", lambda b: "bindings" in json.loads(b)["results"]),
        ("*/*", "application/sparql-results+json", lambda b: json.loads(b)["head"]["vars"] == ["d", "t"]),
    ],
)
def test_select_formats(server, accept, media, check):
    response = httpx.get(f"{server}/sparql", params={"query": TITLES}, headers={"Accept": accept})
    assert response.status_code == 200 and response.headers["content-type"].startswith(media)
    assert check(response.content)


@pytest.mark.parametrize(
    ("accept", "fmt"),
    [
        ("text/turtle", ox.RdfFormat.TURTLE),
        ("application/n-triples", ox.RdfFormat.N_TRIPLES),
        ("application/ld+json", ox.RdfFormat.JSON_LD),
        ("application/rdf+xml", ox.RdfFormat.RDF_XML),
    ],
)
def test_construct_formats(server, accept, fmt):
    query = "CONSTRUCT { ?d dcterms:title ?t } WHERE { ?d dcterms:title ?t }"
    response = httpx.get(f"{server}/sparql", params={"query": query}, headers={"Accept": accept})
    assert response.status_code == 200 and response.headers["content-type"].startswith(accept)
    triples = list(ox.parse(response.content, format=fmt))
    assert len(triples) == len(bindings(httpx.get(f"{server}/sparql", params={"query": TITLES})))


def test_not_acceptable(server):
    picture = httpx.get(f"{server}/sparql", params={"query": TITLES}, headers={"Accept": "image/png"})
    assert picture.status_code == 406 and picture.json()["error"] == "not_acceptable"
    # Turtle is a graph format: a SELECT cannot be served as Turtle.
    turtle = httpx.get(f"{server}/sparql", params={"query": TITLES}, headers={"Accept": "text/turtle"})
    assert turtle.status_code == 406 and "text/csv" in turtle.json()["message"]


def test_syntax_error_has_message_and_position(server):
    response = httpx.get(f"{server}/sparql", params={"query": "SELECT ?x WHERE {\n  ?x ?y \n}"})
    body = response.json()
    assert response.status_code == 400 and body["error"] == "query_syntax"
    assert body["line"] == 3 and isinstance(body["column"], int) and "line 3" in body["message"]


def test_dataset_parameters(server):
    query = "SELECT DISTINCT ?s WHERE { ?s ?p ?o }"
    union = bindings(httpx.get(f"{server}/sparql", params={"query": query}))
    one = bindings(
        httpx.get(f"{server}/sparql", params={"query": query, "default-graph-uri": CHUNK + "nb-t-32004-2018-0"})
    )
    assert len(one) == 1 < len(union)
    graphs = "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }"
    named = [CHUNK + "renewable-energy-law-0", CHUNK + "gb-t-19964-2012-0"]
    seen = bindings(httpx.post(f"{server}/sparql", data={"query": graphs, "named-graph-uri": named}))
    assert sorted(r["g"] for r in seen) == sorted(named)


def test_result_limit_cuts_and_says_so(server):
    everything = "SELECT * WHERE { ?s ?p ?o }"  # 168 quads > the test limit of 100
    response = httpx.get(f"{server}/sparql", params={"query": everything})
    assert len(bindings(response)) == 100 and response.headers["x-sparql-maxrows"] == "100"
    graph = httpx.get(
        f"{server}/sparql",
        params={"query": "CONSTRUCT WHERE { ?s ?p ?o }"},
        headers={"Accept": "application/n-triples"},
    )
    assert len(graph.text.splitlines()) == 100 and graph.headers["x-sparql-maxrows"] == "100"
    small = httpx.get(f"{server}/sparql", params={"query": TITLES})
    assert "x-sparql-maxrows" not in small.headers


@pytest.mark.parametrize("accept", ["application/sparql-results+json", "application/sparql-results+xml", "text/csv"])
def test_result_limit_is_exact_when_values_look_like_rows(server, accept):
    """Values full of row-like text (',{', '<result>', line breaks) must not cut a result within the limit."""
    tricky = ",{,{\n<result>,{}" * 3
    values = " ".join(f'(<urn:test:t{i}> "{i}{tricky}")' for i in range(60))
    update = f"INSERT {{ GRAPH <urn:test:tricky> {{ ?s <urn:test:v> ?v }} }} WHERE {{ VALUES (?s ?v) {{ {values} }} }}"
    auth = {"Authorization": f"Bearer {TOKEN}", "Content-Type": "application/sparql-update"}
    assert httpx.post(f"{server}/sparql", content=update.replace("\n", "\\n"), headers=auth).status_code == 204
    query = "SELECT ?s ?v WHERE { GRAPH <urn:test:tricky> { ?s ?p ?v } }"
    response = httpx.get(f"{server}/sparql", params={"query": query}, headers={"Accept": accept})
    assert response.status_code == 200 and "x-sparql-maxrows" not in response.headers
    if accept == "text/csv":  # lossy, so pyoxigraph does not parse it
        values = [row["v"] for row in csv.DictReader(io.StringIO(response.text, newline=""))]
    else:
        fmt = ox.QueryResultsFormat.XML if accept.endswith("xml") else ox.QueryResultsFormat.JSON
        values = [row["v"].value for row in ox.parse_query_results(response.content, format=fmt)]
    assert len(values) == 60 and all(v.endswith(tricky) for v in values)


def test_service_description(server):
    response = httpx.get(f"{server}/sparql")
    assert response.status_code == 200 and response.headers["content-type"].startswith("text/turtle")
    sd = "http://www.w3.org/ns/sparql-service-description#"
    triples = list(ox.parse(response.content, format=ox.RdfFormat.TURTLE))
    values = {(t.predicate.value, t.object.value) for t in triples}
    assert (sd + "endpoint", f"{server}/sparql") in values
    assert (sd + "supportedLanguage", sd + "SPARQL11Query") in values
    assert (sd + "supportedLanguage", sd + "SPARQL11Update") in values  # a token is configured
    assert (sd + "feature", sd + "UnionDefaultGraph") in values


# --- writes ---------------------------------------------------------------------------------------
def test_update_needs_the_bearer_token(server, server_kb):
    insert = 'INSERT DATA { GRAPH <urn:test:g1> { <urn:test:s> <urn:test:p> "written" } }'
    ask = {"query": 'ASK { <urn:test:s> <urn:test:p> "written" }'}
    anonymous = httpx.post(f"{server}/sparql", data={"update": insert})
    assert anonymous.status_code == 401 and anonymous.headers["www-authenticate"].startswith("Bearer")
    wrong = httpx.post(
        f"{server}/sparql",
        content=insert,
        headers={"Content-Type": "application/sparql-update", "Authorization": "Bearer nope"},
    )
    assert wrong.status_code == 401 and 'error="invalid_token"' in wrong.headers["www-authenticate"]
    assert httpx.get(f"{server}/sparql", params=ask).json()["boolean"] is False
    assert httpx.get(f"{server}/sparql", params={"update": insert}).status_code == 405

    client = SPARQLWrapper(f"{server}/sparql")
    client.setMethod(POST)
    client.addCustomHttpHeader("Authorization", f"Bearer {TOKEN}")
    client.setQuery(insert)
    assert client.query().response.status == 204
    assert httpx.get(f"{server}/sparql", params=ask).json()["boolean"] is True
    # the derived indexes do not cover the write until `policykb reindex` (store.freshness)
    assert httpx.get(f"{server}/health").json()["indexes"].startswith("stale since: a write through the server")
    assert (server_kb / "indexes" / "STALE").is_file()

    bad = httpx.post(
        f"{server}/sparql", data={"update": "INSERT DATA { oops }"}, headers={"Authorization": f"Bearer {TOKEN}"}
    )
    assert bad.status_code == 400 and bad.json()["error"] == "query_syntax"


def test_graph_store_protocol(server, tmp_path):
    auth = {"Authorization": f"Bearer {TOKEN}"}
    graph = "urn:test:gsp"
    url = f"{server}/store"
    turtle = '@prefix ex: <http://example.org/> . ex:a ex:p "one" ; ex:q ex:b .'
    assert (
        httpx.put(url, params={"graph": graph}, content=turtle, headers={"Content-Type": "text/turtle"}).status_code
        == 401
    )
    (tmp_path / "data.ttl").write_text(turtle, encoding="utf-8")
    put = subprocess.run(
        [
            "curl",
            "-sS",
            "-o",
            "/dev/null",
            "-w",
            "%{http_code}",
            "-X",
            "PUT",
            f"{url}?graph={graph}",
            "-H",
            "Content-Type: text/turtle",
            "-H",
            f"Authorization: Bearer {TOKEN}",
            "--data-binary",
            "@data.ttl",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        check=True,
        timeout=30,
    ).stdout
    assert put == "201"
    got = httpx.get(url, params={"graph": graph}, headers={"Accept": "application/n-triples"})
    assert got.status_code == 200 and len(got.text.splitlines()) == 2

    more = '<http://example.org/c> <http://example.org/p> "two" .'
    posted = httpx.post(
        url, params={"graph": graph}, content=more, headers={**auth, "Content-Type": "application/n-triples"}
    )
    assert posted.status_code == 204
    replaced = httpx.put(
        url, params={"graph": graph}, content=more, headers={**auth, "Content-Type": "application/n-triples"}
    )
    assert replaced.status_code == 204
    assert (
        len(httpx.get(url, params={"graph": graph}, headers={"Accept": "application/n-triples"}).text.splitlines()) == 1
    )

    created = httpx.post(url, content=more, headers={**auth, "Content-Type": "application/n-triples"})
    assert created.status_code == 201 and httpx.get(created.headers["location"]).status_code == 200

    broken = httpx.put(
        url, params={"graph": graph}, content="ex:a ex:b", headers={**auth, "Content-Type": "text/turtle"}
    )
    assert broken.status_code == 400 and broken.json()["error"] == "bad_input"
    assert (
        httpx.put(url, params={"graph": graph}, content=more, headers={**auth, "Content-Type": "image/png"}).status_code
        == 415
    )
    huge = httpx.post(
        url, params={"graph": graph}, content=b"#" * (2 * 1024 * 1024), headers={**auth, "Content-Type": "text/turtle"}
    )
    assert huge.status_code == 413

    assert httpx.delete(url, params={"graph": graph}, headers=auth).status_code == 204
    assert httpx.get(url, params={"graph": graph}).status_code == 404
    assert httpx.delete(url, params={"graph": graph}, headers=auth).status_code == 404


def test_read_only_by_default(tmp_path):
    from fastapi.testclient import TestClient

    from core.config import load_config
    from policykb.server.app import create_app
    from store.oxigraph_store import OxigraphStore

    store = OxigraphStore()
    with TestClient(create_app(load_config(kb_dir=tmp_path, environ={}), store, qa_opener=None)) as client:
        update = client.post("/sparql", content="CLEAR ALL", headers={"Content-Type": "application/sparql-update"})
        assert update.status_code == 403 and update.json()["error"] == "read_only"
        assert client.delete("/store", params={"default": ""}, headers={"Authorization": "Bearer x"}).status_code == 403
        sd = list(ox.parse(client.get("/sparql").content, format=ox.RdfFormat.TURTLE))
        assert not any(t.object.value.endswith("SPARQL11Update") for t in sd)


# --- the rest of the HTTP surface -----------------------------------------------------------------
def test_cors(server):
    allowed = httpx.get(f"{server}/sparql", params={"query": TITLES}, headers={"Origin": "http://allowed.example"})
    assert allowed.headers["access-control-allow-origin"] == "http://allowed.example"
    other = httpx.get(f"{server}/sparql", params={"query": TITLES}, headers={"Origin": "http://evil.example"})
    assert "access-control-allow-origin" not in other.headers
    preflight = httpx.options(
        f"{server}/sparql",
        headers={
            "Origin": "http://allowed.example",
            "Access-Control-Request-Method": "POST",
            "Access-Control-Request-Headers": "authorization, content-type",
        },
    )
    assert preflight.status_code == 200 and "POST" in preflight.headers["access-control-allow-methods"]


def test_health_openapi_and_docs(server):
    health = httpx.get(f"{server}/health").json()
    quads = bindings(
        httpx.get(f"{server}/sparql", params={"query": "SELECT (COUNT(*) AS ?n) WHERE { GRAPH ?g { ?s ?p ?o } }"})
    )
    assert health["status"] == "ok" and health["store"]["quads"] == int(quads[0]["n"])
    assert health["updates_enabled"] is True
    schema = httpx.get(f"{server}/openapi.json").json()
    assert {"/sparql", "/store", "/ask", "/health"} <= set(schema["paths"])
    assert "AskRequest" in json.dumps(schema["components"])
    docs = httpx.get(f"{server}/docs").text
    assert "/vendor/swagger-ui/swagger-ui-bundle.js" in docs and "cdn" not in docs.lower()
    assert httpx.get(f"{server}/vendor/swagger-ui/swagger-ui-bundle.js").status_code == 200
    missing = httpx.get(f"{server}/no/such/page")
    assert missing.status_code == 404 and missing.json()["error"] == "not_found"


def test_remote_store_backend(tmp_path):
    """Over a remote SPARQL store (here `oxigraph serve`) the endpoint works through the RDFStore API."""
    from fastapi.testclient import TestClient
    from support.servers import oxigraph_server

    from core.config import load_config
    from policykb.server.app import create_app
    from store.remote import SparqlEndpointStore

    with oxigraph_server(tmp_path / "oxigraph") as base:
        store = SparqlEndpointStore(f"{base}/query", f"{base}/update", f"{base}/store")
        store.load(ROOT / "examples" / "sample-kb.trig")
        config = load_config(kb_dir=tmp_path, environ={"POLICYKB_SERVER__RESULT_LIMIT": "5"})
        with TestClient(create_app(config, store, qa_opener=None)) as client:
            rows = client.get("/sparql", params={"query": TITLES}).json()["results"]["bindings"]
            assert len(rows) == 5
            csv_text = client.get("/sparql", params={"query": TITLES}, headers={"Accept": "text/csv"})
            assert csv_text.headers["x-sparql-maxrows"] == "5" and len(csv_text.text.splitlines()) == 6
            ask = client.get(
                "/sparql", params={"query": "ASK { ?s ?p ?o }"}, headers={"Accept": "text/tab-separated-values"}
            )
            assert ask.status_code == 200
            graph = client.get("/sparql", params={"query": "CONSTRUCT WHERE { ?d dcterms:title ?t }"})
            assert len(list(ox.parse(graph.content, format=ox.RdfFormat.TURTLE))) == 5
            chunk = CHUNK + "nb-t-32004-2018-0"
            assert (
                len(
                    client.get(
                        "/store", params={"graph": chunk}, headers={"Accept": "application/n-triples"}
                    ).text.splitlines()
                )
                == 1
            )
            refused = client.get("/sparql", params={"query": TITLES, "default-graph-uri": chunk})
            assert refused.status_code == 400
