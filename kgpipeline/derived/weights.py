"""The "weights" stage: community-weighted disambiguation priors (the SPR-RAG formula).

For a surface form ``s`` and a candidate entity ``e``:

    w_f(s, e) = count(s, e) / Σ_e' count(s, e')        prior, from corpus links (surface_counts)
    w_i(e)    = strength(e) / max strength in C(e)     centrality within e's Louvain community
    w(s, e)   = w_f · w_i

The entity graph has the entities as nodes. Two entities joined by a relation triple (either
direction, any chunk) get an edge of weight 1; two entities only mentioned in the same chunk get a
weaker edge (``comention_weight``), because the deterministic extractor states few relations and
would otherwise leave most entities isolated, each alone in a community. Every pair carries at
most weight 1, so ``strength / (|C| - 1)`` is a degree centrality in [0, 1]; that value is stored
as ``pkb:degreeCentrality``. A community whose members have no internal edge (a singleton) gives
each member w_i = 1: it is the most central node of its community.

Louvain: python-louvain (the design's choice) on small graphs; igraph's multilevel Louvain, the
same algorithm in C, above ``fast_above_edges`` (python-louvain needs minutes at 200k edges).
"""

from __future__ import annotations

import random
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

import numpy as np

from core.config import Config, WeightsConfig
from core.errors import InputError
from kgpipeline.derived.surface_counts import (
    CorpusChunk,
    SurfaceDictionary,
    count_links,
    read_corpus,
    read_labels,
    read_relation_pairs,
)
from store.base import RDFStore
from store.disambiguation import LinkWeight, write_weights
from store.vocab import mint


@dataclass(frozen=True)
class EntityGraph:
    """Undirected weighted graph: ``edges[k] = (u, v)`` with u < v, indexes into ``nodes``."""

    nodes: tuple[str, ...]
    edges: np.ndarray  # int64, shape (m, 2)
    weights: np.ndarray  # float64, shape (m,), each in (0, 1]


@dataclass(frozen=True)
class Communities:
    """``membership[i]``: community number of node i, numbered by each community's first node."""

    membership: np.ndarray  # int64, shape (n,)
    backend: str

    @property
    def count(self) -> int:
        return int(self.membership.max()) + 1 if self.membership.size else 0


# --- pure arithmetic ----------------------------------------------------------------------------


