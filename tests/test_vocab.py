"""The shared vocabulary: well-known prefixes declared for queries (CLI and server alike)."""

from __future__ import annotations

from store.vocab import declare_prefixes


def test_declare_prefixes_keeps_line_numbers_and_declared_prefixes():
    query = "PREFIX pkb: <urn:x#>\nSELECT * WHERE { ?s skos:prefLabel ?o ; pkb:p ?v }"
    out = declare_prefixes(query)
    assert out.count("\n") == query.count("\n")
    assert "PREFIX skos:" in out and out.count("PREFIX pkb:") == 1
    assert declare_prefixes("SELECT * WHERE { ?s <http://x/rdf:y> ?o }") == "SELECT * WHERE { ?s <http://x/rdf:y> ?o }"
    assert declare_prefixes("SELECT * WHERE { ?s ?p 'owl: no' }") == "SELECT * WHERE { ?s ?p 'owl: no' }"
    # a prefixed name after a property-path slash is still declared (regression)
    assert "PREFIX dcterms:" in declare_prefixes("SELECT ?t WHERE { ?g pkb:partOfDocument/dcterms:title ?t }")
