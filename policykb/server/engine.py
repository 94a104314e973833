"""Evaluate SPARQL for the HTTP endpoint and serialize the result in the negotiated format.

Two engines share one contract: :class:`OxigraphEngine` runs on the embedded pyoxigraph store and
keeps all per-row work native (evaluation, serialization, the row limit); :class:`StoreEngine`
goes through the generic :class:`~store.base.RDFStore` API, e.g. for a remote endpoint.

The result limit is enforced while serializing: the output is watched for row markers and the
serializer is stopped past ``limit`` rows. Evaluation is lazy, so stopping the output also stops the
query. When a result may be over the limit, it is evaluated again through TSV (graphs: N-Triples),
one line per row, cut there and re-serialized natively in the requested format.
"""

from __future__ import annotations

import json
import threading
from dataclasses import dataclass

import pyoxigraph as ox
from pyoxigraph import NamedNode, QueryResultsFormat, RdfFormat

from core.errors import InputError
from policykb.server.errors import HTTPProblem
from policykb.server.formats import Format, Kind, negotiate, offered
from policykb.server.pool import Cancelled
from store.base import AskResult, GraphResult, RDFStore
from store.errors import map_oxigraph_error
from store.results import to_delimited
from store.vocab import PREFIXES, declare_prefixes


@dataclass(frozen=True)
class QueryRequest:
    """One protocol request: the query text and the RDF dataset the client asked for."""

    text: str
    default_graphs: tuple[str, ...] = ()  # default-graph-uri: their merge is the default graph
    named_graphs: tuple[str, ...] = ()  # named-graph-uri: the only graphs GRAPH ?g can see


@dataclass(frozen=True)
class Payload:
    body: bytes
    format: Format
    truncated: bool = False  # the result had more than `limit` rows and was cut


class _LimitReached(Exception):
    pass


class CappedWriter:
    """A binary sink for pyoxigraph serializers that stops past ``cap`` row markers or on cancel.

    ``marker`` starts a row (a newline for TSV and N-Triples); one split across two writes is still
    counted once.
    """

    def __init__(self, cap: int | None, cancel: threading.Event, marker: bytes = b"\n"):
        self.cap = cap
        self.cancel = cancel
        self.marker = marker
        self.parts: list[bytes] = []
        self.count = 0
        self._tail = b""

    def write(self, data: bytes) -> int:
        if self.cancel.is_set():
            raise Cancelled()
        chunk = bytes(data)
        self.parts.append(chunk)
        if self.cap is not None:
            window = self._tail + chunk
            self.count += window.count(self.marker) - self._tail.count(self.marker)
            self._tail = window[1 - len(self.marker) :] if len(self.marker) > 1 else b""
            if self.count > self.cap:
                raise _LimitReached()
        return len(chunk)

    def flush(self) -> None:
        pass

    def value(self) -> bytes:
        return b"".join(self.parts)

    def lines(self, n: int) -> tuple[bytes, bool]:
        """The first ``n`` complete lines (line-based formats), and whether anything was cut."""
        data = self.value()
        end = -1
        for _ in range(n):
            end = data.find(b"\n", end + 1)
            if end < 0:
                return data, False
        return data[: end + 1], end + 1 < len(data)


# One marker per format whose count bounds the rows from above, found without parsing: in SPARQL
# JSON every row but the first opens with ',{' (strings may add more, never fewer); XML text
# escapes '<', so '<result>' is always a row; CSV may quote line breaks, so its lines only bound its
# rows. (marker, markers allowed beyond the limit: the first JSON row, the CSV/TSV header line)
_ROW_MARKERS: dict[QueryResultsFormat, tuple[bytes, int]] = {
    QueryResultsFormat.JSON: (b",{", -1),
    QueryResultsFormat.XML: (b"<result>", 0),
    QueryResultsFormat.CSV: (b"\n", 1),
    QueryResultsFormat.TSV: (b"\n", 1),
}


