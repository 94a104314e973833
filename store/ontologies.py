"""Put the OWL ontologies into the store, each in the named graph of its ontology IRI."""

from __future__ import annotations

from pathlib import Path

from pyoxigraph import BlankNode, NamedNode, Quad, RdfFormat, Triple, parse

from core.errors import InputError
from store.base import RDFStore
from store.vocab import OWL, RDF


def ontology_files(directory: Path) -> list[Path]:
    files = sorted(Path(directory).glob("*.owl"))
    if not files:
        raise InputError(f"no .owl files in {directory}")
    return files


def put_ontologies(store: RDFStore, directory: Path) -> list[tuple[str, int]]:
    """(Re)load every ``*.owl`` file; returns (file name, triples) per ontology.

    Loading replaces the ontology's graph, so running it again after an edit in Protégé is safe.
    """
    loaded = []
    for path in ontology_files(directory):
        try:
            triples = [q.triple for q in parse(path=str(path), format=RdfFormat.RDF_XML)]
        except (SyntaxError, OSError, ValueError) as exc:
            raise InputError(f"cannot read ontology {path}: {exc}") from None
        iris = [t.subject for t in triples if t.predicate.value == RDF + "type" and t.object.value == OWL + "Ontology"]
        if len(iris) != 1 or not isinstance(iris[0], NamedNode):
            raise InputError(f"{path} must declare exactly one owl:Ontology with an IRI")
        graph = iris[0]
        triples = skolemize(triples, graph.value)
        store.drop_graph(graph)
        store.extend(Quad(t.subject, t.predicate, t.object, graph) for t in triples)
        loaded.append((path.name, len(triples)))
    return loaded


def skolemize(triples: list[Triple], ontology_iri: str) -> list[Triple]:
    """Replace blank nodes (owl:unionOf lists, restrictions) by IRIs numbered in file order.

    The parser's blank node labels are random, so every reload would change the stored graph;
    numbered skolem IRIs (RDF 1.1 §3.5) make reloading the same file a true no-op.
    """
    names: dict[str, NamedNode] = {}

    def fix(term):
        if isinstance(term, BlankNode):
            if term.value not in names:
                names[term.value] = NamedNode(f"{ontology_iri}/.well-known/genid/{len(names)}")
            return names[term.value]
        return term

    return [Triple(fix(t.subject), t.predicate, fix(t.object)) for t in triples]
