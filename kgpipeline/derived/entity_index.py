"""Derived stage "entities": a FAISS index of entity labels and surface forms for entity linking.

Surface forms of an entity: its ``skos:prefLabel`` (and the bare name of "Name (Scope)" labels,
the form homonyms share, as the weights stage counts it), every ``skos:altLabel`` (the text the
extractor saw), any ``rdfs:label`` (KBs loaded from other sources), and every surface form the
disambiguation weights link to it. One vector per distinct normalized form; the semantic parsing
retriever's linker searches it and scores hits by similarity × disambiguation weight. The names of
the KB's properties and classes (``store.vocabulary``) are embedded too, into the embedding cache,
for grounding's relation and class matching.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from kgpipeline.derived.surface_counts import surface_variants
from store.base import RDFStore
from store.disambiguation import normalize_surface, read_link_weights
from store.entity_labels import INDEX_NAME, EntityLabels, read_labelled_entities, save_entity_index
from store.layout import KBLayout
from store.vocab import RDFS, SKOS
from store.vocabulary import vocabulary_texts

if TYPE_CHECKING:
    from core.config import Config
    from core.embed import Embedder
    from core.usage import UsageTracker

NAME = INDEX_NAME


def collect_labels(rows: list[tuple[str, str, str]], linked: list[tuple[str, str]]) -> EntityLabels:
    """Surface map and display names from (entity, label property, text) rows and (surface,
    entity) links. Pure; sorted for stable output."""
    surfaces: dict[str, set[str]] = {}
    names: dict[str, tuple[int, str]] = {}
    rank = {SKOS + "prefLabel": 0, RDFS + "label": 1, SKOS + "altLabel": 2}
    for entity, prop, text in rows:
        forms = surface_variants(text) if prop == SKOS + "prefLabel" else (normalize_surface(text),)
        for form in forms:
            if form:
                surfaces.setdefault(form, set()).add(entity)
        candidate = (rank.get(prop, 3), text)
        if entity not in names or candidate < names[entity]:
            names[entity] = candidate
    for surface, entity in linked:
        surfaces.setdefault(normalize_surface(surface), set()).add(entity)
        names.setdefault(entity, (4, surface))
    return EntityLabels(
        {s: tuple(sorted(e)) for s, e in sorted(surfaces.items())},
        {e: text for e, (_, text) in sorted(names.items())},
    )


class EntityIndexStage:
    """Embeds every distinct surface form. The embedder is injected (loads its model on first use)."""

    name = NAME

    def __init__(self, embedder: Embedder):
        self.embedder = embedder

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.vectors import VectorIndex

        started = time.perf_counter()
        links = [(w.surface, w.entity) for w in read_link_weights(store)]
        labels = collect_labels(read_labelled_entities(store), links)
        forms = list(labels.surfaces)
        index = VectorIndex(self.embedder.dimension)
        if forms:
            index.add(forms, self.embedder.embed_many(forms))
        save_entity_index(KBLayout(kb_dir).index(NAME), index, labels)
        # Into the embedding cache only: grounding matches relation and class labels against these
        # texts, and a fresh KB's first question embedded them one model call each.
        vocabulary = vocabulary_texts(store) if self.embedder.cache is not None else []
        self.embedder.embed_many(vocabulary)
        return (
            f"{len(labels.names)} entities, {len(forms)} surface forms and {len(vocabulary)} vocabulary "
            f"texts embedded in {time.perf_counter() - started:.1f} s"
        )


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> EntityIndexStage:
    """The stage a configuration describes (``llm_cache`` is unused: no LLM here)."""
    from core.embed import make_embedder

    return EntityIndexStage(make_embedder(config.embed, KBLayout(config.kb_dir).embed_cache, tracker))