def _choose(accept: str | None, kind: Kind) -> Format:
    fmt = negotiate(accept, kind)
    if fmt is None:
        form = "SELECT/ASK results" if kind == "results" else "CONSTRUCT/DESCRIBE graphs"
        raise HTTPProblem(406, "not_acceptable", f"cannot serve {form} as '{accept}'; offered: {offered(kind)}")
    return fmt


def iri_of(value: str, what: str) -> NamedNode:
    try:
        return NamedNode(value)
    except ValueError:
        raise InputError(f"invalid {what} IRI: {value!r}") from None


def serialize_graph(nt: bytes, fmt: Format) -> bytes:
    triples = ox.parse(nt, format=RdfFormat.N_TRIPLES)
    return ox.serialize(triples, format=fmt.native, prefixes=_prefixes_for(nt, fmt)) or b""


def _prefixes_for(data: bytes, fmt: Format) -> dict[str, str] | None:
    """The well-known prefixes whose namespace occurs in ``data``, for Turtle and RDF/XML."""
    if fmt.native not in (RdfFormat.TURTLE, RdfFormat.RDF_XML):
        return None
    return {p: ns for p, ns in PREFIXES.items() if ns.encode() in data}


class OxigraphEngine:
    """The fast path: pyoxigraph evaluates and serializes; Python only moves bytes."""

    def __init__(self, store: ox.Store):
        self.store = store

    def query(self, request: QueryRequest, accept: str | None, limit: int, cancel: threading.Event) -> Payload:
        try:
            result = self._evaluate(request)
            if isinstance(result, ox.QueryBoolean):
                fmt = _choose(accept, "results")
                return Payload(result.serialize(format=fmt.native) or b"", fmt)
            if isinstance(result, ox.QuerySolutions):
                fmt = _choose(accept, "results")
                return self._solutions(request, result, fmt, limit, cancel)
            fmt = _choose(accept, "graph")
            return self._triples(result, fmt, limit, cancel)
        except (SyntaxError, OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "query") from None

    def _evaluate(self, request: QueryRequest) -> ox.QuerySolutions | ox.QueryBoolean | ox.QueryTriples:
        kwargs: dict = {"prefixes": PREFIXES}  # well-known prefixes need no PREFIX line (explicit ones win)
        if request.default_graphs:
            kwargs["default_graph"] = [iri_of(g, "default-graph-uri") for g in request.default_graphs]
        else:
            kwargs["use_default_graph_as_union"] = True  # policykb keeps every triple in a named graph
        if request.named_graphs:
            kwargs["named_graphs"] = [iri_of(g, "named-graph-uri") for g in request.named_graphs]
        return self.store.query(request.text, **kwargs)

    def _solutions(
        self, request: QueryRequest, result: ox.QuerySolutions, fmt: Format, limit: int, cancel: threading.Event
    ) -> Payload:
        native = fmt.native
        marker, extra = _ROW_MARKERS[native]  # type: ignore[index]
        # Optimistic pass, straight in the requested format: exact whenever the row markers stay
        # within the limit, which is nearly always.
        writer = CappedWriter(limit + extra if limit else None, cancel, marker)
        try:
            result.serialize(writer, format=native)
            return Payload(writer.value(), fmt)
        except _LimitReached:
            if native == QueryResultsFormat.TSV:  # one line per row: the cut is exact
                tsv, cut = writer.lines(limit + 1)
                return Payload(tsv, fmt, cut)
        # Possibly over the limit: evaluate again through TSV, cut at `limit` rows, re-serialize.
        writer = CappedWriter(limit + 1, cancel)
        try:
            self._evaluate(request).serialize(writer, format=QueryResultsFormat.TSV)  # type: ignore[union-attr]
        except _LimitReached:
            pass
        tsv, cut = writer.lines(limit + 1)
        solutions = ox.parse_query_results(tsv, format=QueryResultsFormat.TSV)
        return Payload(solutions.serialize(format=native) or b"", fmt, cut)

    def _triples(self, result: ox.QueryTriples, fmt: Format, limit: int, cancel: threading.Event) -> Payload:
        writer = CappedWriter(limit or None, cancel)  # N-Triples: one line per triple
        try:
            result.serialize(writer, format=RdfFormat.N_TRIPLES)
        except _LimitReached:
            pass
        nt, cut = writer.lines(limit) if limit else (writer.value(), False)
        if fmt.native == RdfFormat.N_TRIPLES:
            return Payload(nt, fmt, cut)
        return Payload(serialize_graph(nt, fmt), fmt, cut)

    def graph_triples(self, graph: NamedNode | ox.DefaultGraph, fmt: Format, cancel: threading.Event) -> bytes:
        """Every triple of one graph (Graph Store Protocol GET), serialized."""
        writer = CappedWriter(None, cancel)
        triples = (
            ox.Triple(q.subject, q.predicate, q.object) for q in self.store.quads_for_pattern(None, None, None, graph)
        )
        prefixes = {p: ns for p, ns in PREFIXES.items() if p in ("rdf", "rdfs", "xsd")}
        ox.serialize(triples, writer, format=fmt.native, prefixes=prefixes if fmt.native == RdfFormat.TURTLE else None)
        return writer.value()

    def update(self, text: str) -> None:
        try:
            self.store.update(text, prefixes=PREFIXES)
        except (SyntaxError, OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "update") from None


