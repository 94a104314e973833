"""Any SPARQL 1.1 endpoint: Query and Update protocols, Graph Store Protocol for bulk loads.

Tested against a real ``oxigraph serve`` and a real Virtuoso 7.2 (``dialect="virtuoso"``); written
against the W3C protocols, so GraphDB or Fuseki work the same. The endpoint must treat its default
graph as the union of named graphs (Oxigraph: ``--union-default-graph``; GraphDB and Virtuoso do so
by default) — policykb writes every triple into a named graph.

Virtuoso 7.2 quirks handled here (``dialect="virtuoso"``): blank nodes come back as
``nodeID://b1`` labels, ASK answers as a one-cell table ``__ASK_RETVAL``, booleans as ``"1"``,
syntax errors carry a line but no column, and its own system graphs (quad-map metadata, the
service description) sit among the named graphs.
"""

from __future__ import annotations

import json
import os
import re
from collections.abc import Iterable, Iterator
from pathlib import Path

import httpx
import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad, QueryResultsFormat, RdfFormat

from core.config import StoreConfig
from core.errors import (
    InputError,
    QuerySyntaxError,
    StoreConnectionError,
    StoreError,
    UnsupportedOperationError,
)
from store.base import (
    AskResult,
    Capabilities,
    GraphResult,
    QueryResult,
    RDFStore,
    SelectResult,
    check_rdf_file,
    file_graph,
    rdf_format,
)
from store.errors import syntax_error
from store.oxigraph_store import to_result

_ACCEPT_QUERY = "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"
_ACCEPT_RESULTS = "application/sparql-results+json"
_ACCEPT_GRAPH = "application/n-triples, text/turtle;q=0.8"
# The query form is the first keyword after the prologue (comments, PREFIX, BASE, Virtuoso DEFINEs).
_PROLOGUE = re.compile(
    r"(?:\s+|#[^\n]*|PREFIX\s+[^\s:]*:\s*<[^>]*>|BASE\s*<[^>]*>|DEFINE\s+\S+\s+(?:<[^>]*>|\"[^\"]*\"|'[^']*'|\S+))*",
    re.IGNORECASE,
)
_XSD_BOOLEAN = "http://www.w3.org/2001/XMLSchema#boolean"
# Graphs every Virtuoso holds: its quad-map metadata and the LDP vocabulary (plus the service
# description graph, found by its sd:Service). They are not policykb's, so the store hides them.
VIRTUOSO_SYSTEM_GRAPHS = ("http://www.openlinksw.com/schemas/virtrdf#", "http://www.w3.org/ns/ldp#")
# "SP030: SPARQL compiler, line 4: syntax error at ')' before '}'" (or "before end of text").
_VIRTUOSO_SYNTAX = re.compile(r"line (\d+): (.*? at '(.*?)' before (?:'(.*?)'|end of text))", re.DOTALL)


# A query whose last clause is a LIMIT within the endpoint's row cap cannot have been cut by it.
_FINAL_LIMIT = re.compile(r"\bLIMIT\s+(\d+)\s*(?:OFFSET\s+\d+\s*)?$|\bOFFSET\s+\d+\s+LIMIT\s+(\d+)\s*$", re.IGNORECASE)


class ResultCapError(StoreError):
    """The endpoint may have cut a SELECT result at its row cap (Virtuoso's ResultSetMaxRows)."""

    def __init__(self, url: str, rows: int):
        self.rows = rows
        super().__init__(
            f"{url} returned {rows} rows, its row cap, so the result may be incomplete: raise the cap "
            "(Virtuoso: [SPARQL] ResultSetMaxRows in virtuoso.ini) or page with LIMIT/OFFSET"
        )


def query_form(sparql: str) -> str:
    """SELECT, ASK, CONSTRUCT or DESCRIBE (upper case), or "" when the text does not say."""
    match = re.match(r"[A-Za-z]+", sparql[_PROLOGUE.match(sparql).end() :])  # type: ignore[union-attr]
    return match.group(0).upper() if match else ""


