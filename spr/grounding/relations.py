"""Relation and class matching: an S-expression label → KB properties (or classes) by embedding.

A property is described by its texts (``store.vocabulary``: labels and altLabels, or its local
name). A label's similarity to a property is the best cosine over those texts; term vectors are
computed once per matcher, cached on disk by the embedder, and put there at ingest by the
entity-index stage.

Relations are matched among those actually adjacent to the candidate entities, in both
directions: a relation found only against the parsed direction is still offered, flipped, with a
penalty, because parsers (and people) confuse "who issued X" with "what did X issue".
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from typing import Literal

import numpy as np

from core.embed import Embedder
from store.base import RDFStore
from store.terms import named_node, sparql_term
from store.vocab import PKB, RDF, RDFS, SKOS
from store.vocabulary import Term, label_from_iri

Direction = Literal["out", "in"]  # "out": the anchor is the subject of the triple

# Bookkeeping, not facts: labels, typing, provenance and disambiguation records.
EXCLUDED = frozenset(
    {RDF + "type", RDFS + "label", SKOS + "prefLabel", SKOS + "altLabel", PKB + "mentionedIn",
     PKB + "memberOfCommunity", PKB + "degreeCentrality", PKB + "linksEntity"}
)  # fmt: skip


@dataclass(frozen=True)
class RelationCandidate:
    """A property for a relation label. ``reverse`` is the grounded (R r) flag; ``flipped`` says it
    runs against the parsed direction. ``similarity``: best cosine in [-1, 1] of the label and the
    property's texts (``matched`` is that text); ``score`` = max(similarity, 0) × penalties."""

    label: str
    relation: str
    name: str
    matched: str
    reverse: bool
    flipped: bool
    similarity: float
    score: float


def term_for(iri: str, lexicon: Mapping[str, Term]) -> Term:
    """The lexicon's term, or one named after the IRI's local name."""
    return lexicon.get(iri) or Term(iri, label_from_iri(iri))


class TermMatcher:
    """Scores a label against terms: best cosine over each term's texts. Vectors are memoized."""

    def __init__(self, embedder: Embedder, lexicon: Mapping[str, Term]):
        self.embedder = embedder
        self.lexicon = lexicon
        self._vectors: dict[str, np.ndarray] = {}

    def _embed(self, texts: Sequence[str]) -> np.ndarray:
        missing = [t for t in dict.fromkeys(texts) if t not in self._vectors]
        if missing:
            self._vectors.update(zip(missing, self.embedder.embed_many(missing), strict=True))
        return np.stack([self._vectors[t] for t in texts])

    def similarities(self, label: str, iris: Iterable[str]) -> list[tuple[str, float, str]]:
        """(iri, similarity, matched text) per term, best first."""
        terms = [term_for(i, self.lexicon) for i in dict.fromkeys(iris)]
        if not terms:
            return []
        texts_of = {term.iri: list(term.texts) for term in terms}
        # One batch for the label and every term text not seen yet: a cold KB has ~100 of them,
        # and one model call each cost seconds on the first question.
        self._embed([label.casefold(), *(t for texts in texts_of.values() for t in texts)])
        query = self._vectors[label.casefold()]
        out = []
        for term in terms:
            texts = texts_of[term.iri]
            sims = self._embed(texts) @ query
            best = int(np.argmax(sims))
            out.append((term.iri, float(sims[best]), texts[best]))
        return sorted(out, key=lambda x: (-x[1], x[0]))


def adjacent_relations(store: RDFStore, anchors: Sequence[str]) -> set[tuple[str, Direction]]:
    """Predicates touching any anchor entity, with the anchor's side (``out``: anchor is subject)."""
    if not anchors:
        return set()
    values = " ".join(sparql_term(named_node(a)) for a in anchors)
    rows = store.select(
        f"""SELECT DISTINCT ?p ?dir WHERE {{ VALUES ?a {{ {values} }}
            {{ ?a ?p ?o BIND("out" AS ?dir) }} UNION {{ ?s ?p ?a BIND("in" AS ?dir) }} }}"""
    ).rows
    return {(r["p"].value, r["dir"].value) for r in rows if r["p"].value not in EXCLUDED}  # type: ignore[misc,union-attr]


def literal_relations(store: RDFStore) -> set[str]:
    """Predicates with literal values (what lt/gt/ARGMAX/TC compare), bookkeeping excluded."""
    rows = store.select("SELECT DISTINCT ?p WHERE { ?s ?p ?o FILTER(isLiteral(?o)) }").rows
    return {r["p"].value for r in rows if r["p"].value not in EXCLUDED}  # type: ignore[union-attr]


