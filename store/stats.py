"""Counts that describe a KB: quads, graphs and instances per class."""

from __future__ import annotations

from dataclasses import dataclass

from store.base import RDFStore
from store.vocab import PKB, PREFIXES


@dataclass(frozen=True)
class KBStats:
    quads: int
    named_graphs: int
    instances_by_type: tuple[tuple[str, int], ...]  # (compact class name, distinct instances), largest first


def compact(iri: str) -> str:
    """``pkb:Chunk`` for a known namespace, else the IRI."""
    for prefix, namespace in PREFIXES.items():
        if iri.startswith(namespace) and len(iri) > len(namespace):
            return f"{prefix}:{iri[len(namespace):]}"
    return iri


def kb_stats(store: RDFStore) -> KBStats:
    rows = store.select(
        "SELECT ?type (COUNT(DISTINCT ?x) AS ?n) WHERE { ?x a ?type } GROUP BY ?type ORDER BY DESC(?n) ?type"
    ).rows
    by_type = tuple(
        (compact(row["type"].value), int(row["n"].value))  # type: ignore[union-attr]
        for row in rows
        if row["type"] is not None and not _is_schema_type(row["type"].value)  # type: ignore[union-attr]
    )
    return KBStats(store.count(), len(store.named_graphs()), by_type)


def _is_schema_type(iri: str) -> bool:
    # owl:Class, owl:ObjectProperty, ... describe the ontology, not the data.
    return iri.startswith(PREFIXES["owl"]) or iri.startswith(PREFIXES["rdfs"]) or iri == PKB + "Ontology"
