"""The retrieval modes by name: ``KnowledgeBase.ask(mode=...)``, the CLI, the server and the
evaluation harness all read :data:`RETRIEVERS`; a new strategy is one module and one line here.

- ``dual``: SPR-RAG's dual-source context (structured facts, then question-bank chunks);
- ``spr``: the semantic parsing retriever's triples alone;
- ``questions``: the question bank alone (chunks whose latent questions match);
- ``vector``: plain chunk embeddings, the traditional-RAG baseline;
- ``naive-kg``: every triple verbalized and vector-retrieved, the SPR-RAG paper's KG baseline.

Factories only wire objects; indexes and models load on first use.
"""

from __future__ import annotations

from collections.abc import Callable

from core.errors import InputError
from spr.retrieval import naive_kg
from spr.retrieval.base import Retriever, Services
from spr.retrieval.dual import DualRetriever
from spr.retrieval.question_bank import QuestionBankAdapter, QuestionBankRetriever
from spr.retrieval.semantic_parsing import SemanticParsingRetriever
from spr.retrieval.structured import SPRAdapter
from spr.retrieval.vector import VectorRetriever, load_chunk_index


def _spr(kb: Services) -> Retriever:
    spr = SemanticParsingRetriever(kb.store, kb.embedder, kb.config.kb_dir, kb.config.spr)
    return SPRAdapter(spr, kb.store, kb.property_labels)


def _bank(kb: Services) -> Retriever:
    return QuestionBankAdapter(QuestionBankRetriever(kb.config.kb_dir, kb.embedder, kb.store))


def _vector(kb: Services) -> Retriever:
    return VectorRetriever(kb.store, kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))


def _dual(kb: Services) -> Retriever:
    return DualRetriever(kb.retriever("spr"), kb.retriever("questions"))


# mode name -> factory(services). Add a strategy with one line here.
RETRIEVERS: dict[str, Callable[[Services], Retriever]] = {
    "dual": _dual,
    "spr": _spr,
    "questions": _bank,
    "vector": _vector,
    "naive-kg": naive_kg.make_retriever,
}
MODES: tuple[str, ...] = tuple(RETRIEVERS)
# Earlier names still accepted on input (not listed): "k" was the question bank's mode.
_ALIASES = {"k": "questions"}


def mode_name(mode: str) -> str:
    """The registered name of ``mode`` (an alias resolved); :class:`InputError` when unknown."""
    name = _ALIASES.get(mode, mode)
    if name not in RETRIEVERS:
        raise InputError(f"unknown retrieval mode {mode!r}; choose one of {', '.join(MODES)}")
    return name