def rank_relations(
    label: str,
    scored: Sequence[tuple[str, float, str]],
    found: set[tuple[str, Direction]],
    reverse: bool,
    lexicon: Mapping[str, Term],
    top_k: int,
    flip_penalty: float,
    min_similarity: float = 0.0,
) -> list[RelationCandidate]:
    """Pure ranking of (relation, direction) pairs. ``reverse`` is the parsed (R r) flag: (R r)
    wants the anchor as subject ("out"), a plain r wants it as object ("in"). Relations less
    similar than ``min_similarity`` to the label are no candidates: a query over an unrelated
    property returns an answer to another question."""
    wanted: Direction = "out" if reverse else "in"
    out = []
    for iri, similarity, matched in scored:
        if similarity < min_similarity:
            continue
        for direction in ("out", "in"):
            if (iri, direction) not in found:
                continue
            flipped = direction != wanted
            score = max(similarity, 0.0) * (flip_penalty if flipped else 1.0)
            out.append(
                RelationCandidate(
                    label, iri, term_for(iri, lexicon).label, matched, direction == "out", flipped,
                    round(similarity, 6), round(score, 6),
                )
            )
    out.sort(key=lambda c: (-c.score, c.flipped, c.relation))
    return out[:top_k]


class RelationMatcher:
    """Matches relation labels against the relations of given anchor entities."""

    def __init__(
        self, store: RDFStore, embedder: Embedder, lexicon: Mapping[str, Term], top_k: int, flip_penalty: float,
        min_similarity: float = 0.0,
    ):
        self.store = store
        self.lexicon = lexicon
        self.matcher = TermMatcher(embedder, lexicon)
        self.top_k = top_k
        self.flip_penalty = flip_penalty
        self.min_similarity = min_similarity
        self._literal: set[str] | None = None

    def match(self, label: str, anchors: Sequence[str], reverse: bool) -> list[RelationCandidate]:
        """Top-k relations linking ``anchors`` to the answer, for a JOIN's relation label."""
        found = adjacent_relations(self.store, anchors)
        scored = self.matcher.similarities(label, sorted({p for p, _ in found}))
        return rank_relations(label, scored, found, reverse, self.lexicon, self.top_k, self.flip_penalty, self.min_similarity)

    def having(self, candidate: RelationCandidate, entities: Sequence[str]) -> set[str]:
        """The ``entities`` that have ``candidate``'s relation on the candidate's side."""
        if not entities:
            return set()
        values = " ".join(sparql_term(named_node(e)) for e in entities)
        pattern = f"?e {sparql_term(named_node(candidate.relation))} ?x" if candidate.reverse else f"?x {sparql_term(named_node(candidate.relation))} ?e"
        rows = self.store.select(f"SELECT DISTINCT ?e WHERE {{ VALUES ?e {{ {values} }} {pattern} }}").rows
        return {r["e"].value for r in rows}  # type: ignore[union-attr]

    def match_attribute(self, label: str, members: Sequence[str] | None) -> list[RelationCandidate]:
        """Top-k literal-valued relations of ``members`` (or of the whole KB when None), for the
        relation of lt/le/gt/ge, ARGMAX/ARGMIN and TC: the member is the subject."""
        if self._literal is None:
            self._literal = literal_relations(self.store)
        if members is None:
            found = {(p, "out") for p in self._literal}
        else:
            found = {(p, d) for p, d in adjacent_relations(self.store, members) if d == "out" and p in self._literal}
        scored = self.matcher.similarities(label, sorted({p for p, _ in found}))
        # The member is the subject; rank as "out" wanted, i.e. (R r) == False for these operators.
        ranked = rank_relations(label, scored, found, True, self.lexicon, self.top_k, self.flip_penalty, self.min_similarity)
        return [
            RelationCandidate(c.label, c.relation, c.name, c.matched, False, False, c.similarity, c.score) for c in ranked
        ]


class ClassMatcher:
    """Matches class labels ("programmes", "agency") against the ontology's classes."""

    def __init__(self, embedder: Embedder, classes: Mapping[str, Term], top_k: int = 2):
        self.matcher = TermMatcher(embedder, classes)
        self.classes = classes
        self.top_k = top_k

    def match(self, label: str) -> list[tuple[str, float]]:
        return [(iri, sim) for iri, sim, _ in self.matcher.similarities(label, self.classes)[: self.top_k]]
