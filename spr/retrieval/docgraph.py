"""Document GraphRAG (Knollmeyer et al., 2025): mode ``docgraph``, and its expansions as signals.

The document graph is the KB's own tree — document → sections (any depth) → chunks, written with
every document — plus the keyword layer (``pkb:hasKeyword``, the ``keywords`` stage). Starting
from the initial chunks of a base mode (``[docgraph] base``, the fused ``hybrid`` by default),
three expansions walk it with SPARQL (:mod:`store.keywords`):

- **UKS**, uninformed keyword search: YAKE keywords of the question → the chunks that have them,
  added to the initial set first (at most ``initial_k`` of them);
- **ICS**, informed chapter search: the initial chunks → the other chunks of their section
  (``ics_up`` levels higher for the whole chapter), the nearest ``fanout`` per seed;
- **IKS**, informed keyword search: the initial chunks → their keywords → other chunks with them.

Generic keywords would flood IKS/UKS (the paper's own future work): a keyword found in more than
``max_keyword_share`` of the KB's chunks is not followed, and one keyword adds at most ``fanout``
chunks — those sharing the most (rarest) keywords with the seeds. Candidates are then de-duplicated
by chunk IRI, reranked — offline (:mod:`spr.retrieval.rescore`: ``w`` × cosine(question, chunk
vector) + (1 − w) × lexical overlap); or by the [llm] model's 1–10 score (:mod:`spr.retrieval.relevance`), the offline score
standing in where its answer is invalid — and cut to the top ``k`` (the pass condition). The
base's top ``k`` (not only its ``initial_k`` seeds) are candidates too, so the pool never holds
fewer chunks than the base mode alone would return.

In the fused stage (mode ``hybrid``) the expansions are signals too: ``uks`` ranks with the first
stage, ``ics`` and ``iks`` after it from the fused top chunks (``[retrieval] weight_uks`` ...).
"""

from __future__ import annotations

import math
import threading
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass

from core.config import DocGraphConfig
from core.errors import ModelError
from core.keywords import guess_language, make_extractor
from spr.records import Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_refs, elapsed_ms
from spr.retrieval.fusion import Fused, Ranked, fused_evidence
from spr.retrieval.rescore import Cosines, rescore
from store import keywords as kw
from store.base import RDFStore
from store.units import chapter_chunks


@dataclass(frozen=True)
class Scored:
    """A candidate chunk of one expansion: its score there (higher is better) and what led to it."""

    chunk: str
    score: float
    via: tuple[str, ...] = ()


def capped(pairs: Sequence[tuple[str, str]], score: dict[str, float], fanout: int) -> set[str]:
    """Chunks kept when each group (a seed, or a keyword) may add at most ``fanout``: per group,
    the best-scored chunks (ties by IRI), over ``pairs`` of (group, chunk).

    >>> sorted(capped([("k", "a"), ("k", "b"), ("k", "c"), ("j", "c")], {"a": 1, "b": 3, "c": 2}, 1))
    ['b', 'c']
    """
    groups: dict[str, set[str]] = {}
    for group, chunk in pairs:
        groups.setdefault(group, set()).add(chunk)
    keep: set[str] = set()
    for members in groups.values():
        keep.update(sorted(members, key=lambda c: (-score[c], c))[:fanout])
    return keep


