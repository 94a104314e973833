"""Validation stage: run the SHACL shapes over one document's quads, drop what breaks them.

A violated domain/range shape names a relation triple (or all of one subject's triples of that
property); those triples are removed and recorded as :class:`Conflict` records with the rule and
the source chunk. Violations of the hand-written structural shapes are recorded too; they point at
bad metadata or a pipeline bug, and the offending value is dropped the same way when the report
names it.
"""

from __future__ import annotations

from dataclasses import asdict, dataclass

from pyoxigraph import Quad, RdfFormat, serialize
from rdflib import Graph

from kgpipeline.shacl import ShapeValidator, Violation
from kgpipeline.write import DocumentGraphs
from store.vocab import PKB

_SHAPES_NS = "https://w3id.org/policykb/shapes#"


@dataclass(frozen=True)
class Conflict:
    """A triple that was not written, or a node-level problem (``predicate``/``object`` empty)."""

    doc_id: str
    graph: str  # the chunk (or document) graph the triple came from; "" for node-level results
    subject: str  # N-Triples notation
    predicate: str
    object: str
    rule: str  # the shape that failed, e.g. https://w3id.org/policykb/shapes#issues-domain
    constraint: str  # the SHACL constraint component
    message: str

    def as_json(self) -> dict:
        return asdict(self)


def validate_document(doc_id: str, graphs: DocumentGraphs, validator: ShapeValidator) -> tuple[DocumentGraphs, tuple[Conflict, ...]]:
    """The document's quads without the invalid ones, and the conflicts found."""
    report = validator.validate(_to_rdflib(graphs.quads))
    if report.conforms:
        return graphs, ()
    # Quads by subject, so each violation looks at its focus node only (not violations x quads).
    by_subject: dict[str, list[Quad]] = {}
    for q in graphs.quads:
        by_subject.setdefault(str(q.subject), []).append(q)
    dropped: set[Quad] = set()
    conflicts: list[Conflict] = []
    for violation in report.violations:
        hits = [q for q in by_subject.get(violation.focus_node, ()) if q not in dropped and _matches(q, violation)]
        if not hits:
            conflicts.append(_conflict(doc_id, "", violation.focus_node, violation.path or "", violation.value or "", violation))
            continue
        dropped.update(hits)
        for q in hits:
            conflicts.append(_conflict(doc_id, str(q.graph_name)[1:-1], str(q.subject), q.predicate.value, str(q.object), violation))
    keep = tuple(q for q in graphs.quads if q not in dropped)
    cleaned = DocumentGraphs(graphs.doc_iri, graphs.graphs, keep)
    return cleaned, tuple(dict.fromkeys(conflicts))


def _matches(quad: Quad, v: Violation) -> bool:
    if str(quad.subject) != v.focus_node:
        return False
    if v.path is not None and v.value is not None:
        return quad.predicate.value == v.path and str(quad.object) == v.value
    # A node-level domain shape (pkbsh:<property>-domain) condemns the subject's use of that property.
    if v.shape.startswith(_SHAPES_NS) and v.shape.endswith("-domain"):
        return quad.predicate.value == PKB + v.shape[len(_SHAPES_NS) : -len("-domain")]
    return False


def _conflict(doc_id: str, graph: str, s: str, p: str, o: str, v: Violation) -> Conflict:
    return Conflict(doc_id, graph, s, p, o, v.shape, v.constraint, v.message)


def _to_rdflib(quads: tuple[Quad, ...]) -> Graph:
    # Validation sees the document as one graph (the union of its named graphs).
    data = serialize((q.triple for q in quads), format=RdfFormat.N_TRIPLES) or b""
    graph = Graph()
    graph.parse(data=data.decode("utf-8"), format="nt")
    return graph
