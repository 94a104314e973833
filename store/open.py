"""Open the store a configuration names."""

from __future__ import annotations

from core.config import StoreConfig
from store.base import RDFStore
from store.layout import KBLayout


def open_store(config: StoreConfig, layout: KBLayout, base_iri: str, read_only: bool = False) -> RDFStore:
    """Embedded Oxigraph in ``layout.store``, or the remote SPARQL endpoint ``config`` names.

    ``base_iri``: where minted instance IRIs live (``[kb] base_iri``)."""
    if config.backend == "sparql":
        from store.remote import SparqlEndpointStore

        return SparqlEndpointStore.from_config(config, base_iri=base_iri)
    from store.oxigraph_store import OxigraphStore

    return OxigraphStore(layout.store, base_iri=base_iri, read_only=read_only)