def build_entity_graph(
    nodes: Sequence[str],
    relations: Iterable[tuple[str, str]],
    comentions: Iterable[Iterable[str]] = (),
    comention_weight: float = 0.25,
    comention_max: int = 50,
) -> EntityGraph:
    """Relation pairs weigh 1; co-mention pairs (entities of one chunk; chunks with more than
    ``comention_max`` entities are skipped, their pairs being quadratic and uninformative) weigh
    ``comention_weight`` unless a relation joins them. Unknown entities and self-loops are ignored.
    Vectorized: a pair is coded as ``u * n + v`` and the heaviest weight per code is kept."""
    n = len(nodes)
    index = {iri: i for i, iri in enumerate(nodes)}
    parts: list[tuple[np.ndarray, np.ndarray, float]] = []
    if comention_weight > 0:
        for group in comentions:
            members = np.array(sorted({index[e] for e in group if e in index}), dtype=np.int64)
            if 2 <= len(members) <= comention_max:
                iu, iv = np.triu_indices(len(members), 1)
                parts.append((members[iu], members[iv], comention_weight))
    found = [(index[s], index[o]) for s, o in relations if s in index and o in index]
    if found:
        pairs = np.array(found, dtype=np.int64)
        parts.append((pairs[:, 0], pairs[:, 1], 1.0))
    if not parts:
        return EntityGraph(tuple(nodes), np.zeros((0, 2), np.int64), np.zeros(0, np.float64))
    a = np.concatenate([p[0] for p in parts])
    b = np.concatenate([p[1] for p in parts])
    w = np.concatenate([np.full(len(p[0]), p[2]) for p in parts])
    u, v = np.minimum(a, b), np.maximum(a, b)
    keep = u != v
    code, w = u[keep] * n + v[keep], w[keep]
    order = np.lexsort((-w, code))  # by code, heaviest first within a code
    code, first = np.unique(code[order], return_index=True)
    edges = np.stack([code // n, code % n], axis=1) if n else np.zeros((0, 2), np.int64)
    return EntityGraph(tuple(nodes), edges.astype(np.int64), w[order][first].astype(np.float64))


def canonical_membership(labels: Sequence[int] | np.ndarray) -> np.ndarray:
    """Renumber communities 0, 1, ... in order of their first node, so equal partitions compare
    equal whatever numbers a backend chose."""
    labels = np.asarray(labels, dtype=np.int64)
    _, first, inverse = np.unique(labels, return_index=True, return_inverse=True)
    rank = np.empty(first.size, dtype=np.int64)
    rank[np.argsort(first)] = np.arange(first.size)
    return rank[inverse.reshape(-1)]


def community_centrality(
    graph: EntityGraph, membership: np.ndarray
) -> tuple[np.ndarray, np.ndarray]:
    """(degree centrality within the community, that value normalized by the community maximum).

    Strength counts only edges inside the community. Degree centrality = strength / (|C| - 1)
    (0 in a singleton); normalized = strength / max strength in C, or 1 where that maximum is 0.
    """
    n = len(graph.nodes)
    membership = np.asarray(membership, dtype=np.int64)
    strength = np.zeros(n, dtype=np.float64)
    if graph.edges.size:
        u, v = graph.edges[:, 0], graph.edges[:, 1]
        inside = membership[u] == membership[v]
        strength += np.bincount(u[inside], weights=graph.weights[inside], minlength=n)
        strength += np.bincount(v[inside], weights=graph.weights[inside], minlength=n)
    size = np.bincount(membership, minlength=int(membership.max()) + 1 if n else 0)
    top = np.zeros(size.size, dtype=np.float64)
    np.maximum.at(top, membership, strength)
    peers = size[membership] - 1
    degree = np.divide(strength, peers, out=np.zeros(n), where=peers > 0)
    cmax = top[membership]
    normalized = np.divide(strength, cmax, out=np.ones(n), where=cmax > 0)
    return degree, normalized


def surface_priors(counts: Sequence[int]) -> list[float]:
    """w_f of one surface form's candidates from their counts. A form never found in the text
    keeps a uniform prior, so the priors of every surface form sum to 1."""
    total = sum(counts)
    return [n / total for n in counts] if total else [1.0 / len(counts)] * len(counts)


def priors(counts: Mapping[tuple[str, str], int], candidates: Mapping[str, Sequence[str]]) -> dict[tuple[str, str], float]:
    """w_f for every (surface, candidate)."""
    out: dict[tuple[str, str], float] = {}
    for surface, cands in candidates.items():
        out.update(zip(((surface, e) for e in cands), surface_priors([counts.get((surface, e), 0) for e in cands])))
    return out


def fuse(prior: float, centrality: float) -> float:
    """The SPR-RAG weight w = w_f · w_i."""
    return prior * centrality


def link_weights(
    candidates: Mapping[str, Sequence[str]],
    counts: Mapping[tuple[str, str], int],
    centrality: Mapping[str, float],
    community: Mapping[str, str],
) -> list[LinkWeight]:
    """One LinkWeight per (surface, candidate), sorted by surface then entity."""
    out = []
    for surface in sorted(candidates):
        cands = sorted(candidates[surface])
        found = [counts.get((surface, e), 0) for e in cands]
        for e, n, wf in zip(cands, found, surface_priors(found)):
            wi = centrality.get(e, 1.0)
            out.append(LinkWeight(surface, e, n, wf, wi, fuse(wf, wi), community.get(e, "")))
    return out


# --- community detection (adapters over the two libraries) -------------------------------------


def detect_communities(
    graph: EntityGraph, backend: str = "auto", fast_above_edges: int = 10_000, seed: int = 42
) -> Communities:
    """Louvain partition. ``backend``: "louvain" (python-louvain), "igraph", or "auto" (igraph
    above ``fast_above_edges`` edges). Seeded, so reruns give the same communities."""
    n = len(graph.nodes)
    if n == 0:
        return Communities(np.zeros(0, np.int64), "none")
    if backend == "auto":
        backend = "igraph" if len(graph.edges) > fast_above_edges else "louvain"
    if backend == "igraph":
        labels = _igraph_louvain(graph, seed)
    elif backend == "louvain":
        labels = _python_louvain(graph, seed)
    else:
        raise InputError(f"unknown community backend {backend!r} (auto, louvain, igraph)")
    return Communities(canonical_membership(labels), backend)


def _python_louvain(graph: EntityGraph, seed: int) -> np.ndarray:
    import community as community_louvain  # python-louvain
    import networkx as nx

    g = nx.Graph()
    g.add_nodes_from(range(len(graph.nodes)))
    g.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(graph.edges, graph.weights))
    part = community_louvain.best_partition(g, weight="weight", random_state=seed)
    return np.array([part[i] for i in range(len(graph.nodes))], dtype=np.int64)


def _igraph_louvain(graph: EntityGraph, seed: int) -> np.ndarray:
    import igraph as ig

    g = ig.Graph(n=len(graph.nodes), edges=graph.edges.tolist())
    # igraph's RNG is process-global: seed it for this call only, then hand back the default.
    ig.set_random_number_generator(random.Random(seed))
    try:
        clusters = g.community_multilevel(weights=graph.weights.tolist() if graph.edges.size else None)
    finally:
        ig.set_random_number_generator(random)
    return np.asarray(clusters.membership, dtype=np.int64)


# --- the stage ------------------------------------------------------------------------------------


@dataclass(frozen=True)
class WeightsResult:
    """Everything the stage computes, before it is written."""

    weights: tuple[LinkWeight, ...]
    degree: Mapping[str, float]  # entity → degree centrality within its community
    communities: int
    backend: str
    edges: int


def compute_weights(
    labels: Mapping[str, Iterable[str]],
    corpus: Sequence[CorpusChunk],
    relations: Iterable[tuple[str, str]],
    config: WeightsConfig,
    base_iri: str,
) -> WeightsResult:
    """The whole computation on plain data (no store): dictionary, counts, graph, communities."""
    dictionary = SurfaceDictionary.build(labels)
    counts = count_links(corpus, dictionary)
    nodes = sorted(labels)
    graph = build_entity_graph(
        nodes, relations, (c.mentioned for c in corpus), config.comention_weight, config.comention_max_entities
    )
    found = detect_communities(graph, config.community_backend, config.fast_above_edges, config.seed)
    degree, normalized = community_centrality(graph, found.membership)
    first_member: dict[int, str] = {}
    for node, c in zip(nodes, found.membership.tolist()):
        first_member.setdefault(c, node)  # nodes are sorted: the community's smallest IRI
    community = {
        node: mint(base_iri, "community", first_member[c]).value for node, c in zip(nodes, found.membership.tolist())
    }
    weights = link_weights(dictionary.candidates, counts, dict(zip(nodes, normalized.tolist())), community)
    return WeightsResult(tuple(weights), dict(zip(nodes, degree.tolist())), found.count, found.backend, len(graph.edges))


class WeightsStage:
    """Derived stage "weights": rebuilds the weights graph from the whole KB."""

    name = "weights"

    def __init__(self, config: WeightsConfig, base_iri: str):
        self.config = config
        self.base_iri = base_iri

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        result = compute_weights(
            read_labels(store), read_corpus(store), read_relation_pairs(store), self.config, self.base_iri
        )
        quads = write_weights(store, list(result.weights), self.base_iri, dict(result.degree))
        surfaces = len({w.surface for w in result.weights})
        ambiguous = _ambiguous(result.weights)
        return (
            f"{surfaces} surface forms ({ambiguous} ambiguous), {len(result.weights)} links, "
            f"{len(result.degree)} entities, {result.edges} edges, {result.communities} communities "
            f"({result.backend}), {quads} quads in {time.perf_counter() - started:.1f} s"
        )


def _ambiguous(weights: Iterable[LinkWeight]) -> int:
    per: dict[str, int] = {}
    for w in weights:
        per[w.surface] = per.get(w.surface, 0) + 1
    return sum(1 for n in per.values() if n > 1)


def weights_stage(config: Config, tracker=None, llm_cache: bool | None = None) -> WeightsStage:
    """Factory for ``kgpipeline.pipeline.STAGES``."""
    return WeightsStage(config.weights, config.kb.base_iri)
