"""Assemble an IngestController from a Config: the one place that chooses implementations."""

from __future__ import annotations

from collections.abc import Callable, Sequence
from pathlib import Path

from core.config import Config
from core.resources import resource_dir
from core.usage import UsageTracker
from kgpipeline.controller import IngestController
from kgpipeline.derived.base import DerivedStage
from kgpipeline.ontology import read_ontologies
from kgpipeline.shacl import ShapeValidator
from store.base import RDFStore
from store.layout import KBLayout


def build_controller(
    config: Config, store: RDFStore, tracker: UsageTracker | None = None, llm_cache: bool | None = None
) -> IngestController:
    ontology_dir = resource_dir(config.ontology.dir)
    ontology = read_ontologies(ontology_dir)
    llm = None
    if config.ingest.extractor == "llm" or config.ingest.classify_with_llm:
        from core.llm import make_llm

        llm = make_llm(config.llm, KBLayout(config.kb_dir).llm_cache, tracker=tracker, cache=llm_cache)
    from kgpipeline.extract.lexicon_extractor import LexiconExtractor

    lexicon = LexiconExtractor(ontology)
    if config.ingest.extractor == "llm":
        from kgpipeline.extract.llm_extractor import LLMExtractor

        extractor = LLMExtractor(ontology, llm)
    else:
        extractor = lexicon
    if config.ingest.policy_facts:
        from kgpipeline.extract.policy_facts import PolicyFactExtractor

        extractor = PolicyFactExtractor(extractor, lexicon)
    validator = (
        ShapeValidator(resource_dir(config.ontology.shapes_dir), ontology_dir, ontology)
        if config.ingest.validate_shapes
        else None
    )
    return IngestController(
        store,
        config.kb_dir,
        extractor,
        validator,
        config.ingest,
        config.kb.base_iri,
        classifier_llm=llm if config.ingest.classify_with_llm else None,
        stages=derived_stages(config, tracker, llm_cache),
        ontology_dir=ontology_dir,
    )


# Stage factories import their module only when called, so building a controller stays cheap.
StageFactory = Callable[[Config, "UsageTracker | None", "bool | None"], DerivedStage]


def _chunks(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.chunk_vectors import make_stage  # plain chunk vectors (the traditional-RAG baseline)

    return make_stage(config, tracker, llm_cache)


def _bm25(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.bm25 import make_stage  # BM25 keyword index over chunk texts

    return make_stage(config, tracker, llm_cache)


def _graph(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.entity_graph import make_stage  # the graph signal's entity-chunk graph, saved

    return make_stage(config, tracker, llm_cache)


def _keywords(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.keywords import make_stage  # YAKE keywords per chunk: the document graph's keyword layer

    return make_stage(config, tracker, llm_cache)


def _sentences(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.sentence_vectors import make_stage  # chunk sentences into the embedding cache

    return make_stage(config, tracker, llm_cache)


def _entities(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.entity_index import make_stage  # entity-label FAISS index (SPR entity linking)

    return make_stage(config, tracker, llm_cache)


def _weights(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.weights import weights_stage  # disambiguation priors x community centrality

    return weights_stage(config, tracker, llm_cache)


def _communities(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.communities import make_stage  # hierarchical Leiden communities (EGD GraphRAG)

    return make_stage(config, tracker, llm_cache)


def _reports(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.reports import make_stage  # community reports + entity descriptions, embedded

    return make_stage(config, tracker, llm_cache)


def _questions(config: Config, tracker: UsageTracker | None, llm_cache: bool | None) -> DerivedStage:
    from kgpipeline.derived.questions import questions_stage  # the question bank K

    return questions_stage(config, tracker, llm_cache)


# Run in this order after an ingest that changed the KB; `policykb reindex NAME` runs one.
STAGES: dict[str, StageFactory] = {
    "chunks": _chunks,
    "bm25": _bm25,
    "graph": _graph,
    "keywords": _keywords,
    "sentences": _sentences,
    "entities": _entities,
    "weights": _weights,
    "communities": _communities,
    "reports": _reports,
    "questions": _questions,
}


def enabled_stages(config: Config) -> list[str]:
    """The stages an ingest runs, in order. The question bank is built on request only
    (`[questions] build`, or `reindex questions`); sentence embeddings unless both `[answer]
    precompute_sentences` and the `sentences` signal (`[retrieval] weight_sentences`) are off; keywords, communities and reports unless their section's switch is."""
    optional = {
        "questions": config.questions.build,
        "sentences": config.answer.precompute_sentences or config.retrieval.weight_sentences > 0,
        "keywords": config.docgraph.keywords,
        "communities": config.communities.build,
        "reports": config.communities.build,
    }
    return [n for n in STAGES if optional.get(n, True)]


def derived_stages(
    config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None, only: str | None = None
) -> list[DerivedStage]:
    """The stages an ingest runs (:func:`enabled_stages`), or the one named ``only``."""
    from core.errors import InputError

    if only is not None and only not in STAGES:
        raise InputError(f"unknown index {only!r}; known: {', '.join(STAGES) or 'none'}")
    names = [only] if only else enabled_stages(config)
    return [STAGES[name](config, tracker, llm_cache) for name in names]


def ingest_paths(config: Config, paths: list, tracker: UsageTracker | None = None):
    """Open the configured store, ingest ``paths`` with the full pipeline, close; the summary.

    The one-call way to build a KB (tests, benchmarks, the evaluation harness).
    """
    from store.open import open_store

    config.kb_dir.mkdir(parents=True, exist_ok=True)
    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri)
    try:
        controller = build_controller(config, store, tracker)
        try:
            return controller.ingest(list(paths))
        finally:
            controller.close()
    finally:
        store.close()


def ingest_summary(config: Config, paths: Sequence[Path]) -> str:
    """:func:`ingest_paths`, summarized in one line: the ``ingest`` callable of ``spr.eval``."""
    return "; ".join(ingest_paths(config, list(paths)).lines()[:2])


def reindex_summary(config: Config, name: str) -> str:
    """Run one derived stage on the configured KB; its summary line (the ``reindex`` callable of
    ``spr.eval``: a changed keyword setting refreshes the keyword layer of a cached KB). A stage
    switched off in the config is not run."""
    from store.open import open_store

    if name in STAGES and name not in enabled_stages(config):
        return "off in the config"

    store = open_store(config.store, KBLayout(config.kb_dir), config.kb.base_iri)
    try:
        return "; ".join(stage.run(store, config.kb_dir) for stage in derived_stages(config, only=name))
    finally:
        store.close()
