"""Disambiguation weights of a KB: statistics and one surface form the weights re-rank.

Reads the weights graph (``store.disambiguation.read_link_weights``), counts ambiguous surface
forms (≥ 2 linked entities) and communities, and computes the modularity of the stored partition
on the entity graph rebuilt as the weights stage builds it (``kgpipeline.derived.weights.build_entity_graph``
over the store's labels, relation pairs and chunk co-mentions, with the KB's ``[weights]`` settings).
Entities without a stored community (no surface-form link carries them) are put in singletons.
Then ambiguous forms, most mentioned first, are linked with ``EntityLinker`` with and without
weights until one gets a different top entity; that example is printed. Usage:

    .venv/bin/python bench/weights_report.py [--kb /tmp/realkb]
"""

from __future__ import annotations

import argparse
import re
import shlex
import sys
from collections import defaultdict
from dataclasses import replace
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parents[1]))

from kgpipeline.derived.surface_counts import read_corpus, read_labels, read_relation_pairs  # noqa: E402
from kgpipeline.derived.weights import build_entity_graph  # noqa: E402
from spr.grounding.link import EntityLinker, LinkOptions  # noqa: E402
from spr.qa import KnowledgeBase  # noqa: E402
from store.disambiguation import links_by_surface, read_link_weights  # noqa: E402


def modularity(kb, weights) -> tuple[float, int, int, int]:
    """(modularity, nodes, edges, nodes without a stored community)."""
    import networkx as nx

    cfg = kb.config.weights
    graph = build_entity_graph(
        sorted(read_labels(kb.store)), read_relation_pairs(kb.store),
        (c.mentioned for c in read_corpus(kb.store)), cfg.comention_weight, cfg.comention_max_entities,
    )
    stored = {w.entity: w.community for w in weights if w.community}
    groups: dict[str, set[int]] = defaultdict(set)
    for i, node in enumerate(graph.nodes):
        groups[stored.get(node, f"singleton:{node}")].add(i)
    g = nx.Graph()
    g.add_nodes_from(range(len(graph.nodes)))
    g.add_weighted_edges_from((int(u), int(v), float(w)) for (u, v), w in zip(graph.edges, graph.weights))
    q = nx.community.modularity(g, list(groups.values()), weight="weight")
    return q, len(graph.nodes), len(graph.edges), sum(1 for n in graph.nodes if n not in stored)


def show(title: str, candidates, senses: set[str]) -> None:
    """The top 5, then any sense of the form ranked below them, each with its rank."""
    print(f"  {title}:")
    for rank, c in enumerate(candidates, 1):
        if rank <= 5 or (c.entity in senses and rank <= 8):
            print(f"    #{rank:<2} {c.score:.4f} = sim {c.similarity:.4f} x w {c.weight:.4f}  {c.name!r} via {c.surface!r}  <{c.entity}>")


def types(kb, entity: str) -> str:
    rows = kb.store.select(f"SELECT ?t WHERE {{ <{entity}> a ?t }}").rows
    return ", ".join(sorted({re.split(r"[/#]", r["t"].value)[-1] for r in rows})) or "-"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, default=Path("/tmp/realkb"))
    ap.add_argument("--max-tries", type=int, default=200, help="ambiguous forms linked at most")
    args = ap.parse_args()
    print("$ " + " ".join(shlex.quote(a) for a in [".venv/bin/python", *sys.argv]))

    with KnowledgeBase.open(args.kb) as kb:
        weights = read_link_weights(kb.store)
        if not weights:
            sys.exit(f"{args.kb}: no weights graph; run `policykb reindex weights`")
        groups = links_by_surface(weights)
        ambiguous = {s: g for s, g in groups.items() if len({w.entity for w in g}) >= 2}
        communities = {w.community for w in weights if w.community}
        print(f"KB {args.kb}: {len(weights)} links, {len(groups)} surface forms, {len(ambiguous)} ambiguous (>= 2 entities), "
              f"{len({w.entity for w in weights})} linked entities, {len(communities)} communities among them")
        q, nodes, edges, loose = modularity(kb, weights)
        print(f"modularity (networkx, stored communities, entity graph {nodes} nodes / {edges} edges, "
              f"{loose} nodes without a stored community as singletons): {q:.4f}")

        options = LinkOptions.from_config(kb.config.spr)
        weighted = EntityLinker.from_kb(kb.config.kb_dir, kb.embedder, weights, replace(options, use_weights=True, top_k=20))
        plain = EntityLinker.from_kb(kb.config.kb_dir, kb.embedder, weights, replace(options, use_weights=False, top_k=20))
        # readable examples first: forms with a letter (not a year such as "2030") and at most 5 senses
        # (not a generic word such as "regulation"), then the most mentioned
        by_mentions = sorted(ambiguous, key=lambda s: (not re.search(r"[^\W\d_]", s), len(ambiguous[s]) > 5, -sum(w.count for w in ambiguous[s]), s))
        for tried, surface in enumerate(by_mentions[: args.max_tries], 1):  # noqa: B007 - reported after the loop
            with_w, without = weighted.link(surface), plain.link(surface)
            if with_w and without and with_w[0].entity != without[0].entity:
                break
        else:
            print(f"no top entity changed among the {min(len(by_mentions), args.max_tries)} most mentioned ambiguous forms")
            return
        print(f"\nexample (ambiguous form #{tried} tried): label {surface!r}")
        print(f"  stored links (count, prior w_f, centrality w_i, fused), {len(ambiguous[surface])} senses, best 8:")
        for w in ambiguous[surface][:8]:
            print(f"    n={w.count:<4} w_f={w.prior:.4f} w_i={w.centrality:.4f} fused={w.fused:.4f}  <{w.entity}> ({types(kb, w.entity)})")
        senses = {w.entity for w in ambiguous[surface]}
        show("use_weights=True (top 5, then other senses of the form up to rank 8)", with_w, senses)
        show("use_weights=False (top 5, then other senses of the form up to rank 8)", without, senses)


if __name__ == "__main__":
    main()
