"""The fused text stage (mode ``hybrid``): several ranking signals over the same chunks, one list.

Each :class:`Signal` ranks chunk IRIs for a question — BM25 (:mod:`spr.retrieval.keyword`), dense
chunk vectors and sentence vectors (:mod:`spr.retrieval.vector`), the question bank (a matched
latent question votes for its chunk), personalized PageRank from the question's entities
(:mod:`spr.retrieval.graph`).
Weighted reciprocal-rank fusion (Cormack et al., 2009) combines them::

    score(c) = sum over signals s of  weight_s / (rrf_k + rank_s(c))

RRF needs no score calibration between signals (a BM25 score and a cosine are not comparable),
and a chunk found by two signals beats one found by one at a similar rank. Every evidence item
records which signals found it and at which rank (``Evidence.ranks``), which ``--explain``, the
``/ask`` reply and the page show.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, replace
from typing import Protocol

from core.errors import StoreError
from spr.records import Evidence, Retrieval, Trace
from spr.retrieval.base import Retriever, chunk_evidence, chunk_refs, elapsed_ms
from store.base import RDFStore
from store.units import heading_paths


@dataclass(frozen=True)
class Ranked:
    """One signal's candidate: a chunk IRI with the signal's own score (higher is better; its
    scale is the signal's) and what matched (e.g. latent questions)."""

    chunk: str
    score: float
    matched: tuple[str, ...] = ()


class Signal(Protocol):
    """Ranks chunks for a question: at most ``depth`` distinct chunk IRIs, best first. A signal
    with ``second_stage = True`` (the graph) runs after the others and is also given their fused
    ranking: ``rank(question, depth, first)``."""

    name: str

    def rank(self, question: str, depth: int) -> list[Ranked]: ...


def signal_notes(signals: Sequence[Signal], question: str) -> list[str]:
    """What signals that can say how they read ``question`` say (an optional ``explain(question)``
    returning a line or ""): e.g. BM25's "also searched for the documents' abbreviations: SAF"."""
    notes = []
    for signal in signals:
        explain = getattr(signal, "explain", None)
        if explain is not None and (line := explain(question)):
            notes.append(line)
    return notes


def is_second_stage(signal: Signal) -> bool:
    """Whether ``signal`` ranks after the others, from their fused ranking (the graph)."""
    return bool(getattr(signal, "second_stage", False))


@dataclass(frozen=True)
class Fused:
    chunk: str
    score: float
    ranks: tuple[tuple[str, int], ...]
    matched: tuple[str, ...]


def reciprocal_rank_fusion(rankings: Mapping[str, Sequence[Ranked]], weights: Mapping[str, float], rrf_k: int) -> list[Fused]:
    """Weighted RRF of ``rankings`` (signal name → ranked candidates), best first; ties broken by
    the number of signals, then by IRI (deterministic).

    >>> a = [Ranked("x", 9.0), Ranked("y", 5.0)]
    >>> b = [Ranked("y", 0.8), Ranked("z", 0.7)]
    >>> [(f.chunk, f.ranks) for f in reciprocal_rank_fusion({"bm25": a, "dense": b}, {"bm25": 1, "dense": 1}, 60)]
    [('y', (('bm25', 2), ('dense', 1))), ('x', (('bm25', 1),)), ('z', (('dense', 2),))]
    """
    score: dict[str, float] = {}
    ranks: dict[str, list[tuple[str, int]]] = {}
    matched: dict[str, list[str]] = {}
    for name, ranked in rankings.items():
        weight = weights.get(name, 0.0)
        if weight <= 0:
            continue
        for rank, item in enumerate(ranked, 1):
            score[item.chunk] = score.get(item.chunk, 0.0) + weight / (rrf_k + rank)
            ranks.setdefault(item.chunk, []).append((name, rank))
            matched.setdefault(item.chunk, []).extend(item.matched)
    order = sorted(score, key=lambda c: (-score[c], -len(ranks[c]), c))
    return [Fused(c, score[c], tuple(ranks[c]), tuple(dict.fromkeys(matched[c]))) for c in order]


WORD_SIGNAL = "bm25"
EMBEDDING_SIGNALS = ("dense", "sentences")


def words_lead(weights: Mapping[str, float]) -> dict[str, float]:
    """``weights`` for documents the embedder cannot read: BM25 and the embedding signals swap
    weights (BM25 takes the strongest embedding signal's, they take BM25's), the rest unchanged.
    A weighting without BM25 is returned as it is.

    >>> words_lead({"bm25": 0.25, "dense": 1.0, "sentences": 1.0, "graph": 0.25})
    {'bm25': 1.0, 'dense': 0.25, 'sentences': 0.25, 'graph': 0.25}
    """
    bm25 = weights.get(WORD_SIGNAL, 0.0)
    strongest = max((weights.get(name, 0.0) for name in EMBEDDING_SIGNALS), default=0.0)
    if bm25 <= 0 or strongest <= bm25:
        return dict(weights)
    out = dict(weights)
    out[WORD_SIGNAL] = strongest
    for name in EMBEDDING_SIGNALS:
        if weights.get(name, 0.0) > 0:
            out[name] = bm25
    return out


class FusedRetriever(Retriever):
    """Top-k chunks of the weighted RRF of ``signals`` (those with weight 0 are not run)."""

    name = "hybrid"

    def __init__(
        self, store: RDFStore, signals: Sequence[Signal], weights: Mapping[str, float], *, rrf_k: int, depth: int, note: str = ""
    ):
        self.store = store
        self.signals = [s for s in signals if weights.get(s.name, 0.0) > 0]
        self.weights = dict(weights)
        self.rrf_k = rrf_k
        self.depth = depth
        self.note = note  # said in every trace (e.g. why the weights differ from the config's)

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        return list(self.search(question, k).evidence)

    def search(self, question: str, k: int) -> Retrieval:
        started = time.perf_counter()
        timings: dict[str, float] = {}
        rankings: dict[str, list[Ranked]] = {}
        depth = max(self.depth, k)
        missing: list[str] = []
        first_stage = [s for s in self.signals if not is_second_stage(s)]
        second_stage = [s for s in self.signals if is_second_stage(s)]
        first: list[Fused] = []
        for group in (first_stage, second_stage):
            for signal in group:
                t = time.perf_counter()
                try:
                    rankings[signal.name] = signal.rank(question, depth, first) if group is second_stage else signal.rank(question, depth)
                except StoreError as exc:  # an index this KB lacks (built before it existed): the others answer
                    if len(missing) == len(self.signals) - 1:
                        raise
                    missing.append(str(exc))
                timings[signal.name] = elapsed_ms(t)
            first = reciprocal_rank_fusion(rankings, self.weights, self.rrf_k)
        fused = first[:k]
        evidence = fused_evidence(self.store, fused, self.name)
        timings[self.name] = elapsed_ms(started)
        notes = [*missing, *signal_notes([s for s in self.signals if s.name in rankings], question), *([self.note] if self.note else [])]
        return Retrieval(tuple(evidence), Trace(note="; ".join(notes), timings_ms=timings))


def fused_evidence(store: RDFStore, fused: Sequence[Fused], source: str) -> list[Evidence]:
    """Evidence for fused candidates, in their order, with text, offsets and heading path; chunks
    no longer in the store (deleted since an index was built) are skipped."""
    chunks = chunk_refs(store, [f.chunk for f in fused])
    paths = heading_paths(store, chunks)
    out = []
    for f in fused:
        ref = chunks.get(f.chunk)
        if ref is not None:
            ref = replace(ref, heading_path=paths.get(f.chunk, ""))
            out.append(replace(chunk_evidence(ref, f.score, source, f.matched), ranks=f.ranks))
    return out


class SignalRetriever(Retriever):
    """One signal alone as a retrieval mode (``vector``, ``bm25``): its top-k chunks, its scores."""

    def __init__(self, store: RDFStore, signal: Signal, name: str):
        self.store = store
        self.signal = signal
        self.name = name

    def retrieve(self, question: str, k: int) -> list[Evidence]:
        ranked = self.signal.rank(question, k)
        fused = [Fused(r.chunk, r.score, ((self.signal.name, i),), r.matched) for i, r in enumerate(ranked, 1)]
        return fused_evidence(self.store, fused, self.name)

    def search(self, question: str, k: int) -> Retrieval:
        found = super().search(question, k)
        notes = signal_notes([self.signal], question)
        return replace(found, trace=replace(found.trace, note="; ".join(notes))) if notes else found
