"""Derived stage "communities": hierarchical Leiden communities of the entity graph, in RDF.

The entity graph is the one the "weights" stage builds (:func:`kgpipeline.derived.weights.build_entity_graph`):
entities mentioned in the corpus are the nodes, a relation triple joins two of them with weight 1,
a co-mention in one chunk with ``[communities] comention_weight``.

The hierarchy, after Microsoft GraphRAG's hierarchical Leiden:

* level 0 is Leiden (modularity at ``resolution``, iterated until stable, seeded) over the whole graph;
* level n+1 splits every level-n community larger than ``max_cluster_size`` by Leiden on its
  induced subgraph; at most ``max_levels`` levels, and no new level once nothing splits.

Choices (GraphRAG differs on the first two):

* **Every level is a complete partition of the entities.** A community that is small enough, or
  that Leiden cannot split (a dense clique), repeats at the next level with the same members and a
  ``parent`` link to itself one level up; GraphRAG keeps only the split ones at deeper levels. So
  "the communities of level n" always cover every entity, and each entity has exactly one
  community per level. The IRI includes the level, so a repeated community gets a new IRI.
* **Isolated entities** (no edge: mentioned only in chunks with no other entity, or in chunks with
  more than ``comention_max_entities``) **are singleton communities**, repeated at every level,
  rather than left out: the partition stays complete and the entity → community lookup total.
  The ``reports`` stage skips them (``min_size`` = 2).
* **Deterministic**: Leiden is seeded with ``seed`` for every run (level 0 and each subgraph alike,
  so a split does not depend on the order of the others); communities of a level are ordered by
  parent, then size (largest first), then their first node. Same graph, same communities, same IRIs.

Leiden: igraph's built-in ``community_leiden`` (Traag's algorithm in igraph's C core) by default;
``backend="leidenalg"`` runs the leidenalg package instead (RBConfigurationVertexPartition, the
same objective), which gives the same kind of partition but is about ten times slower at equal
iterations (bench/bench_communities.py, 50k nodes / 200k edges, two iterations at level 0: 6 s
against 0.7 s; the whole three-level hierarchy with igraph, iterated until stable: 2.7 s).
"""

from __future__ import annotations

import random
import statistics
import time
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path
from typing import TYPE_CHECKING

import numpy as np

from core.errors import InputError
from kgpipeline.derived.surface_counts import CorpusChunk, read_corpus, read_labels, read_relation_pairs
from kgpipeline.derived.weights import EntityGraph, build_entity_graph
from store.base import RDFStore
from store.communities import Community, community_iri, write_communities

if TYPE_CHECKING:
    import igraph as ig

    from core.config import CommunitiesConfig, Config
    from core.usage import UsageTracker

NAME = "communities"
BACKENDS = ("igraph", "leidenalg")


@dataclass(frozen=True)
class DetectedCommunity:
    """One community of the hierarchy, before it has an IRI. ``index``: its position in its level;
    ``parent``: the index of the level-(n-1) community it refines (None at level 0); ``members``:
    entity IRIs, sorted."""

    level: int
    index: int
    parent: int | None
    members: tuple[str, ...]


# --- the pure computation -------------------------------------------------------------------------


def detect_hierarchy(
    graph: EntityGraph, config: CommunitiesConfig, backend: str = "igraph", iterations: int = -1
) -> list[DetectedCommunity]:
    """Hierarchical Leiden (module docstring): every level a partition of ``graph.nodes``, ordered
    by level then index. An empty graph gives no communities. ``iterations``: Leiden iterations
    per run, -1 = until an iteration no longer improves the partition (GraphRAG's setting)."""
    out: list[DetectedCommunity] = []
    for n, level in enumerate(hierarchy(graph, config, backend, iterations)):
        for i, (parent, members) in enumerate(level):
            names = tuple(sorted(graph.nodes[k] for k in members.tolist()))
            out.append(DetectedCommunity(n, i, None if n == 0 else parent, names))
    return out


def hierarchy(
    graph: EntityGraph, config: CommunitiesConfig, backend: str = "igraph", iterations: int = -1
) -> list[list[tuple[int, np.ndarray]]]:
    """The hierarchy as node indexes: ``levels[n][i] = (parent, members)``, ``members`` the sorted
    node indexes of community i of level n, ``parent`` its index in level n-1 (-1 at level 0)."""
    if backend not in BACKENDS:
        raise InputError(f"unknown Leiden backend {backend!r} ({', '.join(BACKENDS)})")
    if not graph.nodes:
        return []
    import igraph as ig

    whole = _igraph(graph)
    try:
        levels = [[(-1, m) for m in _groups(_leiden(whole, config, backend, iterations))]]
        # Final: small enough, or Leiden returned it whole (it would again: same seed, same graph).
        final = [len(m) <= config.max_cluster_size for _, m in levels[0]]
        while len(levels) < config.max_levels and not all(final):
            level: list[tuple[int, np.ndarray]] = []
            level_final: list[bool] = []
            for i, (_, members) in enumerate(levels[-1]):
                parts = [members]
                if not final[i]:
                    sub = whole.induced_subgraph(members.tolist(), implementation="create_from_scratch")
                    parts = [members[g] for g in _groups(_leiden(sub, config, backend, iterations))]
                level += [(i, p) for p in parts]
                level_final += [len(p) <= config.max_cluster_size or len(parts) == 1 for p in parts]
            if len(level) == len(levels[-1]):
                break  # nothing split: no new level
            levels.append(level)
            final = level_final
    finally:
        ig.set_random_number_generator(random)
    return levels


