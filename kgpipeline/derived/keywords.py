"""Derived stage "keywords": YAKE keywords per chunk, the keyword layer of the document graph.

Settings are those of Document GraphRAG: unigrams and bigrams, de-duplication threshold 0.8,
``[docgraph] keywords_per_chunk`` (5) per chunk, in the document's language — guessed from the
share of each language's stop words that YAKE ships, unless ``[docgraph] language`` names one.
Extraction itself is :mod:`core.keywords` (the question side uses it too). Written with
:func:`store.keywords.write_keywords`; rebuilt from scratch after every change, like BM25.
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable, Iterable
from pathlib import Path
from typing import TYPE_CHECKING

from core.keywords import Extractor, guess_language, make_extractor
from store.base import RDFStore
from store.keywords import ChunkKeywords, write_keywords

if TYPE_CHECKING:
    from core.config import Config, DocGraphConfig
    from core.llm.base import LLM
    from core.usage import UsageTracker

NAME = "keywords"


def extract_keywords(
    chunks: Iterable[tuple[str, str, str]], config: DocGraphConfig, llm: Callable[[], LLM] | None = None
) -> tuple[list[ChunkKeywords], dict[str, str]]:
    """Keywords of (chunk IRI, document IRI, text) triples, and each document's language."""
    by_doc: dict[str, list[tuple[str, str]]] = {}
    for chunk, doc, text in chunks:
        by_doc.setdefault(doc, []).append((chunk, text))
    languages: dict[str, str] = {}
    extractors: dict[str, Extractor] = {}
    found: list[ChunkKeywords] = []
    for doc, items in sorted(by_doc.items()):
        lang = config.language if config.language != "auto" else guess_language(" ".join(t for _, t in items[:20]))
        languages[doc] = lang
        if lang not in extractors:
            extractors[lang] = make_extractor(
                config.keyword_backend, lang, config.keyword_ngrams, config.keyword_dedup, config.keywords_per_chunk, llm
            )
        found += [ChunkKeywords(chunk, tuple(extractors[lang](text))) for chunk, text in items]
    return found, languages


class KeywordsStage:
    """Reads the KB's chunks (markup-free text) and replaces the keyword graph."""

    name = NAME

    def __init__(self, config: DocGraphConfig, base_iri: str, llm: Callable[[], LLM] | None = None):
        self.config = config
        self.base_iri = base_iri
        self.llm = llm

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.units import read_units

        started = time.perf_counter()
        units = read_units(store)
        found, languages = extract_keywords(((u.iri, u.document, u.text) for u in units), self.config, self.llm)
        quads = write_keywords(store, found, languages, self.base_iri)
        distinct = len({k.casefold() for item in found for k in item.keywords})
        langs = ", ".join(f"{lang} {n}" for lang, n in sorted(Counter(languages.values()).items()))
        return (
            f"{sum(len(f.keywords) for f in found)} keywords ({distinct} distinct) for {len(found)} chunks "
            f"of {len(languages)} documents ({langs or 'none'}), {quads} quads in {time.perf_counter() - started:.1f} s"
        )


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> KeywordsStage:
    """The stage; the [llm] model is loaded only by the 'llm' backend."""
    from store.layout import KBLayout

    loaded: list[LLM] = []

    def llm() -> LLM:
        if not loaded:
            from core.llm import make_llm

            loaded.append(make_llm(config.llm, KBLayout(config.kb_dir).llm_cache, tracker=tracker, cache=llm_cache))
        return loaded[0]

    return KeywordsStage(config.docgraph, config.kb.base_iri, llm)
