"""Derived stage "bm25": a BM25 keyword index over every chunk, in ``<kb>/indexes/bm25/``.

Indexes :attr:`store.units.Unit.index_text` (heading path + markup-free chunk text) under the
chunk IRI, so keyword hits resolve like vector hits, each chunk analyzed in its document's language
(English, or German with compound splitting: :mod:`store.analysis`), with the abbreviations the
chunks define (:mod:`core.abbreviations`: a question's "sustainable aviation fuels" also matches
"SAF"). Rebuilt from scratch on every run — cheap
(about a second for a few thousand chunks) and it is what keeps the index in step with deletes
and replaced documents: the controller runs every stage after a change.
"""

from __future__ import annotations

import time
from pathlib import Path
from typing import TYPE_CHECKING

from store.base import RDFStore
from store.layout import KBLayout

if TYPE_CHECKING:
    from core.config import Config
    from core.usage import UsageTracker
    from store.units import Unit

NAME = "bm25"


class BM25Stage:
    """Reads the KB's units and writes :class:`store.keyword_index.KeywordIndex`."""

    name = NAME

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        from store.keyword_index import KeywordIndex
        from store.units import read_units

        started = time.perf_counter()
        units = read_units(store)
        language = _document_languages(units)
        index = KeywordIndex([u.iri for u in units], [u.index_text for u in units], [language[u.document] for u in units])
        index.save(KBLayout(kb_dir).index(NAME))
        german = sum(1 for lang in language.values() if lang == "de")
        return f"{len(index)} chunks, {index.terms} terms, {len(index.abbreviations)} abbreviations indexed in {time.perf_counter() - started:.1f} s" + (
            f" ({german} of {len(language)} documents analyzed as German)" if german else ""
        )


def _document_languages(units: list[Unit]) -> dict[str, str]:
    """Document IRI → the language its chunks are analyzed in: a whole document's text decides
    (its first 2,000 words), so a short chunk of names or figures follows its document."""
    from store.analysis import document_language

    texts: dict[str, list[str]] = {}
    for unit in units:
        texts.setdefault(unit.document, []).append(unit.text)
    return {doc: document_language(" ".join(parts)) for doc, parts in texts.items()}


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> BM25Stage:
    """The stage (nothing in ``config`` tunes it yet; ``tracker``/``llm_cache`` are unused: no models)."""
    return BM25Stage()
