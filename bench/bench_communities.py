"""Benchmark: hierarchical Leiden communities (the "communities" stage) on a generated graph and on real KBs.

Target: a 50k-node / 200k-edge graph in <= 5 s, all levels. The graph is a seeded two-tier planted
partition (groups of ``--group`` nodes made of sub-blocks of ``--block``; a share of the edges stays
in the sub-block, a share in the group, the rest anywhere). Same-run baselines on the same graph:
igraph's multilevel Louvain, kgpipeline.derived.weights.detect_communities (the weights stage), and
leidenalg's Leiden at level 0. Optionally the stage on real KBs, each copied first (the original is
never written):

    .venv/bin/python bench/bench_communities.py [--nodes 50000 --edges 200000]
        [--kb /tmp/work/kb-egd=/tmp/work/kb-egd-communities ...]
"""

from __future__ import annotations

import argparse
import shutil
import statistics
import sys
import time
from pathlib import Path

import igraph  # noqa: F401  (imported up front: its first import takes ~1 s, not part of the timings)
import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from core.config import CommunitiesConfig, load_config  # noqa: E402
from kgpipeline.derived.communities import describe, detect_hierarchy, make_stage, modularity  # noqa: E402
from kgpipeline.derived.weights import EntityGraph, build_entity_graph, detect_communities  # noqa: E402

BASE = "https://w3id.org/policykb/id/"


