"""Mode ``spr``: the semantic parsing retriever's triples, verbalized, with their provenance chunks."""

from __future__ import annotations

import time
from collections.abc import Mapping
from dataclasses import replace
from typing import TYPE_CHECKING

from spr.records import Evidence, Fact, LinkedEntity, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_refs, elapsed_ms
from spr.retrieval.confidence import fact_confidence
from spr.verbalize import format_literal, verbalize
from store.base import RDFStore

if TYPE_CHECKING:
    from spr.retrieval.semantic_parsing import SemanticParsingRetriever, SPRResult


class SPRAdapter(Retriever):
    """Triples of ``spr.retrieval.semantic_parsing.SemanticParsingRetriever``, verbalized, each with the first of its
    provenance chunks the store resolves. They score 1.0: a query over the KB returned them."""

    name = "spr"

    def __init__(self, spr: SemanticParsingRetriever, store: RDFStore, property_labels: Mapping[str, str]):
        self.spr = spr
        self.store = store
        self.property_labels = property_labels

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        result = self.spr.retrieve(question)
        facts = [_readable(f, self.property_labels) for f in result.triples]
        chunks = chunk_refs(self.store, [g for f in facts for g in f.graphs])
        confidence = fact_confidence(result)
        evidence = tuple(
            Evidence(
                "triple", verbalize(f), 1.0, self.name,
                chunk=next((chunks[g] for g in f.graphs if g in chunks), None), fact=f, confidence=confidence,
            )
            for f in facts
        )
        return Retrieval(evidence, spr_trace(result, elapsed_ms(started)))


def _readable(fact: Fact, property_labels: Mapping[str, str]) -> Fact:
    """Ontology labels for properties (the SPR may fall back to local names) and literal values
    written as a person would ("2030-12-31" → "31 December 2030")."""
    label = property_labels.get(fact.predicate) or fact.predicate_label
    value = format_literal(fact.object) if fact.object_is_literal else fact.object_label
    return replace(fact, predicate_label=label, object_label=value)


def spr_trace(result: SPRResult, ms: float) -> Trace:
    linked = tuple(
        LinkedEntity(e.label, e.entity, e.name, e.score, e.similarity, e.weight) for e in result.entities
    )
    answers = tuple(a.label or a.value for a in result.answers)
    timings = {f"spr.{name}": float(v) for name, v in result.timings_ms.items()}
    timings["spr"] = ms
    return Trace(
        sexpr=result.grounded,
        parse=result.sexpr,
        sparql=result.sparql,
        linked=linked,
        answers=answers,
        count=result.count,
        note=result.note,
        timings_ms=timings,
    )
