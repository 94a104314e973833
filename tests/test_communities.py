"""Hierarchical Leiden communities: the pure detection on small synthetic graphs (levels, parents,
partitions, determinism, limits) and the stage on the example corpus KB, read back by SPARQL."""

from __future__ import annotations

import itertools
import shutil

import numpy as np
import pytest
from support.kbs import corpus_kb

from core.config import CommunitiesConfig, load_config
from core.errors import InputError
from kgpipeline.derived.communities import (
    CommunitiesStage,
    DetectedCommunity,
    detect_hierarchy,
    make_stage,
    mint_communities,
)
from kgpipeline.derived.weights import EntityGraph, build_entity_graph
from store.communities import communities_graph, community_iri, read_communities
from store.oxigraph_store import OxigraphStore
from store.vocab import PKB

BASE = "https://example.org/"


def node(i: int) -> str:
    return f"{BASE}e/{i:03d}"


def cliques(*sizes: int, bridges: int = 1) -> list[tuple[int, int]]:
    """Cliques of the given sizes on consecutive nodes, clique k joined to clique k+1 by ``bridges`` edges."""
    edges, start, starts = [], 0, []
    for size in sizes:
        edges += list(itertools.combinations(range(start, start + size), 2))
        starts.append(start)
        start += size
    for a, b in zip(starts, starts[1:]):
        edges += [(a + j, b + j) for j in range(bridges)]
    return edges


def graph(n: int, edges: list[tuple[int, int]]) -> EntityGraph:
    return build_entity_graph([node(i) for i in range(n)], [(node(u), node(v)) for u, v in edges])


def two_super_groups() -> EntityGraph:
    """Two groups of three 6-cliques (2 edges between cliques of a group), one edge between the groups."""
    edges: list[tuple[int, int]] = []
    for g in range(2):
        base = g * 18
        for c in range(3):
            edges += [(base + c * 6 + a, base + c * 6 + b) for a, b in itertools.combinations(range(6), 2)]
        for c1, c2 in itertools.combinations(range(3), 2):
            edges += [(base + c1 * 6, base + c2 * 6 + 1), (base + c1 * 6 + 2, base + c2 * 6 + 3)]
    edges.append((0, 18))
    return graph(36, edges)


def members(found: list[DetectedCommunity], level: int) -> list[set[str]]:
    return [set(c.members) for c in found if c.level == level]


def assert_partitions(found: list[DetectedCommunity], nodes: tuple[str, ...]) -> None:
    """Every level covers every node exactly once; each community lies inside its parent."""
    levels = sorted({c.level for c in found})
    assert levels == list(range(len(levels)))
    by_key = {(c.level, c.index): c for c in found}
    for level in levels:
        at = [c for c in found if c.level == level]
        assert [c.index for c in at] == list(range(len(at)))
        flat = [m for c in at for m in c.members]
        assert sorted(flat) == sorted(nodes)
        for c in at:
            assert list(c.members) == sorted(c.members)
            if level == 0:
                assert c.parent is None
            else:
                assert set(c.members) <= set(by_key[level - 1, c.parent].members)


# --- the pure function ----------------------------------------------------------------------------


def test_two_cliques_joined_by_one_edge_are_two_communities():
    g = graph(10, cliques(5, 5))
    found = detect_hierarchy(g, CommunitiesConfig())
    assert members(found, 0) == [{node(i) for i in range(5)}, {node(i) for i in range(5, 10)}]
    assert {c.level for c in found} == {0}  # both at most max_cluster_size: no level 1
    assert_partitions(found, g.nodes)


def test_big_community_is_split_at_level_1_with_parent_links():
    g = two_super_groups()
    found = detect_hierarchy(g, CommunitiesConfig(resolution=0.2, max_cluster_size=10))
    top = members(found, 0)
    assert top == [{node(i) for i in range(18)}, {node(i) for i in range(18, 36)}]
    assert {c.level for c in found} == {0, 1}
    level1 = [c for c in found if c.level == 1]
    assert sorted(set(c.members) for c in level1) == sorted({node(i) for i in range(k, k + 6)} for k in range(0, 36, 6))
    for c in level1:
        assert c.parent == (0 if int(c.members[0][-3:]) < 18 else 1)
    assert [c.parent for c in level1] == [0, 0, 0, 1, 1, 1]  # ordered by parent
    assert_partitions(found, g.nodes)


