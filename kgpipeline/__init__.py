"""Indexing: documents → validated RDF triples with provenance (the SPR-RAG KGPipeline)."""
