"""The entity label index: written by kgpipeline (derived stage "entities"), read by spr (linker).

Layout in ``<kb>/indexes/entities/``: a :class:`store.vectors.VectorIndex` whose ids are normalized
surface forms (one vector per distinct form), and ``surfaces.json`` mapping each form to the
entities it may denote plus each entity's display label. Forms are normalized with
:func:`store.disambiguation.normalize_surface`, the same key the disambiguation weights use, so a
FAISS hit can be looked up in the weights directly.
"""

from __future__ import annotations

import json
import os
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path
from types import MappingProxyType

from core.errors import StoreError
from store.base import RDFStore
from store.vectors import VectorIndex
from store.vocab import OWL, PKB, RDF, RDFS, SKOS

INDEX_NAME = "entities"
SURFACES_FILE = "surfaces.json"

# Labelled subjects that are not entities: ontology terms (pkb: and any loaded vocabulary).
_LABELS = f"""SELECT DISTINCT ?e ?p ?l WHERE {{
  VALUES ?p {{ <{SKOS}prefLabel> <{SKOS}altLabel> <{RDFS}label> }}
  ?e ?p ?l .
  FILTER(isIRI(?e) && isLiteral(?l) && !STRSTARTS(STR(?e), "{PKB}"))
  FILTER NOT EXISTS {{
    VALUES ?meta {{ <{OWL}Class> <{OWL}ObjectProperty> <{OWL}DatatypeProperty> <{OWL}AnnotationProperty>
                   <{OWL}Ontology> <{RDF}Property> <{RDFS}Class> }}
    ?e a ?meta
  }}
}}"""


@dataclass(frozen=True)
class EntityLabels:
    """``surfaces``: normalized surface form → entity IRIs (sorted). ``names``: entity IRI → its
    display label (skos:prefLabel, else rdfs:label, else a surface form)."""

    surfaces: Mapping[str, tuple[str, ...]]
    names: Mapping[str, str]


def read_labelled_entities(store: RDFStore) -> list[tuple[str, str, str]]:
    """(entity IRI, label property IRI, label text) for every labelled non-vocabulary IRI."""
    return [(r["e"].value, r["p"].value, r["l"].value) for r in store.select(_LABELS).rows]  # type: ignore[union-attr]


def save_entity_index(folder: Path, index: VectorIndex, labels: EntityLabels) -> None:
    """Write the vectors and the surface map (each file replaced atomically)."""
    folder = Path(folder)
    index.save(folder)
    tmp = folder / (SURFACES_FILE + ".tmp")
    data = {"surfaces": {s: list(e) for s, e in labels.surfaces.items()}, "names": dict(labels.names)}
    tmp.write_text(json.dumps(data, ensure_ascii=False, sort_keys=True), encoding="utf-8")
    os.replace(tmp, folder / SURFACES_FILE)


def load_entity_index(folder: Path) -> tuple[VectorIndex, EntityLabels]:
    """The saved index; StoreError when it is missing (run ``policykb reindex entities``)."""
    folder = Path(folder)
    if not (folder / SURFACES_FILE).is_file():
        raise StoreError(f"no entity index in {folder}; run `policykb reindex entities`")
    index = VectorIndex.load(folder)
    data = json.loads((folder / SURFACES_FILE).read_text(encoding="utf-8"))
    surfaces = {s: tuple(e) for s, e in data["surfaces"].items()}
    missing = [i for i in index.ids if i not in surfaces]
    if missing:
        raise StoreError(f"entity index in {folder} has vectors without surface entries, e.g. {missing[0]!r}")
    return index, EntityLabels(MappingProxyType(surfaces), MappingProxyType(dict(data["names"])))
