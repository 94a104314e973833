"""Open the store a configuration names."""

from __future__ import annotations

from policykb.config import Config
from store.base import RDFStore


def open_store(config: Config, read_only: bool = False) -> RDFStore:
    """Embedded Oxigraph in ``<kb>/store``, or the configured remote SPARQL endpoint."""
    if config.store.backend == "sparql":
        from store.remote import SparqlEndpointStore

        return SparqlEndpointStore.from_config(config.store, base_iri=config.kb.base_iri)
    from store.oxigraph_store import OxigraphStore

    return OxigraphStore(config.kb_dir / "store", base_iri=config.kb.base_iri, read_only=read_only)