def _igraph(graph: EntityGraph) -> ig.Graph:
    import igraph as ig

    g = ig.Graph(n=len(graph.nodes), edges=graph.edges.tolist())
    g.es["weight"] = graph.weights.tolist()
    return g


def _leiden(g: ig.Graph, config: CommunitiesConfig, backend: str, iterations: int) -> np.ndarray:
    """Membership labels of one seeded Leiden run (modularity at ``config.resolution``)."""
    if g.ecount() == 0:
        return np.arange(g.vcount(), dtype=np.int64)  # isolated nodes: singletons
    if backend == "leidenalg":
        import leidenalg

        part = leidenalg.find_partition(
            g, leidenalg.RBConfigurationVertexPartition, weights="weight",
            resolution_parameter=config.resolution, seed=config.seed, n_iterations=iterations,
        )  # fmt: skip
        return np.asarray(part.membership, dtype=np.int64)
    import igraph as ig

    # igraph's RNG is process-global: a fresh seeded one per run (hierarchy() restores the default).
    ig.set_random_number_generator(random.Random(config.seed))
    clusters = g.community_leiden(
        objective_function="modularity", weights="weight", resolution=config.resolution, n_iterations=iterations
    )
    return np.asarray(clusters.membership, dtype=np.int64)


def _groups(labels: np.ndarray) -> list[np.ndarray]:
    """Positions grouped by label (each group sorted), largest group first, then by first position."""
    order = np.argsort(labels, kind="stable")
    groups = np.split(order, np.flatnonzero(np.diff(labels[order])) + 1)
    return sorted(groups, key=lambda g: (-len(g), int(g[0])))


# --- the graph and the stage ------------------------------------------------------------------------


def entity_graph(
    labels: Mapping[str, Iterable[str]],
    corpus: Sequence[CorpusChunk],
    relations: Iterable[tuple[str, str]],
    config: CommunitiesConfig,
) -> EntityGraph:
    """The weights stage's entity graph (nodes: the labelled entities, sorted), weighted by the
    ``[communities]`` co-mention settings."""
    return build_entity_graph(
        sorted(labels), relations, (c.mentioned for c in corpus), config.comention_weight, config.comention_max_entities
    )


def mint_communities(found: Sequence[DetectedCommunity], base_iri: str) -> list[Community]:
    """The stored records: deterministic IRIs (:func:`store.communities.community_iri`), parent links."""
    iri: dict[tuple[int, int], str] = {}
    out: list[Community] = []
    for c in found:
        iri[c.level, c.index] = community_iri(base_iri, c.level, c.members).value
        parent = None if c.parent is None else iri[c.level - 1, c.parent]
        out.append(Community(iri[c.level, c.index], c.level, parent, c.members))
    return out


def modularity(graph: EntityGraph, found: Sequence[DetectedCommunity], level: int = 0) -> float:
    """Weighted modularity (resolution 1) of one level's partition."""
    if not graph.edges.size:
        return 0.0
    index = {e: i for i, e in enumerate(graph.nodes)}
    membership = np.zeros(len(graph.nodes), dtype=np.int64)
    for c in found:
        if c.level == level:
            membership[[index[m] for m in c.members]] = c.index
    return float(_igraph(graph).modularity(membership.tolist(), weights="weight"))


def describe(found: Sequence[DetectedCommunity]) -> str:
    """``L0 12 (max 40, median 3); L1 ...``: communities per level with their sizes."""
    per: dict[int, list[int]] = {}
    for c in found:
        per.setdefault(c.level, []).append(len(c.members))
    return "; ".join(f"L{n} {len(s)} (max {max(s)}, median {statistics.median(s):g})" for n, s in sorted(per.items())) or "none"


class CommunitiesStage:
    """Reads the entity graph from the store and replaces the communities graph."""

    name = NAME

    def __init__(self, config: CommunitiesConfig, base_iri: str):
        self.config = config
        self.base_iri = base_iri

    def run(self, store: RDFStore, kb_dir: Path) -> str:
        started = time.perf_counter()
        graph = entity_graph(read_labels(store), read_corpus(store), read_relation_pairs(store), self.config)
        read = time.perf_counter()
        found = detect_hierarchy(graph, self.config)
        detected = time.perf_counter()
        quads = write_communities(store, mint_communities(found, self.base_iri), self.base_iri)
        degree = np.bincount(graph.edges.reshape(-1), minlength=len(graph.nodes))
        isolated = int((degree == 0).sum())
        levels = max((c.level for c in found), default=-1) + 1
        return (
            f"{levels} levels: {describe(found)}; {len(graph.nodes)} entities ({isolated} isolated), "
            f"{len(graph.edges)} edges, modularity {modularity(graph, found):.3f}, {quads} quads in "
            f"{time.perf_counter() - started:.1f} s (read {read - started:.1f} s, Leiden {detected - read:.1f} s)"
        )


def make_stage(config: Config, tracker: UsageTracker | None = None, llm_cache: bool | None = None) -> CommunitiesStage:
    """The stage, from ``[communities]`` and the KB's base IRI (``tracker``/``llm_cache`` unused: no models)."""
    return CommunitiesStage(config.communities, config.kb.base_iri)