def planted(n: int, m: int, group: int, block: int, shares: tuple[float, float], seed: int) -> EntityGraph:
    """m distinct edges: a share ``shares[0]`` inside a sub-block, ``shares[1]`` inside a group, the rest anywhere."""
    rng = np.random.default_rng(seed)
    found = np.zeros(0, dtype=np.int64)
    while found.size < m:
        k = 2 * (m - found.size) + 1000
        u = rng.integers(0, n, k)
        r = rng.random(k)
        lo_b, lo_g = (u // block) * block, (u // group) * group
        v = np.where(
            r < shares[0],
            lo_b + rng.integers(0, block, k),
            np.where(r < shares[0] + shares[1], lo_g + rng.integers(0, group, k), rng.integers(0, n, k)),
        )
        v = np.minimum(v, n - 1)
        a, b = np.minimum(u, v), np.maximum(u, v)
        codes = (a * n + b)[a != b]
        merged = np.concatenate([found, codes])
        _, first = np.unique(merged, return_index=True)
        found = merged[np.sort(first)]  # distinct, in order of generation
    found = found[:m]
    nodes = [f"{BASE}entity/e{i:05d}" for i in range(n)]
    return build_entity_graph(nodes, [(nodes[c // n], nodes[c % n]) for c in found.tolist()])


def timed(fn, repeat: int):
    times, result = [], None
    for _ in range(repeat):
        started = time.perf_counter()
        result = fn()
        times.append(time.perf_counter() - started)
    return result, times


def igraph_modularity(graph: EntityGraph, membership) -> float:
    import igraph as ig

    g = ig.Graph(n=len(graph.nodes), edges=graph.edges.tolist())
    return g.modularity(list(membership), weights=graph.weights.tolist())


def synthetic(args) -> None:
    started = time.perf_counter()
    graph = planted(args.nodes, args.edges, args.group, args.block, (args.in_block, args.in_group), args.seed)
    print(
        f"== planted graph: {len(graph.nodes)} nodes / {len(graph.edges)} edges, groups of {args.group} "
        f"with blocks of {args.block} (built in {time.perf_counter() - started:.1f} s) =="
    )
    config = CommunitiesConfig(seed=42, max_cluster_size=args.max_cluster_size, max_levels=args.max_levels)
    rows = []

    found, times = timed(lambda: detect_hierarchy(graph, config), args.repeat)
    again = detect_hierarchy(graph, config)
    print(f"detect_hierarchy (igraph Leiden): {describe(found)}; deterministic rerun: {again == found}")
    rows.append(("detect_hierarchy, all levels (igraph Leiden)", times, modularity(graph, found), _levels(found)))

    top, times = timed(lambda: detect_hierarchy(graph, config.model_copy(update={"max_levels": 1})), args.repeat)
    rows.append(("detect_hierarchy, level 0 only (max_levels=1)", times, modularity(graph, top), _levels(top)))

    fast, times = timed(lambda: detect_hierarchy(graph, config, iterations=2), args.repeat)
    rows.append(("detect_hierarchy, all levels, iterations=2", times, modularity(graph, fast), _levels(fast)))

    import igraph as ig

    g = ig.Graph(n=len(graph.nodes), edges=graph.edges.tolist())
    w = graph.weights.tolist()
    louvain, times = timed(lambda: g.community_multilevel(weights=w), args.repeat)
    rows.append(("igraph community_multilevel (Louvain), one level", times, louvain.modularity, f"{len(louvain)}"))

    weights, times = timed(lambda: detect_communities(graph, "auto"), args.repeat)
    rows.append(
        (f"weights.detect_communities ({weights.backend}), one level", times,
         igraph_modularity(graph, weights.membership.tolist()), f"{weights.count}")
    )  # fmt: skip

    if args.leidenalg_iterations:
        import leidenalg

        g.es["weight"] = w
        part, times = timed(
            lambda: leidenalg.find_partition(
                g, leidenalg.RBConfigurationVertexPartition, weights="weight",
                resolution_parameter=1.0, seed=42, n_iterations=args.leidenalg_iterations,
            ),
            1,
        )  # fmt: skip
        rows.append((f"leidenalg level 0 only, n_iterations={args.leidenalg_iterations}", times, part.modularity, f"{len(part)}"))
    if args.leidenalg_hierarchy:
        found, times = timed(lambda: detect_hierarchy(graph, config, backend="leidenalg"), 1)
        rows.append(("detect_hierarchy, all levels (leidenalg)", times, modularity(graph, found), _levels(found)))

    print()
    print("| method | communities per level | modularity (level 0) | seconds (median of runs) |")
    print("|---|---|---|---|")
    for name, times, q, counts in rows:
        print(
            f"| {name} | {counts} | {q:.4f} | {statistics.median(times):.2f} ({len(times)} runs: {', '.join(f'{t:.2f}' for t in times)}) |"
        )


def _levels(found) -> str:
    per: dict[int, int] = {}
    for c in found:
        per[c.level] = per.get(c.level, 0) + 1
    return " / ".join(str(per[n]) for n in sorted(per))


def real_kb(source: Path, dest: Path) -> None:
    from store.communities import read_communities
    from store.oxigraph_store import OxigraphStore

    if dest.resolve() == source.resolve():
        raise SystemExit("refusing to write into the source KB: give a different copy destination")
    if dest.exists():
        shutil.rmtree(dest)
    shutil.copytree(source, dest)
    config = load_config(kb_dir=dest)
    store = OxigraphStore(dest / "store")
    try:
        summary = make_stage(config).run(store, dest)
        stored = read_communities(store)
    finally:
        store.close()
    print(f"== KB {source} (copy {dest}) ==")
    print(f"stage: {summary}")
    print("| level | communities | with >= 2 members | max size | median size | entities |")
    print("|---|---|---|---|---|---|")
    for level in sorted({c.level for c in stored}):
        sizes = [len(c.members) for c in stored if c.level == level]
        print(
            f"| {level} | {len(sizes)} | {sum(s >= 2 for s in sizes)} | {max(sizes)} | "
            f"{statistics.median(sizes):g} | {sum(sizes)} |"
        )


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--nodes", type=int, default=50_000)
    ap.add_argument("--edges", type=int, default=200_000)
    ap.add_argument("--group", type=int, default=200, help="planted group size (tier 1)")
    ap.add_argument("--block", type=int, default=20, help="planted sub-block size (tier 2)")
    ap.add_argument("--in-block", type=float, default=0.6, help="share of edges inside a sub-block")
    ap.add_argument("--in-group", type=float, default=0.25, help="share of edges inside a group (outside the sub-block)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--max-cluster-size", type=int, default=10)
    ap.add_argument("--max-levels", type=int, default=3)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--leidenalg-iterations", type=int, default=2, help="0 = skip the leidenalg level-0 baseline")
    ap.add_argument("--leidenalg-hierarchy", action="store_true", help="also the whole hierarchy with leidenalg (slow)")
    ap.add_argument("--skip-synthetic", action="store_true")
    ap.add_argument("--kb", action="append", default=[], metavar="SRC=COPY", help="run the stage on a copy of a KB")
    args = ap.parse_args()
    if not args.skip_synthetic:
        synthetic(args)
    for spec in args.kb:
        source, _, dest = spec.partition("=")
        if not dest:
            raise SystemExit(f"--kb wants SRC=COPY, got {spec!r}")
        print()
        real_kb(Path(source).expanduser(), Path(dest).expanduser())


if __name__ == "__main__":
    main()