class StoreEngine:
    """Any RDFStore (e.g. a remote endpoint): results come back as Python terms, then serialized."""

    def __init__(self, store: RDFStore):
        self.store = store

    def query(self, request: QueryRequest, accept: str | None, limit: int, cancel: threading.Event) -> Payload:
        if request.default_graphs or request.named_graphs:
            raise InputError("default-graph-uri/named-graph-uri need the embedded store backend")
        result = self.store.query(declare_prefixes(request.text))
        if cancel.is_set():
            raise Cancelled()
        if isinstance(result, AskResult):
            fmt = _choose(accept, "results")
            boolean = json.dumps({"head": {}, "boolean": result.value}).encode()
            parsed = ox.parse_query_results(boolean, format=QueryResultsFormat.JSON)
            return Payload(parsed.serialize(format=fmt.native) or b"", fmt)
        if isinstance(result, GraphResult):
            fmt = _choose(accept, "graph")
            triples = result.triples[:limit] if limit else result.triples
            nt = ox.serialize(triples, format=RdfFormat.N_TRIPLES) or b""
            return Payload(serialize_graph(nt, fmt), fmt, len(triples) < len(result.triples))
        fmt = _choose(accept, "results")
        rows = result.rows[:limit] if limit else result.rows
        tsv = to_delimited(type(result)(result.variables, rows), "\t").encode()
        parsed = ox.parse_query_results(tsv, format=QueryResultsFormat.TSV)
        return Payload(parsed.serialize(format=fmt.native) or b"", fmt, len(rows) < len(result.rows))

    def graph_triples(self, graph: NamedNode | ox.DefaultGraph, fmt: Format, cancel: threading.Event) -> bytes:
        if not isinstance(graph, NamedNode):
            raise InputError("the default graph of a remote store is the union of its graphs; name a graph")
        result = self.store.query(f"CONSTRUCT {{ ?s ?p ?o }} WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
        triples = result.triples if isinstance(result, GraphResult) else ()
        return serialize_graph(ox.serialize(triples, format=RdfFormat.N_TRIPLES) or b"", fmt)

    def update(self, text: str) -> None:
        self.store.update(declare_prefixes(text))


Engine = OxigraphEngine | StoreEngine


def engine_for(store: RDFStore) -> Engine:
    raw = getattr(store, "raw", None)
    return OxigraphEngine(raw) if isinstance(raw, ox.Store) else StoreEngine(store)
