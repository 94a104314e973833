"""The retrieval modes by name: ``KnowledgeBase.ask(mode=...)``, the CLI, the server and the
evaluation harness all read :data:`RETRIEVERS`; a new strategy is one module and one line here.

- ``dual``: SPR-RAG's dual-source context (confident structured facts, then the fused text stage);
- ``hybrid``: the fused text stage alone (BM25 + dense + sentences + question bank + graph, by weighted RRF);
- ``spr``: the semantic parsing retriever's triples alone;
- ``questions``: the question bank alone (chunks whose latent questions match);
- ``vector``: plain chunk embeddings, the traditional-RAG baseline;
- ``bm25``: BM25 over chunk texts alone, the lexical baseline;
- ``naive-kg``: every triple verbalized and vector-retrieved, the SPR-RAG paper's KG baseline;
- ``docgraph``: Document GraphRAG — a base mode's chunks expanded through the document graph
  (UKS, ICS, IKS), de-duplicated, reranked, cut to the top k;
- ``community`` / ``entity``: EGD GraphRAG — top-k community reports by cosine / the reports of the
  communities of the top-n entities, with their descriptions (no LLM call);
- ``local`` / ``global``: Microsoft GraphRAG's baselines — entities, relations and chunks within a
  token budget / a map over every report of a level by the LLM (calls and tokens counted).

Factories only wire objects; indexes and models load on first use.
"""

from __future__ import annotations

from collections.abc import Callable, Collection

from core.errors import InputError
from spr.records import Evidence
from spr.retrieval import community, global_search, local_search, naive_kg
from spr.retrieval.base import Retriever, Services
from spr.retrieval.dual import DualRetriever
from spr.retrieval.fusion import FusedRetriever, Signal, SignalRetriever, fused_evidence, words_lead
from spr.retrieval.keyword import KeywordSignal, load_keyword_index
from spr.retrieval.question_bank import QuestionBankAdapter, QuestionBankRetriever, QuestionSignal
from spr.retrieval.semantic_parsing import SemanticParsingRetriever
from spr.retrieval.structured import SPRAdapter
from spr.retrieval.vector import DenseSignal, FeedbackSignal, load_chunk_index, load_sentence_index


def _spr(kb: Services) -> Retriever:
    spr = SemanticParsingRetriever(kb.store, kb.embedder, kb.config.kb_dir, kb.config.spr)
    return SPRAdapter(spr, kb.store, kb.property_labels)


def _bank(kb: Services) -> Retriever:
    return QuestionBankAdapter(QuestionBankRetriever(kb.config.kb_dir, kb.embedder, kb.store))


def _dense(kb: Services) -> DenseSignal:
    return DenseSignal(kb.embedder, lambda: load_chunk_index(kb.config.kb_dir))


def _sentences(kb: Services) -> DenseSignal:
    return DenseSignal(kb.embedder, lambda: load_sentence_index(kb.config.kb_dir), name="sentences", reindex="sentences")


def _keyword(kb: Services) -> KeywordSignal:
    return KeywordSignal(lambda: load_keyword_index(kb.config.kb_dir), expand=kb.config.retrieval.abbreviations)


def _vector(kb: Services) -> Retriever:
    return SignalRetriever(kb.store, _dense(kb), "vector")


def _bm25(kb: Services) -> Retriever:
    return SignalRetriever(kb.store, _keyword(kb), "bm25")


def signals(kb: Services) -> list[Signal]:
    """Every signal of the fused stage (those weighted 0 in ``[retrieval]`` are not run)."""
    from spr.retrieval.docgraph import DocumentGraph, ICSSignal, IKSSignal, UKSSignal
    from spr.retrieval.graph import GraphSignal
    from spr.retrieval.sections import SectionSignal

    bank = QuestionBankRetriever(kb.config.kb_dir, kb.embedder, kb.store)
    doc = DocumentGraph(kb.store, kb.config.docgraph)
    dense = _dense(kb)  # one instance: prf searches the same chunk index (loaded once)
    return [
        _keyword(kb), dense, _sentences(kb), QuestionSignal(bank), GraphSignal(kb.store, kb.config.retrieval, kb.config.kb_dir),
        UKSSignal(doc), ICSSignal(doc), IKSSignal(doc),
        FeedbackSignal(dense, kb.config.retrieval.prf_passages, kb.config.retrieval.prf_beta),
        SectionSignal(kb.store, dense.similarities),
    ]


def _hybrid(kb: Services) -> Retriever:
    return hybrid(kb)


