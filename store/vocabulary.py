"""The KB's vocabulary as text: the names of its properties and classes.

A property or class is named by its ``rdfs:label`` and ``skos:altLabel`` values as the ontologies
in the store give them, or by its local name when the store has none ("cause_of_death" → "cause
of death"). The semantic parser's grounding matches relation and class labels against these texts
by embedding (``spr.grounding.relations``); the entity-index stage embeds them at ingest so that
the first question of a fresh KB finds their vectors in the embedding cache.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Literal

from store.base import RDFStore
from store.vocab import OWL, RDF, RDFS, SKOS


def label_from_iri(iri: str) -> str:
    """A readable fallback label: the local name with camelCase split ("hasDeadline" → "has deadline")."""
    local = re.split(r"[#/]", iri.rstrip("/#"))[-1] or iri
    # Minted instance IRIs end in "-<hash>"; the hash is noise in a sentence.
    local = re.sub(r"-[0-9a-f]{12}$", "", local)
    words = re.sub(r"(?<=[a-z0-9])(?=[A-Z])", " ", local).replace("_", " ").replace("-", " ")
    return " ".join(w if w.isupper() else w.lower() for w in words.split()) or iri


@dataclass(frozen=True)
class Term:
    """A vocabulary term with the texts that name it (label first)."""

    iri: str
    label: str
    alt_labels: tuple[str, ...] = ()

    @property
    def texts(self) -> tuple[str, ...]:
        """The casefolded names a label is matched against (the local name when it has none)."""
        return tuple(dict.fromkeys(t.casefold() for t in (self.label, *self.alt_labels) if t)) or (
            label_from_iri(self.iri),
        )


def read_terms(store: RDFStore, kind: Literal["property", "class"]) -> dict[str, Term]:
    """Labels and altLabels of the properties (or classes) declared in the store's ontologies."""
    types = (
        f"<{OWL}ObjectProperty> <{OWL}DatatypeProperty> <{RDF}Property>"
        if kind == "property"
        else f"<{OWL}Class> <{RDFS}Class>"
    )
    rows = store.select(
        f"""SELECT ?t ?p ?l WHERE {{ VALUES ?type {{ {types} }} ?t a ?type .
            VALUES ?p {{ <{RDFS}label> <{SKOS}altLabel> }} ?t ?p ?l
            FILTER(isIRI(?t) && (LANG(?l) = "" || LANGMATCHES(LANG(?l), "en"))) }}"""
    ).rows
    labels: dict[str, list[str]] = {}
    alts: dict[str, list[str]] = {}
    for r in rows:
        target = labels if r["p"].value == RDFS + "label" else alts  # type: ignore[union-attr]
        target.setdefault(r["t"].value, []).append(r["l"].value)  # type: ignore[union-attr]
    out = {}
    for iri in sorted(set(labels) | set(alts)):
        label = sorted(labels.get(iri, []))[0] if iri in labels else label_from_iri(iri)
        out[iri] = Term(iri, label, tuple(sorted(set(alts.get(iri, [])))))
    return out


def vocabulary_texts(store: RDFStore) -> list[str]:
    """Every text that names a declared property or class, once each (what grounding embeds)."""
    texts = (t for kind in ("property", "class") for term in read_terms(store, kind).values() for t in term.texts)  # type: ignore[arg-type]
    return list(dict.fromkeys(texts))