class DocumentGraph:
    """The three expansions over one store. The fan-out limit needs the KB's chunk count, read
    once (a KB changed since is re-read when the KB is reopened)."""

    def __init__(self, store: RDFStore, config: DocGraphConfig):
        self.store = store
        self.config = config
        self._chunks: int | None = None
        self._extract: dict[str, Callable[[str], list[str]]] = {}
        self._lock = threading.Lock()

    @property
    def chunks(self) -> int:
        if self._chunks is None:
            self._chunks = kw.chunk_count(self.store)
        return self._chunks

    @property
    def max_frequency(self) -> int:
        """Keywords in more chunks than this are generic: not followed (at least 2, or no keyword links)."""
        return max(2, int(self.config.max_keyword_share * self.chunks))

    def idf(self, frequency: int) -> float:
        return math.log(1.0 + self.chunks / max(1, frequency))

    def question_keywords(self, question: str) -> list[str]:
        """The question's YAKE keywords (also with the 'llm' backend: no model call per question)."""
        c = self.config
        lang = c.language if c.language != "auto" else guess_language(question)
        with self._lock:
            if lang not in self._extract:
                backend = "yake-rust" if c.keyword_backend == "llm" else c.keyword_backend
                self._extract[lang] = make_extractor(backend, lang, c.keyword_ngrams, c.keyword_dedup, c.keywords_per_chunk)
            extract = self._extract[lang]
        return extract(question)

    def uks(self, question: str) -> list[Scored]:
        """Chunks having the question's keywords, by the summed rarity of those they have."""
        rows = kw.keyword_chunks(self.store, self.question_keywords(question), self.max_frequency)
        score: dict[str, float] = {}
        via: dict[str, list[str]] = {}
        for key, chunk, n in rows:
            score[chunk] = score.get(chunk, 0.0) + self.idf(n)
            via.setdefault(chunk, []).append(key)
        keep = capped([(key, chunk) for key, chunk, _ in rows], score, self.config.fanout)
        return _ranked({c: score[c] for c in keep}, via)

    def ics(self, seeds: Sequence[Scored]) -> list[Scored]:
        """The other chunks of the seeds' sections, the ``fanout`` nearest (by offset) per seed,
        scored by the seed's weight (1 / its rank) and nearness."""
        weight = {s.chunk: 1.0 / i for i, s in enumerate(seeds, 1)}
        rows = chapter_chunks(self.store, weight, self.config.ics_up)
        score: dict[str, float] = {}
        via: dict[str, list[str]] = {}
        pairs = []
        for seed, at, chunk, start in rows:
            if chunk in weight:
                continue
            near = weight[seed] / (1.0 + abs(start - at) / 1000.0)  # within a section, closer text is likelier kin
            pairs.append((seed, chunk, near))
        best: dict[tuple[str, str], float] = {(s, c): v for s, c, v in pairs}
        for seed, chunk, near in pairs:
            score[chunk] = max(score.get(chunk, 0.0), near)
            via.setdefault(chunk, []).append(seed)
        keep: set[str] = set()
        for seed in weight:  # per seed, its nearest `fanout` section mates
            mates = sorted((c for s, c, _ in pairs if s == seed), key=lambda c: (-best[(seed, c)], c))
            keep.update(mates[: self.config.fanout])
        return _ranked({c: score[c] for c in keep}, via)

    def iks(self, seeds: Sequence[Scored]) -> list[Scored]:
        """Chunks sharing keywords with the seeds, by the summed seed weight × keyword rarity."""
        weight = {s.chunk: 1.0 / i for i, s in enumerate(seeds, 1)}
        rows = kw.keyword_neighbours(self.store, weight, self.max_frequency)
        score: dict[str, float] = {}
        via: dict[str, list[str]] = {}
        for seed, key, chunk, n in rows:
            if chunk in weight:
                continue
            score[chunk] = score.get(chunk, 0.0) + weight[seed] * self.idf(n)
            via.setdefault(chunk, []).append(key)
        keep = capped([(key, chunk) for _, key, chunk, _ in rows if chunk in score], score, self.config.fanout)
        return _ranked({c: score[c] for c in keep}, via)


def _ranked(score: dict[str, float], via: dict[str, list[str]]) -> list[Scored]:
    order = sorted(score, key=lambda c: (-score[c], c))
    return [Scored(c, score[c], tuple(dict.fromkeys(via.get(c, ())))) for c in order]


# --- the expansions as signals of the fused stage ------------------------------------------------------
class UKSSignal:
    """First-stage signal ``uks``: chunks having the question's keywords."""

    name = "uks"

    def __init__(self, graph: DocumentGraph):
        self.graph = graph

    def rank(self, question: str, depth: int) -> list[Ranked]:
        return [Ranked(s.chunk, s.score, s.via) for s in self.graph.uks(question)[:depth]]


class _Expansion:
    second_stage = True  # runs after the first-stage signals, from their fused top chunks

    def __init__(self, graph: DocumentGraph, expand: Callable[[DocumentGraph, Sequence[Scored]], list[Scored]]):
        self.graph = graph
        self._expand = expand

    def rank(self, question: str, depth: int, first: Sequence[Fused] = ()) -> list[Ranked]:
        seeds = [Scored(f.chunk, f.score) for f in first[: self.graph.config.initial_k]]
        return [Ranked(s.chunk, s.score) for s in self._expand(self.graph, seeds)[:depth]]