def hybrid(kb: Services, weights: dict[str, float] | None = None) -> Retriever:
    """Mode ``hybrid`` as configured, or with other signal ``weights`` (benchmarks compare weightings).

    On a KB whose documents are in a language the embedder was not trained on (``[embed]
    languages``), the words lead: BM25 swaps weights with the embedding signals
    (:func:`~spr.retrieval.fusion.words_lead`) and the cosine rescoring is skipped — measured on
    the German laws, docs/retrieval.md "Questions in another language". Explicit ``weights`` are kept as given.
    """
    c = kb.config.retrieval
    sigs = signals(kb)
    language = kb.language
    foreign = not kb.config.embed.reads(language)
    note = ""
    if foreign and weights is None:
        from spr.translate import LANGUAGE_NAMES

        weights = words_lead(c.weights)
        name = LANGUAGE_NAMES.get(language, language)
        note = f"documents in {name}, which the embedder was not trained on: BM25 leads, no cosine rescoring"
    fused: Retriever = FusedRetriever(kb.store, sigs, weights or c.weights, rrf_k=c.rrf_k, depth=c.depth, note=note)
    if c.rescore and not foreign:
        from spr.retrieval.rescore import OfflineReranker, closest_chunks
        from spr.retrieval.titles import StoreTitles

        titles = StoreTitles(kb.store)
        dense = next(s for s in sigs if s.name == "dense")  # the fusion's own: its chunk index is loaded once
        graph = next(s for s in sigs if s.name == "graph")  # its graph holds the cross-references, read once

        def named_by(text: str) -> set[str]:
            return graph.graph.documents_named(text)  # type: ignore[attr-defined]

        def pull(question: str, documents: Collection[str]) -> list[Evidence]:
            chunks_of = graph.graph.chunks_of  # type: ignore[attr-defined]
            return closest_chunks(
                question, documents, lambda d: chunks_of.get(d, ()), dense.similarities, lambda f: fused_evidence(kb.store, f, "hybrid")
            )

        fused = OfflineReranker(  # type: ignore[attr-defined]
            fused, dense.similarities, top_n=c.rescore_top_n, dense_weight=c.rescore_dense_weight, section_bonus=c.rescore_section_bonus,
            named_by=named_by, link_bonus=c.rescore_link_bonus, named_bonus=c.rescore_named_bonus, pull=pull if c.rescore_pull else None,
            titled=titles.named, pull_named=pull if c.rescore_pull_named else None,
            alike=titles.named_alike if c.rescore_named_alike else None,
            sentence_cosines=next(s for s in sigs if s.name == "sentences").similarities, sentence_words=c.rescore_sentence_words,
        )
    if c.choices:
        from spr.retrieval.choices import ChoiceRetriever

        fused = ChoiceRetriever(fused)
    if c.bridges:
        from spr.retrieval.bridges import BridgeRetriever

        fused = BridgeRetriever(fused)
    if c.llm_hops:
        from spr.retrieval.hop import LLMHopRetriever

        fused = LLMHopRetriever(fused, lambda: kb.llm, hops=c.llm_hops, passages=c.llm_hop_passages, keep=c.llm_hop_keep)  # type: ignore[attr-defined]  # KnowledgeBase.llm
    if not c.rerank:
        return fused
    from spr.retrieval.rerank import LLMReranker

    return LLMReranker(fused, lambda: kb.llm, top_n=c.rerank_top_n)  # type: ignore[attr-defined]  # KnowledgeBase.llm


def _docgraph(kb: Services) -> Retriever:
    from spr.retrieval.docgraph import DocGraphRetriever, DocumentGraph

    c = kb.config.docgraph
    if mode_name(c.base) == "docgraph":
        raise InputError("[docgraph] base must be another retrieval mode than docgraph")
    judge = None
    if c.rerank == "llm":
        from spr.retrieval.relevance import LLMRelevance

        relevance = LLMRelevance(lambda: kb.llm)  # type: ignore[attr-defined]  # KnowledgeBase.llm

        def judge(question: str, texts: list[str]) -> list[float | None]:
            return [j.score if j is not None else None for j in relevance.judge_all(question, texts)]

    graph = DocumentGraph(kb.store, c)
    return DocGraphRetriever(
        kb.store, kb.retriever(c.base), graph, _dense(kb).similarities, judge, dense_weight=kb.config.retrieval.rescore_dense_weight
    )


def _dual(kb: Services) -> Retriever:
    return DualRetriever(kb.retriever("spr"), kb.retriever("hybrid"), kb.config.retrieval.facts_min_confidence)


# mode name -> factory(services). Add a strategy with one line here.
RETRIEVERS: dict[str, Callable[[Services], Retriever]] = {
    "dual": _dual,
    "hybrid": _hybrid,
    "spr": _spr,
    "questions": _bank,
    "vector": _vector,
    "bm25": _bm25,
    "naive-kg": naive_kg.make_retriever,
    "docgraph": _docgraph,
    "community": community.make_community,
    "entity": community.make_entity,
    "local": local_search.make_local,
    "global": global_search.make_global,
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