def test_unsplit_communities_repeat_at_the_next_level():
    # A 15-clique cannot be split (Leiden returns it whole); the super-groups next to it can.
    big = cliques(15)
    g2 = two_super_groups()
    shifted = [(u + 15, v + 15) for u, v in g2.edges.tolist()]
    g = graph(51, big + shifted + [(0, 15)])
    found = detect_hierarchy(g, CommunitiesConfig(resolution=0.2, max_cluster_size=10))
    clique = {node(i) for i in range(15)}
    assert clique in members(found, 0) and clique in members(found, 1)
    repeated = next(c for c in found if c.level == 1 and set(c.members) == clique)
    parent = next(c for c in found if c.level == 0 and c.index == repeated.parent)
    assert set(parent.members) == clique
    assert {c.level for c in found} == {0, 1}  # level 1 split nothing further: no level 2
    assert_partitions(found, g.nodes)


def test_stops_when_nothing_can_be_split():
    found = detect_hierarchy(graph(15, cliques(15)), CommunitiesConfig(max_cluster_size=10))
    assert [(c.level, len(c.members)) for c in found] == [(0, 15)]


def nested(fan: tuple[int, ...] = (2, 2, 2, 2), leaf: int = 3, links: tuple[int, ...] = (1, 1, 3, 6)) -> EntityGraph:
    """A unit of depth d is ``fan[d]`` sub-units, each pair joined by ``links[d]`` edges; the
    leaves are ``leaf``-cliques. The defaults give four tiers: 48 nodes, 4 × 12, 8 × 6, 16 × 3."""
    edges: list[tuple[int, int]] = []
    count = 0

    def build(depth: int) -> list[int]:
        nonlocal count
        if depth == len(fan):
            start, count = count, count + leaf
            edges.extend(itertools.combinations(range(start, start + leaf), 2))
            return list(range(start, start + leaf))
        subs = [build(depth + 1) for _ in range(fan[depth])]
        for a, b in itertools.combinations(subs, 2):
            edges.extend((a[j % len(a)], b[(j + 1) % len(b)]) for j in range(links[depth]))
        return [x for sub in subs for x in sub]

    return graph(len(build(0)), edges)


def test_max_levels_is_respected():
    g = two_super_groups()
    found = detect_hierarchy(g, CommunitiesConfig(resolution=0.2, max_cluster_size=10, max_levels=1))
    assert {c.level for c in found} == {0}
    assert [len(c.members) for c in found] == [18, 18]
    deep = nested()
    sizes = {
        levels: [[len(c.members) for c in found if c.level == n] for n in sorted({c.level for c in found})]
        for levels in (2, 3, 4)
        for found in [detect_hierarchy(deep, CommunitiesConfig(max_cluster_size=5, max_levels=levels))]
    }
    assert sizes[2] == [[12] * 4, [6] * 8]  # the 6s would split, but two levels are allowed
    assert sizes[3] == [[12] * 4, [6] * 8, [3] * 16]
    assert sizes[4] == sizes[3]  # the 3-cliques need no split: no fourth level
    for levels in (2, 3):
        assert_partitions(detect_hierarchy(deep, CommunitiesConfig(max_cluster_size=5, max_levels=levels)), deep.nodes)


def test_isolated_entities_are_singletons_at_every_level():
    g = build_entity_graph([node(i) for i in range(38)], [(node(u), node(v)) for u, v in two_super_groups().edges.tolist()])
    found = detect_hierarchy(g, CommunitiesConfig(resolution=0.2, max_cluster_size=10))
    for level in (0, 1):
        assert {node(36)} in members(found, level) and {node(37)} in members(found, level)
    assert_partitions(found, g.nodes)
    only_isolated = detect_hierarchy(build_entity_graph([node(0), node(1)], []), CommunitiesConfig())
    assert [(c.level, c.members) for c in only_isolated] == [(0, (node(0),)), (0, (node(1),))]


def test_empty_graph_gives_no_communities():
    assert detect_hierarchy(build_entity_graph([], []), CommunitiesConfig()) == []


def test_deterministic_and_seeded():
    rng = np.random.default_rng(3)
    n = 300
    block = rng.integers(0, 12, n)
    pairs = rng.integers(0, n, (3000, 2))
    keep = (block[pairs[:, 0]] == block[pairs[:, 1]]) | (rng.random(3000) < 0.1)
    g = graph(n, [tuple(p) for p in pairs[keep].tolist()])
    config = CommunitiesConfig(max_cluster_size=10, seed=7)
    first = detect_hierarchy(g, config)
    assert detect_hierarchy(g, config) == first
    assert len({c.level for c in first}) >= 2
    assert_partitions(first, g.nodes)


