"""Persistence: RDF stores behind one interface, the shared vocabulary, vector indexes."""
