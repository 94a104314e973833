"""The HTTP server behind ``policykb serve``: SPARQL 1.1 Protocol and Graph Store endpoints, the QA
API and the web page. :func:`policykb.server.app.create_app` builds the ASGI app; the other modules
are its parts (protocol routing, SPARQL, Graph Store, formats, errors, worker pool, state)."""
