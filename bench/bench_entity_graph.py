"""Building the graph signal's entity–chunk graph (spr/retrieval/graph.py, store/entity_graph.py): the
queries as they were and as they are, the whole build from the store, and the saved index loaded,
on one KB, in one run.

    .venv/bin/python bench/bench_entity_graph.py --kb ~/.cache/policykb/retrieval-all-mpnet-base-v2/eval/necp-bfloat16/kb

Each chunk graph restates the entities it mentions with their labels, so joining labels with
mentions returned a row per chunk and label; the relation query joined every mention of both
ends before its DISTINCT. Printed per query: rows and seconds, before (the former text, kept here
as the baseline) and now, and whether both give the same set; then ``EntityGraph`` read from the
store once (what a cold ``policykb ask`` did before its first answer), saved as the derived index
``graph`` into a temporary folder, and opened from it (what it does now), with the file's size and
whether both graphs are the same.
"""

from __future__ import annotations

import argparse
import sys
import tempfile
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

from spr.retrieval.graph import EntityGraph  # noqa: E402
from store import entity_graph as graph  # noqa: E402
from store.oxigraph_store import OxigraphStore  # noqa: E402
from store.vocab import PKB, SKOS  # noqa: E402

BEFORE = {
    "_SURFACES": f"SELECT ?e ?s WHERE {{ ?e <{PKB}mentionedIn> ?c . {{ ?e <{SKOS}altLabel> ?s }} UNION {{ ?e <{SKOS}prefLabel> ?s }} }}",
    "_RELATIONS": f"SELECT DISTINCT ?a ?b WHERE {{ ?a ?p ?b . ?a <{PKB}mentionedIn> ?x . ?b <{PKB}mentionedIn> ?y . FILTER(?a != ?b) }}",
}


def timed(store: OxigraphStore, sparql: str) -> tuple[set[tuple[str, ...]], int, float]:
    started = time.perf_counter()
    rows = store.select(sparql).rows
    seconds = time.perf_counter() - started
    return {tuple(term.value for term in row.values()) for row in rows}, len(rows), seconds


def main() -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    ap.add_argument("--kb", type=Path, required=True, help="a KB directory (its store is opened read-only)")
    args = ap.parse_args()
    store = OxigraphStore(args.kb / "store", read_only=True)
    for name, before in BEFORE.items():
        old, old_rows, old_s = timed(store, before)
        new, new_rows, new_s = timed(store, getattr(graph, name))
        print(f"{name:11s} before {old_rows:>9,} rows {old_s:6.2f} s   now {new_rows:>7,} rows {new_s:6.2f} s   same set: {old == new}")
    started = time.perf_counter()
    built = EntityGraph.read(store)
    print(f"EntityGraph from the store: {len(built.names):,} nodes, {built.graph.ecount():,} edges in {time.perf_counter() - started:.2f} s")
    with tempfile.TemporaryDirectory() as tmp:
        path = built.data.save(Path(tmp) / graph.NAME)
        started = time.perf_counter()
        data = graph.GraphData.load(path.parent)
        loaded = EntityGraph(data, "index") if data is not None else None
        seconds = time.perf_counter() - started
        same = loaded is not None and (loaded.labels, loaded.data.edges, loaded.data.surfaces, loaded.chunks_of) == (
            built.labels, built.data.edges, built.data.surfaces, built.chunks_of)
        print(f"EntityGraph from the index: {path.stat().st_size / 1e6:.1f} MB file, loaded in {seconds:.2f} s, same graph: {same}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
