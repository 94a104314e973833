"""One small interface for RDF stores, with capability flags.

Implementations provide six primitives (``extend``, ``drop_graph``, ``query``, ``update``,
``named_graphs``, ``count``); loading and dumping files are written once here on top of them and
overridden only where a backend has a faster native path.

Data model rule shared by every backend: policykb writes every triple into a *named* graph (a
document's graph, a chunk's graph, an ontology's graph) and queries with the default graph as the
union of all graphs. Counting, deleting and provenance then work the same everywhere.
"""

from __future__ import annotations

from abc import ABC, abstractmethod
from collections.abc import Iterable, Iterator
from dataclasses import dataclass, field
from pathlib import Path

from pyoxigraph import BlankNode, DefaultGraph, Literal, NamedNode, Quad, RdfFormat, Triple, parse

from core.config import DEFAULT_BASE_IRI
from core.errors import InputError
from store.vocab import content_hash, slug

Term = NamedNode | BlankNode | Literal | Triple
GraphName = NamedNode | BlankNode | DefaultGraph

# File extension → RDF syntax. Quad syntaxes may carry their own graph names.
RDF_FORMATS: dict[str, RdfFormat] = {
    "ttl": RdfFormat.TURTLE,
    "turtle": RdfFormat.TURTLE,
    "nt": RdfFormat.N_TRIPLES,
    "ntriples": RdfFormat.N_TRIPLES,
    "nq": RdfFormat.N_QUADS,
    "nquads": RdfFormat.N_QUADS,
    "trig": RdfFormat.TRIG,
    "rdf": RdfFormat.RDF_XML,
    "owl": RdfFormat.RDF_XML,
    "xml": RdfFormat.RDF_XML,
    "rdfxml": RdfFormat.RDF_XML,
    "n3": RdfFormat.N3,
    "jsonld": RdfFormat.JSON_LD,
}


def rdf_format(name_or_path: str | Path) -> RdfFormat:
    """The RDF syntax for a format name ('ttl', 'nquads') or a file path, else InputError."""
    text = str(name_or_path)
    key = (Path(text).suffix.lstrip(".") if "." in Path(text).name else text).lower()
    if key not in RDF_FORMATS:
        known = ", ".join(sorted(RDF_FORMATS))
        raise InputError(f"unknown RDF format '{key}' for {text} (known: {known})")
    return RDF_FORMATS[key]


def file_graph(base: str, path: Path) -> NamedNode:
    """The named graph that default-graph triples of a loaded file go to."""
    return NamedNode(f"{base.rstrip('/#')}/graph/file/{slug(path.stem)}-{content_hash(path.name)}")


@dataclass(frozen=True)
class Capabilities:
    """What a backend can do; callers check these instead of catching exceptions."""

    persistent: bool  # survives the process
    updatable: bool  # SPARQL Update and writes are allowed
    named_graphs: bool  # quads, GRAPH patterns
    union_default_graph: bool  # the default graph of queries is the union of all graphs
    atomic_batches: bool  # one `extend` call is all-or-nothing
    native_bulk_load: bool  # `load` bypasses per-triple transactions


@dataclass(frozen=True)
class SelectResult:
    """Rows of a SELECT query: variable names in projection order; unbound values are None."""

    variables: tuple[str, ...]
    rows: tuple[dict[str, Term | None], ...]

    def __len__(self) -> int:
        return len(self.rows)

    def __iter__(self) -> Iterator[dict[str, Term | None]]:
        return iter(self.rows)

    def column(self, name: str) -> list[Term | None]:
        return [row.get(name) for row in self.rows]


@dataclass(frozen=True)
class AskResult:
    value: bool


@dataclass(frozen=True)
class GraphResult:
    """Triples of a CONSTRUCT or DESCRIBE query."""

    triples: tuple[Triple, ...] = field(default_factory=tuple)

    def __len__(self) -> int:
        return len(self.triples)


QueryResult = SelectResult | AskResult | GraphResult