class SparqlEndpointStore(RDFStore):
    """A remote SPARQL 1.1 service behind the RDFStore interface."""

    def __init__(
        self,
        query_endpoint: str,
        update_endpoint: str = "",
        graph_store_endpoint: str = "",
        timeout_s: float = 60.0,
        bulk_load_param: str = "",
        auth_token: str | None = None,
        base_iri: str | None = None,
        auth_user: str = "",
        auth_password: str | None = None,
        dialect: str = "sparql11",
    ):
        if not query_endpoint:
            raise InputError("a remote store needs a query endpoint URL ([store] query_endpoint)")
        if base_iri:
            self.base_iri = base_iri
        self.query_endpoint = query_endpoint
        self.update_endpoint = update_endpoint
        self.graph_store_endpoint = graph_store_endpoint
        # A vendor switch for non-transactional bulk loads (Oxigraph: `no_transaction`). Safe here
        # because `load` checks the whole file's syntax before sending it.
        self.bulk_load_param = bulk_load_param
        self.dialect = dialect
        self._system_graphs: tuple[str, ...] | None = None if dialect == "virtuoso" else ()
        headers = {"Authorization": f"Bearer {auth_token}"} if auth_token else {}
        # Virtuoso's authenticated endpoints (/sparql-auth, /sparql-graph-crud-auth) ask for Digest.
        auth = httpx.DigestAuth(auth_user, auth_password or "") if auth_user else None
        self._digest = auth is not None
        self._http = httpx.Client(timeout=timeout_s, headers=headers, auth=auth)
        self.capabilities = Capabilities(
            persistent=True,
            updatable=bool(update_endpoint),
            named_graphs=True,
            union_default_graph=True,
            atomic_batches=True,  # each INSERT DATA request is one update operation
            native_bulk_load=bool(graph_store_endpoint),
        )

    @classmethod
    def from_config(cls, config: StoreConfig, base_iri: str | None = None) -> SparqlEndpointStore:
        secret = os.environ.get(config.auth_token_env) if config.auth_token_env else None
        return cls(
            config.query_endpoint,
            config.update_endpoint,
            config.graph_store_endpoint,
            config.timeout_s,
            config.bulk_load_param,
            None if config.auth_user else secret,  # with a user, the secret is its password
            base_iri,
            auth_user=config.auth_user,
            auth_password=secret if config.auth_user else None,
            dialect=config.dialect,
        )

    # --- HTTP -----------------------------------------------------------------------------------
    def _post(self, url: str, what: str, sparql: str = "", **kwargs) -> httpx.Response:
        try:
            response = self._http.post(url, **kwargs)
        except httpx.TimeoutException:
            raise StoreConnectionError(f"SPARQL endpoint {url} timed out during {what}") from None
        except httpx.HTTPError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreConnectionError(f"SPARQL endpoint {url} unreachable: {reason}") from None
        if response.status_code == 400:
            if self.dialect == "virtuoso":
                raise virtuoso_syntax_error(response.text, sparql)
            raise syntax_error(response.text.strip()[:500] or "bad request")
        if response.status_code >= 300:
            body = " ".join(response.text.split())[:300]
            raise StoreError(f"{what} at {url} failed with HTTP {response.status_code}: {body}")
        return response

    def _require_update(self) -> str:
        if not self.update_endpoint:
            raise UnsupportedOperationError("this store is read-only: no update endpoint configured")
        return self.update_endpoint

    # --- primitives -----------------------------------------------------------------------------
    def query(self, sparql: str) -> QueryResult:
        # Form-encoded POST (a SPARQL 1.1 Protocol option every server has): Virtuoso 7.2 never
        # answers a POST of application/sparql-query. The Accept header follows the query form
        # because Virtuoso sends CONSTRUCT results as a JSON s/p/o table when JSON is preferred.
        form = query_form(sparql)
        accept = _ACCEPT_GRAPH if form in ("CONSTRUCT", "DESCRIBE") else _ACCEPT_RESULTS if form else _ACCEPT_QUERY
        response = self._post(self.query_endpoint, "query", sparql, data={"query": sparql}, headers={"Accept": accept})
        ctype = response.headers.get("content-type", "").split(";")[0].strip()
        try:
            if ctype in ("application/sparql-results+json", "application/json"):
                if self.dialect == "virtuoso":
                    result = virtuoso_json_result(response.content, form)
                else:
                    result = to_result(ox.parse_query_results(response.content, QueryResultsFormat.JSON))
                self._check_cap(result, sparql, response.headers.get("x-sparql-maxrows"))
                return result
            if ctype == "application/sparql-results+xml":
                return to_result(ox.parse_query_results(response.content, QueryResultsFormat.XML))
            fmt = RdfFormat.TURTLE if ctype == "text/turtle" else RdfFormat.N_TRIPLES
            return GraphResult(tuple(q.triple for q in ox.parse(response.content, fmt)))
        except (SyntaxError, ValueError) as exc:
            raise StoreError(f"unreadable {ctype or 'untyped'} response from {self.query_endpoint}: {exc}") from None

    def _check_cap(self, result: QueryResult, sparql: str, cap: str | None) -> None:
        """Virtuoso sends X-SPARQL-MaxRows when a result reaches its cap, cut or not: never
        return a result that may be silently cut, unless the query's own LIMIT explains it."""
        if not cap or not isinstance(result, SelectResult) or len(result) < int(cap):
            return
        limit = _FINAL_LIMIT.search(sparql.strip())
        if limit and int(limit.group(1) or limit.group(2)) <= int(cap):
            return
        raise ResultCapError(self.query_endpoint, int(cap))

    def _select_all(self, sparql: str, order: str) -> Iterator[dict]:
        """Every row of a SELECT, in ``ORDER BY order`` pages of the cap's size where there is one."""
        try:
            yield from self.select(sparql).rows
            return
        except ResultCapError as cap:
            page = cap.rows
        offset = 0
        while True:
            rows = self.select(f"{sparql} ORDER BY {order} LIMIT {page} OFFSET {offset}").rows
            yield from rows
            if len(rows) < page:
                return
            offset += page

    def update(self, sparql: str) -> None:
        self._post(
            self._require_update(),
            "update",
            sparql,
            content=sparql.encode("utf-8"),
            headers={"Content-Type": "application/sparql-update"},
        )

    def extend(self, quads: Iterable[Quad]) -> int:
        batch = list(quads)
        if not batch:
            return 0
        # One request per call keeps the call atomic. N-Quads terms, as pyoxigraph prints them,
        # are valid (escaped) SPARQL terms, so no user string reaches the update unescaped.
        by_graph: dict[str, list[str]] = {}
        for q in batch:
            by_graph.setdefault(str(q.graph_name), []).append(f"{q.subject} {q.predicate} {q.object} .")
        body = "\n".join(f"GRAPH {g} {{\n" + "\n".join(lines) + "\n}" for g, lines in by_graph.items())
        if any(isinstance(t, ox.BlankNode) for q in batch for t in (q.subject, q.object)):
            # INSERT DATA may not hold blank nodes on Virtuoso (SP031); a template with one empty
            # solution means the same: one fresh node per label, shared within this request.
            self.update("INSERT {\n" + body + "\n} WHERE {}")
        else:
            self.update("INSERT DATA {\n" + body + "\n}")
        return len(batch)

    def drop_graph(self, graph: NamedNode | ox.BlankNode) -> None:
        if not isinstance(graph, NamedNode):
            raise InputError("a remote store can only drop graphs named by an IRI")
        self.update(f"DROP SILENT GRAPH {graph}")

    def _not_system(self) -> str:
        """A FILTER that hides the endpoint's own graphs from ``?g`` (empty when it has none)."""
        if self._system_graphs is None:
            found = self.select(
                "SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s a <http://www.w3.org/ns/sparql-service-description#Service> } }"
            )
            self._system_graphs = VIRTUOSO_SYSTEM_GRAPHS + tuple(str(row["g"].value) for row in found.rows if row["g"])  # type: ignore[union-attr]
        if not self._system_graphs:
            return ""
        return "FILTER(?g NOT IN (" + ", ".join(f"<{g}>" for g in self._system_graphs) + "))"

    def named_graphs(self) -> list[NamedNode | ox.BlankNode]:
        rows = self._select_all(f"SELECT DISTINCT ?g WHERE {{ GRAPH ?g {{ ?s ?p ?o }} {self._not_system()} }}", "?g")
        return [row["g"] for row in rows if row["g"] is not None]

    def iter_quads(self) -> Iterator[Quad]:
        for graph in sorted(self.named_graphs(), key=str):
            rows = self._select_all(f"SELECT ?s ?p ?o WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}", "?s ?p ?o")
            for row in rows:
                yield Quad(row["s"], row["p"], row["o"], graph)

    def count(self, graph: NamedNode | None = None) -> int:
        pattern = f"GRAPH {graph} {{ ?s ?p ?o }}" if graph is not None else f"GRAPH ?g {{ ?s ?p ?o }} {self._not_system()}"
        result = self.query(f"SELECT (COUNT(*) AS ?n) WHERE {{ {pattern} }}")
        if not isinstance(result, SelectResult) or not result.rows:
            raise StoreError("the endpoint returned no count")
        return int(result.rows[0]["n"].value)  # type: ignore[union-attr]

    def load(self, path: Path, format: str | None = None, graph: NamedNode | None = None) -> int:
        """Graph Store Protocol POST of the file when configured (streamed), else INSERT DATA."""
        path = Path(path)
        fmt = rdf_format(format or path)
        if not self.graph_store_endpoint or fmt.supports_datasets:
            return super().load(path, format, graph)
        self._require_update()
        count = check_rdf_file(path, fmt)
        target = graph or file_graph(self.base_iri, path)
        params = {"graph": target.value}
        if self.bulk_load_param:
            params[self.bulk_load_param] = ""
        with open(path, "rb") as body:
            self._post(
                self.graph_store_endpoint,
                "load",
                params=params,
                # Digest auth answers the first request with a challenge and resends it, which a
                # streamed body cannot be: send the bytes.
                content=body.read() if self._digest else body,
                headers={"Content-Type": fmt.media_type},
            )
        return count

    def close(self) -> None:
        self._http.close()