class ICSSignal(_Expansion):
    name = "ics"

    def __init__(self, graph: DocumentGraph):
        super().__init__(graph, DocumentGraph.ics)


class IKSSignal(_Expansion):
    name = "iks"

    def __init__(self, graph: DocumentGraph):
        super().__init__(graph, DocumentGraph.iks)


# --- mode "docgraph" -----------------------------------------------------------------------------------
class DocGraphRetriever(Retriever):
    """Base chunks + UKS, then ICS and IKS from them; de-duplicated, reranked, the top ``k`` kept.

    ``vectors``: chunk IRIs → cosine with the question (the offline reranker's dense half, weight
    ``dense_weight``), or None (then lexical overlap alone). ``judge``: the LLM relevance scorer
    when ``[docgraph] rerank = "llm"``.
    """

    name = "docgraph"

    def __init__(
        self,
        store: RDFStore,
        base: Retriever,
        graph: DocumentGraph,
        vectors: Cosines | None,
        judge: Callable[[str, list[str]], list[float | None]] | None = None,
        *,
        dense_weight: float = 0.7,
    ):
        self.store = store
        self.base = base
        self.graph = graph
        self.vectors = vectors
        self.judge = judge
        self.dense_weight = dense_weight

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        c = self.graph.config
        started = time.perf_counter()
        # The base's top k all stay candidates (the pass condition then never has fewer than the
        # base would give); its top initial_k seed the expansions.
        first = self.base.search(question, max(c.initial_k, k))
        timings = dict(first.trace.timings_ms)
        notes = [first.trace.note] if first.trace.note else []
        found: dict[str, list[tuple[str, int]]] = {}

        def add(name: str, items: Sequence[Scored]) -> None:
            for rank, s in enumerate(items, 1):
                found.setdefault(s.chunk, []).append((name, rank))

        pool = [Scored(e.chunk.iri, e.score) for e in first.evidence if e.chunk is not None]
        add(self.base.name, pool)
        initial = pool[: c.initial_k]
        if (c.uks or c.iks) and not kw.has_keywords(self.store):
            notes.append("no keyword layer in this KB: UKS and IKS skipped (run `policykb reindex keywords`)")
        else:
            if c.uks:
                t = time.perf_counter()
                seeded = {s.chunk for s in initial}
                uks = [s for s in self.graph.uks(question) if s.chunk not in seeded][: c.initial_k]
                add("uks", uks)
                initial += uks
                timings["uks"] = elapsed_ms(t)
            if c.iks:
                t = time.perf_counter()
                add("iks", self.graph.iks(initial))
                timings["iks"] = elapsed_ms(t)
        if c.ics:
            t = time.perf_counter()
            add("ics", self.graph.ics(initial))
            timings["ics"] = elapsed_ms(t)

        t = time.perf_counter()
        candidates = list(found)
        scores, note = self._rerank(question, candidates)
        if note:
            notes.append(note)
        order = sorted(range(len(candidates)), key=lambda i: (-scores[i], i))[:k]
        fused = [
            Fused(candidates[i], scores[i], (*found[candidates[i]], ("rerank", r)), ()) for r, i in enumerate(order, 1)
        ]
        timings["rerank"] = elapsed_ms(t)
        evidence = fused_evidence(self.store, fused, self.name)
        timings[self.name] = elapsed_ms(started)
        trace = Trace(note="; ".join(notes), timings_ms=timings)
        return Retrieval(tuple(evidence), trace)

    def _rerank(self, question: str, candidates: list[str]) -> tuple[list[float], str]:
        """Offline scores (:func:`spr.retrieval.rescore.rescore`), replaced by the LLM's where it judged."""
        refs = chunk_refs(self.store, candidates)
        texts = [refs[c].text if c in refs else "" for c in candidates]
        scores, note = rescore(question, candidates, texts, self.vectors, self.dense_weight)
        if self.judge is not None:
            try:
                judged = self.judge(question, texts)
            except ModelError as exc:
                return scores, f"LLM rerank skipped, offline scores kept: {exc}"
            scores = [j if j is not None else s for s, j in zip(scores, judged, strict=True)]
        return scores, note
