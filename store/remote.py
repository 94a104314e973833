"""Any SPARQL 1.1 endpoint: Query and Update protocols, Graph Store Protocol for bulk loads.

Tested against a real ``oxigraph serve``; written against the W3C protocols only, so GraphDB,
Virtuoso, Fuseki or Oxigraph server work the same. The endpoint must treat its default graph as
the union of named graphs (Oxigraph: ``--union-default-graph``; GraphDB and Virtuoso do so by
default) — policykb writes every triple into a named graph.
"""

from __future__ import annotations

import os
from collections.abc import Iterable
from pathlib import Path

import httpx
import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad, QueryResultsFormat, RdfFormat

from core.config import StoreConfig
from core.errors import InputError, StoreConnectionError, StoreError, UnsupportedOperationError
from store.base import Capabilities, GraphResult, QueryResult, RDFStore, SelectResult, check_rdf_file, file_graph, rdf_format
from store.errors import syntax_error
from store.oxigraph_store import to_result

_ACCEPT_QUERY = "application/sparql-results+json, application/n-triples;q=0.9, text/turtle;q=0.8"


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
        headers = {"Authorization": f"Bearer {auth_token}"} if auth_token else {}
        self._http = httpx.Client(timeout=timeout_s, headers=headers)
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
        token = os.environ.get(config.auth_token_env) if config.auth_token_env else None
        return cls(
            config.query_endpoint,
            config.update_endpoint,
            config.graph_store_endpoint,
            config.timeout_s,
            config.bulk_load_param,
            token,
            base_iri,
        )

    # --- HTTP -----------------------------------------------------------------------------------
    def _post(self, url: str, what: str, **kwargs) -> httpx.Response:
        try:
            response = self._http.post(url, **kwargs)
        except httpx.TimeoutException:
            raise StoreConnectionError(f"SPARQL endpoint {url} timed out during {what}") from None
        except httpx.HTTPError as exc:
            reason = " ".join(str(exc).split()) or type(exc).__name__
            raise StoreConnectionError(f"SPARQL endpoint {url} unreachable: {reason}") from None
        if response.status_code == 400:
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
        response = self._post(
            self.query_endpoint,
            "query",
            content=sparql.encode("utf-8"),
            headers={"Content-Type": "application/sparql-query", "Accept": _ACCEPT_QUERY},
        )
        ctype = response.headers.get("content-type", "").split(";")[0].strip()
        try:
            if ctype in ("application/sparql-results+json", "application/json"):
                return to_result(ox.parse_query_results(response.content, QueryResultsFormat.JSON))
            if ctype == "application/sparql-results+xml":
                return to_result(ox.parse_query_results(response.content, QueryResultsFormat.XML))
            fmt = RdfFormat.TURTLE if ctype == "text/turtle" else RdfFormat.N_TRIPLES
            return GraphResult(tuple(q.triple for q in ox.parse(response.content, fmt)))
        except (SyntaxError, ValueError) as exc:
            raise StoreError(f"unreadable {ctype or 'untyped'} response from {self.query_endpoint}: {exc}") from None

    def update(self, sparql: str) -> None:
        self._post(
            self._require_update(),
            "update",
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
        self.update("INSERT DATA {\n" + body + "\n}")
        return len(batch)

    def drop_graph(self, graph: NamedNode | ox.BlankNode) -> None:
        if not isinstance(graph, NamedNode):
            raise InputError("a remote store can only drop graphs named by an IRI")
        self.update(f"DROP SILENT GRAPH {graph}")

    def named_graphs(self) -> list[NamedNode | ox.BlankNode]:
        result = self.select("SELECT DISTINCT ?g WHERE { GRAPH ?g { ?s ?p ?o } }")
        return [row["g"] for row in result.rows if row["g"] is not None]  # type: ignore[misc]

    def count(self, graph: NamedNode | None = None) -> int:
        pattern = f"GRAPH {graph} {{ ?s ?p ?o }}" if graph is not None else "GRAPH ?g { ?s ?p ?o }"
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
                content=body,
                headers={"Content-Type": fmt.media_type},
            )
        return count

    def close(self) -> None:
        self._http.close()