def virtuoso_json_result(content: bytes, form: str) -> QueryResult:
    """Virtuoso's JSON results made standard: ASK as a boolean, blank node labels, booleans."""
    data = json.loads(content)
    bindings = data.get("results", {}).get("bindings", [])
    if form == "ASK" and data.get("head", {}).get("vars") == ["__ASK_RETVAL"]:
        return AskResult(bool(bindings) and bindings[0]["__ASK_RETVAL"]["value"] not in ("0", "false"))
    for row in bindings:
        for term in row.values():
            if term.get("type") == "bnode":
                term["value"] = term["value"].removeprefix("nodeID://")  # "nodeID://b10001"
            elif term.get("datatype") == _XSD_BOOLEAN and term["value"] in ("0", "1"):
                term["value"] = "true" if term["value"] == "1" else "false"
    return to_result(ox.parse_query_results(json.dumps(data).encode(), QueryResultsFormat.JSON))


def virtuoso_syntax_error(message: str, sparql: str) -> QuerySyntaxError:
    """Virtuoso names the line and the offending token; the column is where that token sits."""
    match = _VIRTUOSO_SYNTAX.search(message)
    if not match:
        return syntax_error(message.split("\n\n")[0].strip()[:500] or "bad request")
    line, detail, token, following = int(match.group(1)), match.group(2), match.group(3), match.group(4)
    lines = sparql.split("\n")
    text = lines[line - 1] if 0 < line <= len(lines) else ""
    at = re.search(re.escape(token) + (r"\s*" + re.escape(following) if following else r"\s*$"), text) if token else None
    column = (at.start() if at else max(text.find(token), 0)) + 1
    return QuerySyntaxError(detail, line, column)