class RDFStore(ABC):
    """An RDF dataset that policykb can write to and query with SPARQL 1.1."""

    capabilities: Capabilities
    base_iri: str = DEFAULT_BASE_IRI  # instance IRIs; implementations take [kb] base_iri

    # --- primitives -------------------------------------------------------------------------
    @abstractmethod
    def extend(self, quads: Iterable[Quad]) -> int:
        """Add quads; returns how many were sent. Atomic per call where ``atomic_batches``."""

    @abstractmethod
    def drop_graph(self, graph: NamedNode | BlankNode) -> None:
        """Remove a named graph and all its triples (no error if absent)."""

    @abstractmethod
    def query(self, sparql: str) -> QueryResult:
        """Run a SPARQL 1.1 query with the union of all graphs as default graph."""

    @abstractmethod
    def update(self, sparql: str) -> None:
        """Run a SPARQL 1.1 Update."""

    @abstractmethod
    def named_graphs(self) -> list[NamedNode | BlankNode]:
        """All named graphs holding at least one triple."""

    @abstractmethod
    def count(self, graph: NamedNode | None = None) -> int:
        """Number of quads in the dataset, or triples in one named graph."""

    def close(self) -> None:  # noqa: B027 - optional hook
        """Release files or connections."""

    # --- conveniences written once ------------------------------------------------------------
    def add(self, quad: Quad) -> None:
        self.extend([quad])

    def drop_graphs(self, graphs: Iterable[NamedNode | BlankNode]) -> None:
        for graph in graphs:
            self.drop_graph(graph)

    def select(self, sparql: str) -> SelectResult:
        result = self.query(sparql)
        if not isinstance(result, SelectResult):
            raise InputError("expected a SELECT query")
        return result

    def load(self, path: Path, format: str | None = None, graph: NamedNode | None = None) -> int:
        """Load an RDF file; triples outside a named graph go to ``graph`` (default: one per file).

        Returns the number of quads read. The generic path parses locally and sends batches.
        """
        path = Path(path)
        fmt = rdf_format(format or path)
        check_rdf_file(path, fmt)  # a syntax error must not leave half a file in the store
        target = graph or file_graph(self.base_iri, path)
        total = 0
        for batch in _batches(_quads_from_file(path, fmt, target), 50_000):
            total += self.extend(batch)
        return total

    def dump(self, path: Path, format: str | None = None) -> int:
        """Write every quad (N-Quads/TriG) or the union graph (triple syntaxes) to a file."""
        from pyoxigraph import serialize

        fmt = rdf_format(format or path)
        quads = self.iter_quads()
        if fmt.supports_datasets:
            items: Iterable = quads
        else:
            items = (Triple(q.subject, q.predicate, q.object) for q in quads)
        with open(path, "wb") as out:
            serialize(items, out, fmt, prefixes=_dump_prefixes())
        return self.count()

    def iter_quads(self) -> Iterator[Quad]:
        """Every quad, graph by graph (sorted for a stable dump)."""
        for graph in sorted(self.named_graphs(), key=str):
            result = self.select(f"SELECT ?s ?p ?o WHERE {{ GRAPH {graph} {{ ?s ?p ?o }} }}")
            for row in result.rows:
                yield Quad(row["s"], row["p"], row["o"], graph)  # type: ignore[arg-type]


def _dump_prefixes() -> dict[str, str]:
    from store.vocab import PREFIXES

    return dict(PREFIXES)


def check_rdf_file(path: Path, fmt: RdfFormat) -> int:
    """Parse the whole file once without storing it; returns the quad count or raises InputError.

    Loading is not transactional for large files on any backend, so we reject a broken file
    before the first triple is written.
    """
    count = 0
    for _ in _quads_from_file(path, fmt, None):
        count += 1
    return count


def _quads_from_file(path: Path, fmt: RdfFormat, target: NamedNode | None) -> Iterator[Quad]:
    if not path.is_file():
        raise InputError(f"no such file: {path}")
    if path.stat().st_size == 0:
        raise InputError(f"empty file: {path}")
    try:
        with open(path, "rb") as handle:
            for quad in parse(handle, fmt, base_iri=path.resolve().as_uri()):
                if target is not None and isinstance(quad.graph_name, DefaultGraph):
                    yield Quad(quad.subject, quad.predicate, quad.object, target)
                else:
                    yield quad
    except (SyntaxError, ValueError) as exc:
        raise InputError(f"cannot parse {path} as {fmt.name}: {exc}") from None


def _batches(items: Iterable[Quad], size: int) -> Iterator[list[Quad]]:
    batch: list[Quad] = []
    for item in items:
        batch.append(item)
        if len(batch) >= size:
            yield batch
            batch = []
    if batch:
        yield batch
