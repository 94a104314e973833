"""Disambiguation weights in the store: written by kgpipeline (weights stage), read by spr (linker).

Layout, all in one named graph (``<base>graph/weights``, replaced on every rebuild):

    <link> a pkb:SurfaceFormLink ; pkb:surfaceForm "energy bureau" ; pkb:linksEntity <entity> ;
           pkb:mentionCount 12 ; pkb:priorWeight 0.75 ; pkb:centralityWeight 1.0 ; pkb:fusedWeight 0.75 .
    <entity> pkb:memberOfCommunity <community> ; pkb:degreeCentrality 0.4 .
    <community> a pkb:Community .

``prior`` is w_f = count(s, e) / Σ_e' count(s, e'); ``centrality`` is w_i, the entity's degree
centrality within its Louvain community normalized so that the community's most central node has
1; ``fused`` is w_f · w_i (the SPR-RAG paper's weight).
"""

from __future__ import annotations

from dataclasses import dataclass

from pyoxigraph import Literal, NamedNode, Quad

from store.base import RDFStore
from store.vocab import PKB, RDF, XSD, content_hash

_A = NamedNode(RDF + "type")
_DOUBLE = NamedNode(XSD + "double")
_INT = NamedNode(XSD + "integer")


def normalize_surface(text: str) -> str:
    """The normalized surface form used as the key of links: casefolded, whitespace collapsed.

    The weights stage and the linker must normalize alike, so both call this one function.
    """
    return " ".join(text.casefold().split())


def weights_graph(base_iri: str) -> NamedNode:
    return NamedNode(f"{base_iri.rstrip('/#')}/graph/weights")


@dataclass(frozen=True)
class LinkWeight:
    """How strongly a surface form points to an entity. All weights lie in [0, 1]."""

    surface: str  # normalized surface form (casefolded, whitespace collapsed)
    entity: str  # entity IRI
    count: int
    prior: float  # w_f
    centrality: float  # w_i
    fused: float  # w_f * w_i
    community: str = ""  # community IRI, "" when unknown


def weight_quads(weights: list[LinkWeight], base_iri: str, degree: dict[str, float] | None = None) -> list[Quad]:
    g = weights_graph(base_iri)
    quads: list[Quad] = []
    communities: set[str] = set()
    base = base_iri if base_iri.endswith(("/", "#")) else base_iri + "/"
    for w in weights:
        link = NamedNode(f"{base}link/{content_hash(w.surface, w.entity)}")
        entity = NamedNode(w.entity)
        quads += [
            Quad(link, _A, NamedNode(PKB + "SurfaceFormLink"), g),
            Quad(link, NamedNode(PKB + "surfaceForm"), Literal(w.surface), g),
            Quad(link, NamedNode(PKB + "linksEntity"), entity, g),
            Quad(link, NamedNode(PKB + "mentionCount"), Literal(str(w.count), datatype=_INT), g),
            Quad(link, NamedNode(PKB + "priorWeight"), Literal(repr(float(w.prior)), datatype=_DOUBLE), g),
            Quad(link, NamedNode(PKB + "centralityWeight"), Literal(repr(float(w.centrality)), datatype=_DOUBLE), g),
            Quad(link, NamedNode(PKB + "fusedWeight"), Literal(repr(float(w.fused)), datatype=_DOUBLE), g),
        ]
        if w.community:
            quads.append(Quad(entity, NamedNode(PKB + "memberOfCommunity"), NamedNode(w.community), g))
            communities.add(w.community)
    for community in sorted(communities):
        quads.append(Quad(NamedNode(community), _A, NamedNode(PKB + "Community"), g))
    for entity, value in sorted((degree or {}).items()):
        quads.append(Quad(NamedNode(entity), NamedNode(PKB + "degreeCentrality"), Literal(repr(float(value)), datatype=_DOUBLE), g))
    return list(dict.fromkeys(quads))


def write_weights(store: RDFStore, weights: list[LinkWeight], base_iri: str, degree: dict[str, float] | None = None) -> int:
    """Replace the weights graph; returns the number of quads written."""
    quads = weight_quads(weights, base_iri, degree)
    store.drop_graph(weights_graph(base_iri))
    return store.extend(quads)


def read_link_weights(store: RDFStore) -> list[LinkWeight]:
    """Every surface-form link with its weights (empty when the weights stage has not run)."""
    rows = store.select(
        f"""SELECT ?s ?e ?n ?wf ?wi ?w ?c WHERE {{
            ?l a <{PKB}SurfaceFormLink> ; <{PKB}surfaceForm> ?s ; <{PKB}linksEntity> ?e ;
               <{PKB}mentionCount> ?n ; <{PKB}priorWeight> ?wf ; <{PKB}centralityWeight> ?wi ; <{PKB}fusedWeight> ?w .
            OPTIONAL {{ ?e <{PKB}memberOfCommunity> ?c }}
        }}"""
    ).rows
    return [
        LinkWeight(
            r["s"].value, r["e"].value, int(r["n"].value), float(r["wf"].value), float(r["wi"].value),
            float(r["w"].value), r["c"].value if r["c"] is not None else "",
        )
        for r in rows
    ]


def links_by_surface(weights: list[LinkWeight]) -> dict[str, list[LinkWeight]]:
    """Group links by surface form, each group sorted by fused weight (best first, then IRI)."""
    groups: dict[str, list[LinkWeight]] = {}
    for w in weights:
        groups.setdefault(w.surface, []).append(w)
    for group in groups.values():
        group.sort(key=lambda w: (-w.fused, -w.prior, w.entity))
    return groups