def test_leidenalg_backend_and_unknown_backend():
    g = graph(10, cliques(5, 5))
    found = detect_hierarchy(g, CommunitiesConfig(), backend="leidenalg")
    assert members(found, 0) == members(detect_hierarchy(g, CommunitiesConfig()), 0)
    with pytest.raises(InputError):
        detect_hierarchy(g, CommunitiesConfig(), backend="louvain")


def test_minted_iris_and_parents():
    g = two_super_groups()
    found = detect_hierarchy(g, CommunitiesConfig(resolution=0.2, max_cluster_size=10))
    minted = mint_communities(found, BASE)
    iri = {(c.level, c.index): m.iri for c, m in zip(found, minted)}
    for c, m in zip(found, minted):
        assert m.iri == community_iri(BASE, c.level, c.members).value
        assert m.parent == (None if c.parent is None else iri[c.level - 1, c.parent])
        assert m.members == c.members
    assert len({m.iri for m in minted}) == len(minted)


# --- the stage on the example corpus --------------------------------------------------------------


@pytest.fixture
def kb_copy(tmp_path_factory, tmp_path):
    """A writable copy of the shared corpus KB (other tests open the original read-only)."""
    return shutil.copytree(corpus_kb(tmp_path_factory), tmp_path / "kb")


def stored(store) -> dict[str, tuple[int, str | None, frozenset[str]]]:
    rows = store.select(
        f"""SELECT ?c ?level ?parent ?size ?m WHERE {{ GRAPH ?g {{ ?c a <{PKB}Community> ; <{PKB}communityLevel> ?level ;
            <{PKB}communitySize> ?size ; <{PKB}hasMember> ?m . OPTIONAL {{ ?c <{PKB}parentCommunity> ?parent }} }} }}"""
    ).rows
    out: dict[str, tuple[int, str | None, set[str]]] = {}
    for r in rows:
        parent = r["parent"].value if r.get("parent") is not None else None
        level, _, found = out.setdefault(r["c"].value, (int(r["level"].value), parent, set()))
        assert int(r["size"].value) >= 1
        found.add(r["m"].value)
    return {c: (level, parent, frozenset(m)) for c, (level, parent, m) in out.items()}


def test_stage_on_the_corpus_kb(kb_copy):
    config = load_config(kb_dir=kb_copy)
    stage = make_stage(config)
    assert isinstance(stage, CommunitiesStage) and stage.name == "communities"
    store = OxigraphStore(kb_copy / "store")
    try:
        summary = stage.run(store, kb_copy)
        assert "levels" in summary and "edges" in summary and " s " in summary + " "
        first = stored(store)
        assert first, summary
        # Consistent with detection on the same graph.
        from kgpipeline.derived.communities import entity_graph
        from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs

        graph = entity_graph(read_labels(store), read_corpus(store), read_relation_pairs(store), config.communities)
        expected = mint_communities(detect_hierarchy(graph, config.communities), config.kb.base_iri)
        assert first == {c.iri: (c.level, c.parent, frozenset(c.members)) for c in expected}
        assert read_communities(store) == sorted(expected, key=lambda c: (c.level, c.iri))
        # Every level a partition of the graph's entities; parents one level up and containing.
        for level in {lv for lv, _, _ in first.values()}:
            flat = [m for lv, _, ms in first.values() if lv == level for m in ms]
            assert sorted(flat) == sorted(graph.nodes)
        for level, parent, ms in first.values():
            assert (parent is None) == (level == 0)
            if parent is not None:
                assert first[parent][0] == level - 1 and ms <= first[parent][2]
        graph_iri = communities_graph(config.kb.base_iri).value
        count = f"SELECT (COUNT(*) AS ?n) WHERE {{ GRAPH <{graph_iri}> {{ ?s ?p ?o }} }}"
        quads = int(store.select(count).rows[0]["n"].value)
        # A rerun replaces the graph: same communities, no duplicate quads.
        stage.run(store, kb_copy)
        assert stored(store) == first
        assert int(store.select(count).rows[0]["n"].value) == quads
    finally:
        store.close()


def test_stage_on_an_empty_store(tmp_path):
    store = OxigraphStore()
    try:
        summary = CommunitiesStage(CommunitiesConfig(), BASE).run(store, tmp_path)
        assert summary.startswith("0 levels: none; 0 entities (0 isolated), 0 edges")
        assert read_communities(store) == []
    finally:
        store.close()
