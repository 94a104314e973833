"""Embedded Oxigraph: on disk for a KB, in memory for tests (``path=None``)."""

from __future__ import annotations

from collections.abc import Iterable, Iterator
from pathlib import Path

import pyoxigraph as ox
from pyoxigraph import NamedNode, Quad

from core.errors import StoreError
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
from store.errors import map_oxigraph_error, open_error


class OxigraphStore(RDFStore):
    """pyoxigraph.Store behind the RDFStore interface."""

    def __init__(self, path: Path | None = None, base_iri: str | None = None, read_only: bool = False):
        if base_iri:
            self.base_iri = base_iri
        self.path = Path(path) if path is not None else None
        try:
            if self.path is None:
                self._store = ox.Store()
            elif read_only:
                if not (self.path / "CURRENT").exists():
                    raise StoreError(f"no KB store at {self.path}; run `policykb init` first")
                self._store = ox.Store.read_only(str(self.path))
            else:
                self.path.mkdir(parents=True, exist_ok=True)
                self._store = ox.Store(str(self.path))
        except OSError as exc:
            # Most often another process (a running `policykb serve`) holds the store's lock.
            raise open_error(exc, self.path) from None
        self.capabilities = Capabilities(
            persistent=self.path is not None,
            updatable=not read_only,
            named_graphs=True,
            union_default_graph=True,
            atomic_batches=True,
            native_bulk_load=True,
        )

    @property
    def raw(self) -> ox.Store:
        """The underlying pyoxigraph store, for in-process fast paths (e.g. the SPARQL server)."""
        return self._store

    def extend(self, quads: Iterable[Quad]) -> int:
        batch = list(quads)
        try:
            self._store.extend(batch)  # one transaction: all or nothing
        except (OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "write") from None
        return len(batch)

    def drop_graph(self, graph: NamedNode | ox.BlankNode) -> None:
        try:
            self._store.remove_graph(graph)
        except (OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "drop graph") from None

    def query(self, sparql: str) -> QueryResult:
        try:
            result = self._store.query(sparql, use_default_graph_as_union=True)
            return to_result(result)
        except (SyntaxError, OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "query") from None

    def update(self, sparql: str) -> None:
        try:
            self._store.update(sparql)
        except (SyntaxError, OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, "update") from None

    def named_graphs(self) -> list[NamedNode | ox.BlankNode]:
        return list(self._store.named_graphs())

    def count(self, graph: NamedNode | None = None) -> int:
        if graph is None:
            return len(self._store)
        return sum(1 for _ in self._store.quads_for_pattern(None, None, None, graph))

    def load(self, path: Path, format: str | None = None, graph: NamedNode | None = None) -> int:
        """Native bulk loader for triple syntaxes (the fast path: no per-triple transaction)."""
        path = Path(path)
        fmt = rdf_format(format or path)
        if fmt.supports_datasets:
            return super().load(path, format, graph)  # remaps default-graph quads
        count = check_rdf_file(path, fmt)
        target = graph or file_graph(self.base_iri, path)
        try:
            self._store.bulk_load(path=str(path), format=fmt, to_graph=target, base_iri=path.resolve().as_uri())
        except (SyntaxError, OSError, ValueError) as exc:
            raise map_oxigraph_error(exc, f"load {path}") from None
        return count

    def iter_quads(self) -> Iterator[Quad]:
        yield from self._store.quads_for_pattern(None, None, None, None)

    def flush(self) -> None:
        self._store.flush()

    def close(self) -> None:
        """Flush and release the store (its lock). Closing twice is a no-op: an app's lifespan may
        run its shutdown more than once (ASGI test clients do, one lifespan per request)."""
        store = self.__dict__.pop("_store", None)
        if store is not None and self.path is not None and self.capabilities.updatable:
            store.flush()


def to_result(result: object) -> QueryResult:
    """Materialize pyoxigraph's lazy results (they must not outlive the snapshot)."""
    if isinstance(result, ox.QueryBoolean):
        return AskResult(bool(result))
    if isinstance(result, ox.QuerySolutions):
        names = tuple(v.value for v in result.variables)
        rows = tuple({name: solution[name] for name in names} for solution in result)
        return SelectResult(names, rows)
    if isinstance(result, ox.QueryTriples):
        return GraphResult(tuple(result))
    raise StoreError(f"unexpected query result type {type(result).__name__}")
